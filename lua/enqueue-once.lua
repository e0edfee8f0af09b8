--[[
  @enqueue-once: @enqueue behind the library's dedup key, atomically. An Idempotency-Key or a
  webhook delivery id names a dedup id; its first use enqueues and parks the new job's id at
  emq:{q}:de:<dedupId> (EchoMQ's dedup family: a STRING holding exactly the bare job id, set
  NX with a TTL), and every later use within that lifetime answers the parked id. The row
  and pending entry written are exactly @enqueue's; all three writes happen in this one
  script (one round trip). A refusal writes nothing.

  KEYS[1]  emq:{<queue>}:job:<id>        the new job's row (HASH)
  KEYS[2]  emq:{<queue>}:pending         the queue's pending set (ZSET)
  KEYS[3]  emq:{<queue>}:de:<dedupId>    the dedup key (STRING: a bare job id, with a TTL);
                                         dedupId is 1 to 255 of A-Z a-z 0-9 . _ -

  ARGV[1]  <id>       the id for a new job: a 14-byte branded id, JOB + 11 base62 digits
  ARGV[2]  <compare>  '1': on a hit, the parked job's stored payload must equal ARGV[4];
                      '0': never compared
  ARGV[3]  <ttl>      the dedup key's lifetime in seconds: 1 to 9999999999, no leading 0
  ARGV[4]  <payload>  the caller's bytes, stored verbatim (last, so a REST call can carry
                      any bytes as its raw body); exactly four arguments

  Replies
    { 1, <id> }        enqueued: row, pending entry and dedup key written
    { 0, <original> }  duplicate: the dedup key parks <original>; nothing written. Also when
                       <original>'s row is gone (a worker completed it): still that job
    { 2, <id> }        taken: no dedup key, but a row for ARGV[1] exists; nothing written.
                       The host decides: an id it minted collided with another minter's job
                       (mint again and resend); an id its caller chose is that job (duplicate)

  Errors (nothing written; every key or value echoed is printable ASCII, at most 200 bytes
  of it, the rest counted)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...    the keys are not one queue's row (ARGV[1]'s), pending set and dedup
                     key, ARGV[1] is not a branded id, the dedup id is malformed, or the
                     arguments are not exactly id, '0'|'1', ttl, payload; or, on a hit, the
                     dedup key holds something other than a branded JOB id
    EMQCONFLICT ...  compare is '1' and the parked job's stored payload differs from ARGV[4]
    WRONGTYPE ...    KEYS[3] is not a string, KEYS[2] not a sorted set, or a row this
                     script reads (KEYS[1] on a miss, the parked job's on a compare) not a hash

  Order: kind gate, layout gate, type gates (KEYS[3], KEYS[2]); then
    hit  (KEYS[3] exists): parked value gate; if compare, type gate and payload compare on
         the parked job's row; reply 0
    miss (no KEYS[3]): type gate on KEYS[1]; an existing row: reply 2; else HSET, ZADD,
         SET KEYS[3] <id> NX EX <ttl>; reply 1
  Every gate runs before the first write, because a script that errors after a write does
  not roll back.

  The one key not declared in KEYS: with compare on, a hit reads the parked job's row,
  emq:{q}:job:<parked id>. Scripts should not build keys from data they read, but the host
  cannot declare this one: the parked id is exactly what the call finds out. So it is built
  here only from the queue of KEYS[2] (the slot every declared key shares) and a parked
  value that passed the branded JOB id gate (14 bytes, no separators), which makes it one
  well-formed row key in the same slot as KEYS, read, never written.
]]

local id = ARGV[1]
local row = KEYS[1]
local pending = KEYS[2]
local dedup = KEYS[3]
local compare = ARGV[2]
local ttl = ARGV[3]
local payload = ARGV[4]

-- Keys and values echoed in an error: at most 200 bytes of them, every byte outside
-- printable ASCII as \xHH. An error reply must be short UTF-8 text, or a client may fail
-- to parse it (glide drops its connection, and with it every request in flight on it).
local function shown(s)
  local text = string.gsub(string.sub(s, 1, 200), '[^ -~]', function(c) return string.format('\\x%02x', string.byte(c)) end)
  if #s > 200 then text = text .. '...(' .. #s .. ' bytes)' end
  return text
end

