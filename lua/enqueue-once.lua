--[[
  @enqueue-once: @enqueue behind a dedupe marker, atomically. A webhook delivery id or an
  Idempotency-Key names the marker; its first use enqueues, and every later use within
  the marker's lifetime answers the job it made. The row and pending entry written are
  exactly @enqueue's. A refusal writes nothing.

  KEYS[1]  emq:{<queue>}:job:<id>       the job's row (HASH)
  KEYS[2]  emq:{<queue>}:pending        the queue's pending set (ZSET)
  KEYS[3]  emq:{<queue>}:once:<hex64>   the marker (STRING "<id> <fingerprint>", with a TTL)

  ARGV[1]  <id>           the job id to use if the marker is new; first three bytes JOB
  ARGV[2]  <fingerprint>  what the marker must match on reuse; '-': never compared
  ARGV[3]  <ttl>          the marker's lifetime in seconds, a positive integer
  ARGV[4]  <payload>      the caller's bytes, stored verbatim (last, so a REST call can
                          carry any bytes as its raw body)

  Replies
    { 1, <id> }   enqueued: row, pending entry and marker written
    { 0, <id> }   duplicate: the marker (or the row) exists; <id> is the job it names;
                  nothing written, except a marker for an existing row that had none

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...    the keys are not one queue's row, pending set and marker, or an
                     argument is missing or malformed
    EMQCONFLICT ...  the marker was made with another fingerprint (same key, other payload)
    WRONGTYPE ...    KEYS[2] is not a sorted set, or KEYS[3] is not a string

  Order: kind gate, layout gate, marker, idempotency, type gate, HSET, ZADD, SET.
]]

local id = ARGV[1]
local row = KEYS[1]
local pending = KEYS[2]
local marker = KEYS[3]
local fingerprint = ARGV[2]
local ttl = tonumber(ARGV[3])
local payload = ARGV[4]

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

-- Layout gate: three keys of one queue; the row is this id's.
if type(row) ~= 'string' or type(pending) ~= 'string' or type(marker) ~= 'string' then
  return redis.error_reply('EMQLAYOUT expected 3 keys: emq:{q}:job:<id> emq:{q}:pending emq:{q}:once:<hex64>')
end
local queue = string.match(pending, '^emq:{([^{}]+)}:pending$')
if queue == nil then
  return redis.error_reply('EMQLAYOUT KEYS[2] must be emq:{<queue>}:pending')
end
if row ~= 'emq:{' .. queue .. '}:job:' .. id then
  return redis.error_reply('EMQLAYOUT KEYS[1] must be emq:{' .. shown(queue) .. '}:job:<ARGV[1]>')
end
local prefix = 'emq:{' .. queue .. '}:once:'
if string.sub(marker, 1, #prefix) ~= prefix or not string.match(string.sub(marker, #prefix + 1), '^[0-9a-f]+$')
    or #marker ~= #prefix + 64 then
  return redis.error_reply('EMQLAYOUT KEYS[3] must be emq:{' .. shown(queue) .. '}:once:<64 hex digits>')
end
if type(payload) ~= 'string' or type(fingerprint) ~= 'string' or fingerprint == '' or string.find(fingerprint, ' ', 1, true) then
  return redis.error_reply('EMQLAYOUT ARGV[2] (fingerprint or -, no spaces) and ARGV[4] (payload) are required')
end
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('EMQLAYOUT ARGV[3] (ttl) must be a positive whole number of seconds')
end

-- The marker: a reuse answers the job it names.
local mark = redis.call('TYPE', marker)['ok']
if mark ~= 'none' then
  if mark ~= 'string' then
    return redis.error_reply('WRONGTYPE ' .. shown(marker) .. ' holds a ' .. mark .. ', not a string')
  end
  local value = redis.call('GET', marker)
  local first = string.find(value, ' ', 1, true)
  local original = first and string.sub(value, 1, first - 1) or value
  local seen = first and string.sub(value, first + 1) or '-'
  if fingerprint ~= '-' and seen ~= '-' and seen ~= fingerprint then
    return redis.error_reply('EMQCONFLICT this key was used with another payload (job ' .. shown(original) .. ')')
  end
  return { 0, original }
end

-- Idempotency: an existing row is a duplicate; remember it under the marker.
if redis.call('EXISTS', row) == 1 then
  redis.call('SET', marker, id .. ' ' .. fingerprint, 'EX', ttl)
  return { 0, id }
end

-- Type gate: the pending set must be absent or a sorted set before we write.
local kind = redis.call('TYPE', pending)['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. shown(pending) .. ' holds a ' .. kind .. ', not a zset')
end

-- @enqueue's writes, exactly; then the marker.
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload)
redis.call('ZADD', pending, 0, id)
redis.call('SET', marker, id .. ' ' .. fingerprint, 'EX', ttl)
return { 1, id }
