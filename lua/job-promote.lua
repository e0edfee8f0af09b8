--[[
  @job-promote: make one scheduled job due now, atomically. Exactly the EchoMQ library's
  @promote (Jobs.promote) for this one id, whatever its score: ZREM schedule; to its
  group's lane with the ring and wake rule when the row has a group, else to the pending
  set; state pending. The library has no single-id form; this is its loop body, with this
  project's hardening: a refusal writes nothing.
  The script builds no key from data: a laned job's lane is named by its row's group, so a
  first call (ARGV[2] empty) that finds a group replies {2, group} with nothing written, and
  the caller sends the call again with that group's keys.

  Capability: control
  (it changes what workers will do: the gateway runs it for a control token only)

  KEYS[1]  emq:{<queue>}:job:<id>            the job's row (HASH)
  KEYS[2]  emq:{<queue>}:schedule            the schedule set (ZSET)
  KEYS[3]  emq:{<queue>}:pending             the pending set (ZSET)
  KEYS[4]  emq:{<queue>}:g:<ARGV[2]>:pending the group's lane (ZSET)     } only when ARGV[2]
  KEYS[5]  emq:{<queue>}:ring                the ring (LIST)             } is not empty
  KEYS[6]  emq:{<queue>}:paused              the paused groups (SET)     }
  KEYS[7]  emq:{<queue>}:glimit              group -> ceiling (HASH)     }
  KEYS[8]  emq:{<queue>}:gactive             group -> claimed now (HASH) }
  KEYS[9]  emq:{<queue>}:wake                wake tokens (LIST)          }

  ARGV[1]  <id>     the job id: JOB + 11 base62 characters, at most JOBAzL8n0Y58m7
  ARGV[2]  <group>  empty, or the row's group field (a branded id): the lane's keys follow

  Replies (every refusal writes nothing)
    {1}                  promoted: ZREM schedule id; with a group ZADD lane 0 id and, only if
                         the group is not paused, below its ceiling (no glimit, or gactive (0
                         when unset) < glimit) and not on the ring: RPUSH ring group, LPUSH
                         wake 1, LTRIM wake 0 63; without, ZADD pending 0 id; HSET row state
                         pending (@promote's writes, in its order)
    {0, 'not_scheduled'} the row exists and the schedule set does not hold the id
    {0, 'absent'}        there is no row
    {2, group}           the row names a group ARGV[2] does not ('' when it has none): send
                         again with it and its keys

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not the ones above for one queue, this id and group; a name
                   breaks its rule; not exactly 2 arguments; the row's group field is not a
                   branded id; or the group's glimit or gactive field holds no number (the
                   library compares them as numbers, and would fail after its writes)
    WRONGTYPE ...  a key holds another type than the one above

  Order: kind gate, layout gate, type gates, EXISTS row, ZSCORE schedule, HGET group, the
  keys check, the ceiling's fields, ZREM, ZADD, SISMEMBER, LPOS, RPUSH, LPUSH, LTRIM, HSET.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local id, group = ARGV[1], ARGV[2]
local row, schedule, pending = KEYS[1], KEYS[2], KEYS[3]

-- Kind gate: the wire admits only JOB-namespaced ids.
local refused = gate_kind(id)
if refused then return refused end

-- Layout gate: the keys of one queue, the row this id's, the lane this group's.
if #ARGV ~= 2 then
  return fail('EMQLAYOUT expected 2 arguments: id, group or empty')
end
local laned = group ~= ''
local n = laned and 9 or 3
local queue
queue, refused = gate_keys(n, 2, 'schedule', n .. ' keys (3, and 6 of the lane with ARGV[2])')
if not queue then return refused end
refused = gate_id(id) or (laned and gate_group(2, group))
if refused then return refused end
local base = 'emq:{' .. queue .. '}:'
local want = { base .. 'job:' .. id, schedule, base .. 'pending' }
if laned then
  for _, k in ipairs({ 'g:' .. group .. ':pending', 'ring', 'paused', 'glimit', 'gactive', 'wake' }) do want[#want + 1] = base .. k end
end
for i = 1, n do
  refused = gate_key(i, want[i])
  if refused then return refused end
end

-- Type gates: every key read or written holds its type (or is absent) before any is read.
refused = gate_types(row, 'hash', schedule, 'zset', pending, 'zset')
  or (laned and gate_types(KEYS[4], 'zset', KEYS[5], 'list', KEYS[6], 'set', KEYS[7], 'hash', KEYS[8], 'hash', KEYS[9], 'list'))
if refused then return refused end

if redis.call('EXISTS', row) == 0 then return { 0, 'absent' } end
if not redis.call('ZSCORE', schedule, id) then return { 0, 'not_scheduled' } end

-- The lane the row names, as the call names it.
local g = redis.call('HGET', row, 'group')
if g and not branded(g) then return fail('EMQLAYOUT the row names a group that is not a branded id: ' .. shown(g)) end
if (g or '') ~= group then return { 2, g or '' } end
local lim, act
if laned then
  lim, act, refused = gate_ceiling(KEYS[7], KEYS[8], group)
  if refused then return refused end
end

-- @promote's writes for this id.
redis.call('ZREM', schedule, id)
if laned then
  redis.call('ZADD', KEYS[4], 0, id)
  if redis.call('SISMEMBER', KEYS[6], group) == 0 then
    if (not lim or tonumber(act or '0') < tonumber(lim)) and not redis.call('LPOS', KEYS[5], group) then
      redis.call('RPUSH', KEYS[5], group)
      redis.call('LPUSH', KEYS[9], '1')
      redis.call('LTRIM', KEYS[9], 0, 63)
    end
  end
else
  redis.call('ZADD', pending, 0, id)
end
redis.call('HSET', row, 'state', 'pending')
return { 1 }