-- A branded id of any namespace, as the library's BrandedId.valid?: 14 bytes, 3 capitals,
-- 11 base62 digits no greater than base62(2^63 - 1), compared byte by byte (a Lua string
-- comparison would follow the server's locale).
local CEILING = 'AzL8n0Y58m7'
local function branded(s)
  if #s ~= 14 or not string.match(s, '^[A-Z][A-Z][A-Z][0-9A-Za-z]+$') then return false end
  for i = 1, 11 do
    local a, b = string.byte(s, 3 + i), string.byte(CEILING, i)
    if a ~= b then return a < b end
  end
  return true
end

local function typeof(key)
  return redis.call('TYPE', key)['ok']
end

-- Kind gate: the wire admits only JOB-namespaced ids.
if type(id) ~= 'string' or string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end

-- Layout gate: three keys of one queue; the row is this id's; a well-formed dedup id; the
-- four arguments, well-formed. Braces cannot appear in q, so the hash tag is exactly {q}.
if #KEYS ~= 3 then
  return redis.error_reply('EMQLAYOUT expected 3 keys: emq:{q}:job:<id> emq:{q}:pending emq:{q}:de:<dedupId>')
end
if not branded(id) then
  return redis.error_reply('EMQLAYOUT ARGV[1] must be a 14-byte branded id: JOB and 11 base62 digits, at most AzL8n0Y58m7')
end
local queue = string.match(pending, '^emq:{([^{}]+)}:pending$')
if queue == nil then
  return redis.error_reply('EMQLAYOUT KEYS[2] must be emq:{<queue>}:pending')
end
if row ~= 'emq:{' .. queue .. '}:job:' .. id then
  return redis.error_reply('EMQLAYOUT KEYS[1] must be emq:{' .. shown(queue) .. '}:job:<ARGV[1]>')
end
local prefix = 'emq:{' .. queue .. '}:de:'
local dedupId = string.sub(dedup, #prefix + 1)
if string.sub(dedup, 1, #prefix) ~= prefix or #dedupId < 1 or #dedupId > 255 or not string.match(dedupId, '^[A-Za-z0-9._%-]+$') then
  return redis.error_reply('EMQLAYOUT KEYS[3] must be emq:{' .. shown(queue) .. '}:de:<dedupId>, dedupId 1 to 255 of A-Z a-z 0-9 . _ -')
end
if #ARGV ~= 4 then
  return redis.error_reply('EMQLAYOUT expected 4 arguments: id, compare (0 or 1), ttl, payload; got ' .. #ARGV)
end
if compare ~= '0' and compare ~= '1' then
  return redis.error_reply('EMQLAYOUT ARGV[2] (compare) must be 0 or 1')
end
if #ttl > 10 or not string.match(ttl, '^[1-9][0-9]*$') then
  return redis.error_reply('EMQLAYOUT ARGV[3] (ttl) must be a whole number of seconds from 1 to 9999999999')
end

-- Type gates: the dedup key and the pending set, before either is read or written.
local held = typeof(dedup)
if held ~= 'none' and held ~= 'string' then
  return redis.error_reply('WRONGTYPE ' .. shown(dedup) .. ' holds a ' .. held .. ', not a string')
end
local kind = typeof(pending)
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. shown(pending) .. ' holds a ' .. kind .. ', not a zset')
end

-- A hit: the dedup key parks the original job; every later use answers it.
if held == 'string' then
  local original = redis.call('GET', dedup)
  if string.sub(original, 1, 3) ~= 'JOB' or not branded(original) then
    return redis.error_reply('EMQLAYOUT ' .. shown(dedup) .. ' holds "' .. shown(original) .. '", not a branded JOB id')
  end
  if compare == '1' then
    -- the parked job's row (see the header): absent once a worker completed it
    local parked = 'emq:{' .. queue .. '}:job:' .. original
    local stored = typeof(parked)
    if stored == 'hash' then
      local was = redis.call('HGET', parked, 'payload')
      if was and was ~= payload then
        return redis.error_reply('EMQCONFLICT this dedup id parks job ' .. original .. ', enqueued with another payload')
      end
    elseif stored ~= 'none' then
      return redis.error_reply('WRONGTYPE ' .. shown(parked) .. ' holds a ' .. stored .. ', not a hash')
    end
  end
  return { 0, original }
end

-- A miss whose id already names a job: the host decides what that means; write nothing.
local taken = typeof(row)
if taken == 'hash' then
  return { 2, id }
end
if taken ~= 'none' then
  return redis.error_reply('WRONGTYPE ' .. shown(row) .. ' holds a ' .. taken .. ', not a hash')
end

-- @enqueue's writes, exactly; then the dedup key, holding the bare id.
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload)
redis.call('ZADD', pending, 0, id)
redis.call('SET', dedup, id, 'NX', 'EX', ttl)
return { 1, id }
