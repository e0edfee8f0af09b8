--[[
  @enqueue: admit one job to a queue, atomically. The EchoMQ wire's enqueue
  transition with this project's hardening: a refusal writes nothing.

  KEYS[1]  emq:{<queue>}:job:<id>   the job's row (HASH)
  KEYS[2]  emq:{<queue>}:pending    the queue's pending set (ZSET)

  ARGV[1]  <id>       the job id; its first three bytes are JOB
  ARGV[2]  <payload>  the caller's bytes, stored verbatim

  Replies
    1  enqueued: the row was born (state=pending, attempts=0, payload) and
       the id was added to the pending set at score 0
    0  duplicate: a row already exists at KEYS[1] (whatever it holds);
       nothing written

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not emq:{q}:job:<ARGV[1]> and emq:{q}:pending
                   for one queue q, or the payload is missing
    WRONGTYPE ...  KEYS[2] exists and is not a sorted set

  Order: kind gate, layout gate, idempotency, type gate, HSET, ZADD. Every
  gate runs before the first write, because a script that errors after a
  write does not roll back.
]]

local id = ARGV[1]
local row = KEYS[1]
local pending = KEYS[2]

-- Keys and ids echoed in an error, every byte outside printable ASCII as \xHH: an error
-- reply must be UTF-8 text, or a client may fail to parse it (glide drops its connection,
-- and with it every request in flight on that connection).
local function shown(s)
  return (string.gsub(s, '[^ -~]', function(c) return string.format('\\x%02x', string.byte(c)) end))
end

-- Kind gate: the wire admits only JOB-namespaced ids.
if type(id) ~= 'string' or string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end

-- Layout gate: both keys belong to the same queue, and the row is this id's.
-- Braces cannot appear in q, so the hash tag is exactly {q}.
if type(row) ~= 'string' or type(pending) ~= 'string' then
  return redis.error_reply('EMQLAYOUT expected 2 keys: emq:{q}:job:<id> emq:{q}:pending')
end
local queue = string.match(pending, '^emq:{([^{}]+)}:pending$')
if queue == nil then
  return redis.error_reply('EMQLAYOUT KEYS[2] must be emq:{<queue>}:pending')
end
if row ~= 'emq:{' .. queue .. '}:job:' .. id then
  return redis.error_reply('EMQLAYOUT KEYS[1] must be emq:{' .. shown(queue) .. '}:job:<ARGV[1]>')
end
if type(ARGV[2]) ~= 'string' then
  return redis.error_reply('EMQLAYOUT ARGV[2] (the payload) is missing')
end

-- Idempotency: an existing row is a duplicate; the id is the idempotency key.
if redis.call('EXISTS', row) == 1 then
  return 0
end

-- Type gate: the pending set must be absent or a sorted set before we write.
local kind = redis.call('TYPE', pending)['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. shown(pending) .. ' holds a ' .. kind .. ', not a zset')
end

-- The record: one HSET, the three fields with their birth values.
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
-- The pending entry: the id at score 0, so byte order is mint order.
redis.call('ZADD', pending, 0, id)
return 1
