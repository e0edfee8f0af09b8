--[[
  @group-set: change one group's (lane's) settings in one atomic step, with the EchoMQ
  library's own writes (EchoMQ.Lanes): its weight (@gweight), its pause (@gpause) or resume
  (@gresume), and its concurrency ceiling (@glimit), then answer the group as @group-read
  shows it.

  Capability: control
  (it changes what workers will do: the gateway runs it for a control token only)

  When one call changes several, they run in this order: weight, pause, limit, resume. A
  step that takes the group off the ring (pause; a limit at or under the live count) runs
  before one that may put it on (a limit above the live count; resume), so a call never
  pushes a wake for a ring entry it removes again; the keys end as the library's verbs
  leave them when called in that order.

  KEYS[1]  emq:{<queue>}:g:<group>:pending   the group's lane (ZSET)
  KEYS[2]  emq:{<queue>}:ring                the groups that can be served now (LIST)
  KEYS[3]  emq:{<queue>}:paused              the paused groups (SET)
  KEYS[4]  emq:{<queue>}:glimit              group -> concurrency ceiling (HASH)
  KEYS[5]  emq:{<queue>}:gactive             group -> jobs claimed now (HASH)
  KEYS[6]  emq:{<queue>}:gweight             group -> fair-share weight (HASH)
  KEYS[7]  emq:{<queue>}:wake                wake tokens for parked consumers (LIST, 64 at most)

  ARGV[1]  <group>   a branded id of any namespace (3 capitals, 11 base62 digits, at most
                     AzL8n0Y58m7), as admission's
  ARGV[2]  <limit>   '' (unchanged) or 1 to 2147483647 in canonical decimal
  ARGV[3]  <weight>  '' (unchanged) or 1 to 2147483647 in canonical decimal
  ARGV[4]  <pause>   '' (unchanged), pause or resume (compared as ASCII)
  At least one of ARGV[2] to ARGV[4] is not ''.

  The writes, each the library's verbatim:
    weight  HSET gweight g w (no ring change: a weight never changes whether a lane can be served)
    pause   SADD paused g; LREM ring 0 g
    limit   HSET glimit g n; then, gactive's field (0 when unset) >= n: LREM ring 0 g;
            else, g not paused, its lane not empty and g not on the ring: RPUSH ring g,
            LPUSH wake 1, LTRIM wake 0 63
    resume  SREM paused g; then, its lane not empty, below its ceiling (no glimit, or
            gactive < glimit) and not on the ring: RPUSH ring g, LPUSH wake 1, LTRIM wake 0 63
  No verb removes a limit or a weight (nor does the library's).

  Replies
    { group, pending, active, limit, weight, paused, ringed }  the group after the change:
       pending the lane's ZCARD, active gactive's field (0 when unset), limit and weight as
       stored ('' when unset), paused 1 or 0, ringed 1 when the ring holds the group, else 0

  Errors (nothing written)
    EMQLAYOUT ...  the keys are not the seven above for one queue q (a queue-name rule's
                   queue) and this group; the group is not a branded id; there are not
                   exactly 4 arguments, a limit or weight is not 1 to 2147483647, the pause
                   argument is another word, or nothing would change; or the group's glimit,
                   gactive or gweight field holds no number
    WRONGTYPE ...  a key exists and holds another type than the one above

  Order: layout gate (keys, group, arguments), type gates (KEYS[1] to KEYS[7]), the group's
  view (its number gate), then the writes in the order above, then the view again. Every
  gate runs before the first write, because a script that errors after a write does not
  roll back.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/group.lua

local g = ARGV[1]
local lane, ring, paused, glimit, gactive, gweight, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

-- Layout gate: the seven keys of one queue, the lane this group's.
if #KEYS ~= 7 then
  return fail('EMQLAYOUT expected 7 keys: emq:{q}: g:<group>:pending ring paused glimit gactive gweight wake')
end
local queue, refused = gate_queue(2, 'ring')
if not queue then return refused end
if #ARGV ~= 4 then
  return fail('EMQLAYOUT expected 4 arguments: group, limit, weight, pause (each of the last three may be empty)')
end
refused = gate_group(1, g)
if refused then return refused end
local base = 'emq:{' .. queue .. '}:'
local want = { base .. 'g:' .. g .. ':pending', ring, base .. 'paused', base .. 'glimit', base .. 'gactive', base .. 'gweight', base .. 'wake' }
for i = 1, 7 do
  refused = gate_key(i, want[i])
  if refused then return refused end
end
local limit, weight, pause = ARGV[2], ARGV[3], ARGV[4]
if limit ~= '' and not whole(limit, 1, 2147483647) then
  return fail('EMQLAYOUT ARGV[2] ' .. shown(limit) .. ' is not a limit: empty, or 1 to 2147483647 in decimal')
end
if weight ~= '' and not whole(weight, 1, 2147483647) then
  return fail('EMQLAYOUT ARGV[3] ' .. shown(weight) .. ' is not a weight: empty, or 1 to 2147483647 in decimal')
end
if pause ~= '' and pause ~= 'pause' and pause ~= 'resume' then
  return fail('EMQLAYOUT ARGV[4] ' .. shown(pause) .. ' is not empty, pause or resume')
end
if limit == '' and weight == '' and pause == '' then
  return fail('EMQLAYOUT nothing to change: give a limit, a weight, or pause or resume')
end

-- Type gates: every key read or written holds its type (or is absent).
refused = gate_types(lane, 'zset', ring, 'list', paused, 'set', glimit, 'hash', gactive, 'hash', gweight, 'hash', wake, 'list')
if refused then return refused end
-- The number gate: the view reads the group's fields as the library's verbs do.
local _
_, refused = group_view(base, g, false)
if refused then return refused end

-- An unpaused group below its ceiling, with work, not on the ring yet: on it, with a wake.
local function wake_up()
  redis.call('RPUSH', ring, g)
  redis.call('LPUSH', wake, '1')
  redis.call('LTRIM', wake, 0, 63)
end

if weight ~= '' then
  redis.call('HSET', gweight, g, weight)
end
if pause == 'pause' then
  redis.call('SADD', paused, g)
  redis.call('LREM', ring, 0, g)
end
if limit ~= '' then
  redis.call('HSET', glimit, g, limit)
  local act = tonumber(redis.call('HGET', gactive, g) or '0')
  if act >= tonumber(limit) then
    redis.call('LREM', ring, 0, g)
  elseif redis.call('SISMEMBER', paused, g) == 0 and redis.call('ZCARD', lane) > 0 and not redis.call('LPOS', ring, g) then
    wake_up()
  end
end
if pause == 'resume' then
  redis.call('SREM', paused, g)
  if redis.call('ZCARD', lane) > 0 then
    local lim = redis.call('HGET', glimit, g)
    local act = tonumber(redis.call('HGET', gactive, g) or '0')
    if (not lim or act < tonumber(lim)) and not redis.call('LPOS', ring, g) then
      wake_up()
    end
  end
end

local view = group_view(base, g, redis.call('LPOS', ring, g) ~= false)
return view
