--[[
  @flow-child: one child of a flow that has a child in another queue, in its own queue's
  slot, after @flow-parent held the parent. Born claimable in the child's pending set,
  carrying its parent, the parent's queue when that is another, and its failure policy.
  The library's @enqueue_flow_child and the parent_policy HSET it sends after it, in one
  HSET, with this project's hardening: a row that exists is never overwritten, and a
  refusal writes nothing. Mode check answers the same without writing: the host checks
  every child this way before it holds the parent, so that a child in the way refuses the
  flow before anything is written.

  Sending the same flow again after a failure halfway completes it: a child that is there
  already, or was and completed, is skipped (reply 0); a child id held by another job
  refuses.

  KEYS[1]  emq:{<cq>}:job:<child>    the child's row (HASH)
  KEYS[2]  emq:{<cq>}:pending        the child's queue's pending set (ZSET)
  KEYS[3]  where the child's completion is recorded before its parent counts it, read
           only. The parent in the child's queue (ARGV[3] empty):
           emq:{<cq>}:job:<parent>:processed (HASH, the fan-in's record); else
           emq:{<cq>}:flow:outbox (LIST: entries <parent queue>\0<parent>\0<child>\0<result>
           that the library's Pump delivers to the parent)

  ARGV[1]  <child>    the child's id: JOB + 11 base62 digits (a branded id)
  ARGV[2]  <parent>   the parent's id, a branded JOB id other than the child's
  ARGV[3]  <pqueue>   empty when the parent runs in the child's queue, else the parent's
                      queue (1 to 128 of A-Za-z0-9._-, not emq, not the child's queue)
  ARGV[4]  <policy>   fp (the child's death fails the parent) or id (it counts as done)
  ARGV[5]  <mode>     check (write nothing) or land
  ARGV[6]  <payload>  land only: the child's bytes, stored verbatim; the last argument

  Replies
    1  check: the child would land; land: it landed: HSET the row state pending attempts 0
       payload <payload> parent <parent> [parent_queue <pqueue>, only when not empty]
       parent_policy <policy>; ZADD pending 0 <child>
    0  the child is there, or was: its row exists with parent <parent> and parent_queue
       <pqueue> (no parent_queue when ARGV[3] is empty); or its row is gone and KEYS[3]
       records its completion (a :processed field <child>, or an outbox entry starting
       <pqueue>\0<parent>\0<child>\0). Nothing written

  Errors (nothing written; echoes: printable ASCII, 200 bytes each at most)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...     the keys are not those above for one queue cq (1 to 128 of
                      A-Za-z0-9._-, not emq), this child and this parent; an id not
                      branded, or the two the same; ARGV[3] not a queue or the child's;
                      the policy not fp or id; the mode not check or land; not 5 arguments
                      for check or 6 for land
    EMQCONFLICT job <child> exists and is not a child of <parent> ...   its row exists
                      (whatever it holds) and carries another parent or parent_queue
    WRONGTYPE ...     KEYS[2] not a sorted set, or KEYS[3] not its type above

  Order: kind, layout, the row (reply 0 or EMQCONFLICT), the types of KEYS[2] and KEYS[3],
  the record in KEYS[3] (reply 0); check: reply 1; land: HSET, ZADD, reply 1. The outbox
  is read whole (LRANGE): the Pump drains it every tick.
]]

local child, parent, pqueue, policy, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local row, pending, record = KEYS[1], KEYS[2], KEYS[3]

-- \xHH: glide drops its link on a reply that is not UTF-8
local function shown(s)
  local t = string.gsub(string.sub(s, 1, 200), '[^ -~]', function(c) return string.format('\\x%02x', string.byte(c)) end)
  return #s > 200 and t .. '...(' .. #s .. ' bytes)' or t
end
-- BrandedId.valid?, the ceiling compared bytewise (not by locale)
local function branded(s)
  if type(s) ~= 'string' or #s ~= 14 or not string.match(s, '^[A-Z][A-Z][A-Z][0-9A-Za-z]+$') then return false end
  for i = 1, 11 do
    local a, b = string.byte(s, i + 3), string.byte('AzL8n0Y58m7', i)
    if a ~= b then return a < b end
  end
  return true
end
-- the queue-name rule (explicit ranges: %w follows the locale), emq reserved
local function queue(s)
  return type(s) == 'string' and #s >= 1 and #s <= 128 and s ~= 'emq' and string.match(s, '^[A-Za-z0-9._%-]+$') ~= nil
end
local function typeof(k) return redis.call('TYPE', k)['ok'] end
local fail = redis.error_reply

if type(child) ~= 'string' or string.sub(child, 1, 3) ~= 'JOB' then
  return fail('EMQKIND job id must be JOB-namespaced')
end
local cq = #KEYS == 3 and string.match(pending, '^emq:{([^{}]+)}:pending$')
if not cq or not queue(cq) then
  return fail('EMQLAYOUT KEYS: the child row, its pending set and where its completion is recorded, of one queue (1-128 of A-Za-z0-9._-, not emq)')
end
local base = 'emq:{' .. cq .. '}:'
if not branded(child) or row ~= base .. 'job:' .. child then
  return fail('EMQLAYOUT KEYS[1] must be ' .. shown(base) .. 'job:<ARGV[1]>, a branded id')
end
if not branded(parent) or string.sub(parent, 1, 3) ~= 'JOB' or parent == child then
  return fail('EMQLAYOUT ARGV[2] must be the parent: a branded JOB id, not the child\'s')
end
if pqueue ~= '' and (not queue(pqueue) or pqueue == cq) then
  return fail('EMQLAYOUT ARGV[3] must be empty (the parent in this queue) or the parent\'s queue, another than ' .. shown(cq))
end
local at = pqueue == '' and base .. 'job:' .. parent .. ':processed' or base .. 'flow:outbox'
if record ~= at then return fail('EMQLAYOUT KEYS[3] must be ' .. shown(at)) end
if (policy ~= 'fp' and policy ~= 'id') or not ((mode == 'check' and #ARGV == 5) or (mode == 'land' and #ARGV == 6)) then
  return fail('EMQLAYOUT ARGV: child, parent, parent queue or empty, policy fp|id, then check, or land and the payload')
end

-- The row: this parent's child is there already; any other job refuses
local t = typeof(row)
if t ~= 'none' then
  if t == 'hash' then
    local was = redis.call('HMGET', row, 'parent', 'parent_queue')
    if was[1] == parent and (was[2] or '') == pqueue then return 0 end
  end
  return fail('EMQCONFLICT job ' .. child .. ' exists and is not a child of ' .. parent .. (pqueue == '' and '' or ' in ' .. shown(pqueue)))
end

local kind = typeof(pending)
if kind ~= 'none' and kind ~= 'zset' then return fail('WRONGTYPE ' .. shown(pending) .. ' holds a ' .. kind .. ', not a zset') end
local want = pqueue == '' and 'hash' or 'list'
kind = typeof(record)
if kind ~= 'none' and kind ~= want then return fail('WRONGTYPE ' .. shown(record) .. ' holds a ' .. kind .. ', not a ' .. want) end

-- Its row gone: a completion recorded means the child ran; it does not land again
if pqueue == '' then
  if redis.call('HEXISTS', record, child) == 1 then return 0 end
elseif kind == 'list' then
  local prefix = pqueue .. '\0' .. parent .. '\0' .. child .. '\0'
  for _, entry in ipairs(redis.call('LRANGE', record, 0, -1)) do
    if string.sub(entry, 1, #prefix) == prefix then return 0 end
  end
end

if mode == 'check' then return 1 end
if pqueue == '' then
  redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[6], 'parent', parent, 'parent_policy', policy)
else
  redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', ARGV[6], 'parent', parent, 'parent_queue', pqueue, 'parent_policy', policy)
end
redis.call('ZADD', pending, 0, child)
return 1
