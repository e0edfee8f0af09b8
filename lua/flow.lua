--[[
  @flow: a flow whose children all run in the parent's queue, atomically. The library's
  @enqueue_flow and the parent_policy HSETs its host sends after it, in one script, hardened:
  a parent in use is a duplicate, a child that exists refuses, a refusal writes nothing (the
  library's script overwrites). The payloads ride one argument, the last (REST: the raw body).

  KEYS[1]     emq:{<q>}:job:<parent>                the parent's row (HASH)
  KEYS[2]     emq:{<q>}:job:<parent>:dependencies   its children not done (STRING)
  KEYS[3]     emq:{<q>}:pending                     the pending set (ZSET)
  KEYS[3+i]   emq:{<q>}:job:<child i>               child i's row; i = 1..N, N 1 to 1000

  ARGV[1]     <parent>    a branded JOB id (JOB + 11 base62 digits)
  ARGV[2]     <size>      the parent's payload's length in bytes
  ARGV[3i]    <child i>   a branded JOB id; the N + 1 ids distinct
  ARGV[3i+1]  <policy>    fp (its death fails the parent) or id (it counts as done)
  ARGV[3i+2]  <size>      child i's payload's length
  ARGV[3N+3]  <payloads>  the parent's payload, then each child's, concatenated; the sizes
                          (decimal, no sign or leading zero) add up to its length

  Replies
    N  enqueued: per child, HSET row state pending attempts 0 payload <p> parent <parent>
       parent_policy <policy>, ZADD pending 0 <child>; then HSET the parent's row state
       awaiting_children attempts 0 payload <p>; SET dependencies N
    0  duplicate: the parent's row or dependencies key exists (that key outlives a finished
       parent), whatever it holds; nothing written

  Errors (nothing written; echoes printable ASCII, 200 bytes at most)
    EMQKIND job id must be JOB-namespaced   the parent's id or a child's
    EMQLAYOUT ...  not 1 to 1000 children; the keys not those of one queue (1-128 of
                   A-Za-z0-9._-, not emq) and these ids; an id not branded or repeated; a
                   policy not fp or id; a size not whole, or the sizes not the payloads' length
    EMQCONFLICT child <i> <id> exists ...   child i's row exists, whatever it holds
    WRONGTYPE ...  KEYS[3] not a sorted set

  Order: kind, layout, the parent (reply 0), the children's rows, the pending set's type, then
  the writes in the library's order. No string comparison uses < or > (strcoll: the locale's).
]]

--#include lib/wire.lua
--#include lib/gate.lua

local n = #KEYS - 3
local parent = ARGV[1]
local row, deps, pending = KEYS[1], KEYS[2], KEYS[3]

-- the kind gate on every id given: the parent's, then each child's (one missing is a layout error)
local refused = gate_kind(parent)
for i = 1, n do
  if refused then break end
  if ARGV[3 * i] ~= nil then refused = gate_kind(ARGV[3 * i]) end
end
if refused then return refused end

if n < 1 or n > 1000 then
  return fail('EMQLAYOUT expected 4 to 1003 keys: the parent row, its dependencies, the pending set, then 1 to 1000 child rows')
end
local q = queue_of(pending, 'pending')
if not q then
  return fail('EMQLAYOUT KEYS[3] must be emq:{<queue>}:pending, the queue 1 to 128 of A-Za-z0-9._- (not emq)')
end
if #ARGV ~= 3 * n + 3 then
  return fail('EMQLAYOUT expected ' .. (3 * n + 3) .. ' arguments: parent, size, then child, policy, size per child, then the payloads')
end
local base = 'emq:{' .. q .. '}:job:'
if not branded(parent) or row ~= base .. parent or deps ~= base .. parent .. ':dependencies' then
  return fail('EMQLAYOUT KEYS[1] and KEYS[2] must be ' .. shown(base) .. '<ARGV[1]> and its :dependencies, ARGV[1] a branded id')
end
local payloads = ARGV[3 * n + 3]
local sizes = { whole(ARGV[2], 0, 9999999999) }
local total = sizes[1] or 0
local seen = { [parent] = true }
for i = 1, n do
  local child, policy = ARGV[3 * i], ARGV[3 * i + 1]
  refused = gate_row(3 + i, 'emq:{' .. q .. '}:', 3 * i)
  if refused then return refused end
  if seen[child] then return fail('EMQLAYOUT child ' .. i .. ' repeats the id ' .. child) end
  seen[child] = true
  if policy ~= 'fp' and policy ~= 'id' then
    return fail('EMQLAYOUT ARGV[' .. (3 * i + 1) .. '] (child ' .. i .. "'s policy) must be fp or id")
  end
  sizes[i + 1] = whole(ARGV[3 * i + 2], 0, 9999999999)
  total = total + (sizes[i + 1] or 0)
end
for i = 1, n + 1 do
  if sizes[i] == nil then return fail('EMQLAYOUT ARGV[' .. (3 * i - 1) .. '] must be a size: a whole number in decimal') end
end
if total ~= #payloads then
  return fail('EMQLAYOUT the sizes add up to ' .. total .. ' bytes, the payloads are ' .. #payloads)
end

if redis.call('EXISTS', row, deps) > 0 then return 0 end

for i = 1, n do
  if redis.call('EXISTS', KEYS[3 + i]) == 1 then
    return fail('EMQCONFLICT child ' .. i .. ' ' .. ARGV[3 * i] .. ' exists: a flow child must be a new job')
  end
end
refused = gate_types(pending, 'zset')
if refused then return refused end

local at = sizes[1] + 1
for i = 1, n do
  local child = ARGV[3 * i]
  redis.call('HSET', KEYS[3 + i], 'state', 'pending', 'attempts', '0', 'payload', string.sub(payloads, at, at + sizes[i + 1] - 1),
    'parent', parent, 'parent_policy', ARGV[3 * i + 1])
  redis.call('ZADD', pending, 0, child)
  at = at + sizes[i + 1]
end
redis.call('HSET', row, 'state', 'awaiting_children', 'attempts', '0', 'payload', string.sub(payloads, 1, sizes[1]))
redis.call('SET', deps, n)
return n
