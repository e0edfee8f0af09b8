--[[
  @enqueue: admit one job to a queue, atomically. The EchoMQ wire's enqueue
  transition with this project's hardening: a refusal writes nothing.

  KEYS[1]  emq:{<queue>}:job:<id>   the job's row (HASH)
  KEYS[2]  emq:{<queue>}:pending    the queue's pending set (ZSET)

  ARGV[1]  <id>       the job id: a branded id, JOB + 11 base62 characters, at most
                      JOBAzL8n0Y58m7 (2^63 - 1)
  ARGV[2]  <payload>  the caller's bytes, stored verbatim

  Replies
    1  enqueued: the row was born (state=pending, attempts=0, payload) and
       the id was added to the pending set at score 0
    0  duplicate: a row already exists at KEYS[1] (whatever it holds);
       nothing written

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not emq:{q}:job:<ARGV[1]> and emq:{q}:pending
                   for one queue q, q breaks the queue-name rule (1 to 128 of
                   A-Z a-z 0-9 . _ -, not emq), the id is not a branded id, or
                   the payload is missing
    WRONGTYPE ...  KEYS[2] exists and is not a sorted set

  Order: kind gate, layout gate, idempotency, type gate, HSET, ZADD. Every
  gate runs before the first write, because a script that errors after a
  write does not roll back. Error text is printable ASCII and short (an echo
  at most 200 bytes), whatever the keys hold. No string comparison uses < or >:
  Lua compares strings with strcoll, and the server's locale decides that order.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local id = ARGV[1]
local row = KEYS[1]
local pending = KEYS[2]

-- Kind gate: the wire admits only JOB-namespaced ids.
local refused = gate_kind(id)
if refused then return refused end

-- Layout gate: both keys belong to the same queue, the row is this id's, and queue and id
-- keep the wire's rules.
if type(row) ~= 'string' or type(pending) ~= 'string' then
  return fail('EMQLAYOUT expected 2 keys: emq:{q}:job:<id> emq:{q}:pending')
end
local queue
queue, refused = gate_queue(2, 'pending')
if not queue then return refused end
refused = gate_id(id) or gate_key(1, 'emq:{' .. queue .. '}:job:' .. id)
if refused then return refused end
if type(ARGV[2]) ~= 'string' then
  return fail('EMQLAYOUT ARGV[2] (the payload) is missing')
end

-- Idempotency: an existing row is a duplicate; the id is the idempotency key.
if redis.call('EXISTS', row) == 1 then
  return 0
end

-- Type gate: the pending set must be absent or a sorted set before we write.
refused = gate_types(pending, 'zset')
if refused then return refused end

-- The record: one HSET, the three fields with their birth values.
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
-- The pending entry: the id at score 0, so byte order is mint order.
redis.call('ZADD', pending, 0, id)
return 1
