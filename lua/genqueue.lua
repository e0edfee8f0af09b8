--[[
  @genqueue: admit one job to its group's lane, atomically. The EchoMQ library's grouped
  admission (Lanes.enqueue) with this project's hardening: a refusal writes nothing. The
  lane is served by the library's @gclaim, which rotates the ring of groups one step per
  claim; the flat pending set is never touched. The payload is the last argument (so REST
  sends it as the raw body), which puts the arguments in another order than the
  library's [id, payload, group].

  KEYS[1]  emq:{<queue>}:job:<id>              the job's row (HASH)
  KEYS[2]  emq:{<queue>}:g:<group>:pending     the group's lane (ZSET)
  KEYS[3]  emq:{<queue>}:ring                  the groups that can be served now (LIST)
  KEYS[4]  emq:{<queue>}:paused                the paused groups (SET)
  KEYS[5]  emq:{<queue>}:glimit                group -> concurrency ceiling (HASH)
  KEYS[6]  emq:{<queue>}:gactive               group -> jobs claimed now (HASH)
  KEYS[7]  emq:{<queue>}:wake                  wake tokens for parked consumers (LIST, 64 at most)

  ARGV[1]  <id>       the job id: JOB + 11 base62 characters, at most JOBAzL8n0Y58m7
  ARGV[2]  <group>    the group: a branded id of any namespace (3 capitals, 11 base62
                      digits, at most AzL8n0Y58m7)
  ARGV[3]  <payload>  the caller's bytes, stored verbatim; the last argument

  Replies
    1  enqueued: the row was born (state=pending, attempts=0, payload, group) in one
       HSET and the id was added to the lane at score 0; then, only if the group is not
       paused, is below its ceiling (no glimit, or gactive (0 when unset) < glimit) and is
       not on the ring yet: RPUSH ring group, LPUSH wake 1, LTRIM wake 0 63
    0  duplicate: a row already exists at KEYS[1] (whatever it holds); nothing written

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not the seven above for one queue q, this id and this
                   group, q breaks the queue-name rule (1 to 128 of A-Z a-z 0-9 . _ -, not
                   emq), the id or the group is not a branded id, there are not exactly 3
                   arguments; or the group's glimit or gactive field holds no number
    WRONGTYPE ...  a key holds another type than the one above (the row excepted: an
                   existing row is a duplicate)

  Order: kind gate, layout gate, idempotency, type gates (KEYS[2] to KEYS[7]), the
  group's glimit and gactive fields, HSET, ZADD, SISMEMBER, LPOS, RPUSH, LPUSH, LTRIM.
  Every gate runs before the first write, because a script that errors after a write does
  not roll back. Error text is printable ASCII and short (an echo at most 200 bytes),
  whatever the keys hold. No string comparison uses < or >: Lua compares strings with
  strcoll, and the server's locale decides that order.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local id, group = ARGV[1], ARGV[2]
local row, lane, ring, paused, glimit, gactive, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

-- Kind gate: the wire admits only JOB-namespaced ids.
local refused = gate_kind(id)
if refused then return refused end

-- Layout gate: the seven keys of one queue, the row this id's, the lane this group's.
if #KEYS ~= 7 then
  return fail('EMQLAYOUT expected 7 keys: emq:{q}: job:<id> g:<group>:pending ring paused glimit gactive wake')
end
local queue
queue, refused = gate_queue(3, 'ring')
if not queue then return refused end
refused = gate_id(id)
if refused then return refused end
if #ARGV ~= 3 then
  return fail('EMQLAYOUT expected 3 arguments: id, group, payload')
end
refused = gate_group(2, group)
if refused then return refused end
local base = 'emq:{' .. queue .. '}:'
local want = { base .. 'job:' .. id, base .. 'g:' .. group .. ':pending', ring, base .. 'paused', base .. 'glimit', base .. 'gactive', base .. 'wake' }
for i = 1, 7 do
  refused = gate_key(i, want[i])
  if refused then return refused end
end

-- Idempotency: an existing row is a duplicate; the id is the idempotency key.
if redis.call('EXISTS', row) == 1 then
  return 0
end

-- Type gates: every key read or written holds its type (or is absent) before we write.
refused = gate_types(lane, 'zset', ring, 'list', paused, 'set', glimit, 'hash', gactive, 'hash', wake, 'list')
if refused then return refused end

-- The ceiling and the live count: numbers, or absent.
local lim, act
lim, act, refused = gate_ceiling(glimit, gactive, group)
if refused then return refused end

-- The record: one HSET, the three fields with their birth values and the group.
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[3], 'group', group)
-- The lane entry: the id at score 0, so byte order is mint order within the lane.
redis.call('ZADD', lane, 0, id)
-- The ring and a wake, as the library: an unpaused group below its ceiling not yet on it.
if redis.call('SISMEMBER', paused, group) == 0 then
  if (not lim or tonumber(act or '0') < tonumber(lim)) and not redis.call('LPOS', ring, group) then
    redis.call('RPUSH', ring, group)
    redis.call('LPUSH', wake, '1')
    redis.call('LTRIM', wake, 0, 63)
  end
end
return 1
