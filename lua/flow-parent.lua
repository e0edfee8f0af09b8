--[[
  @flow-parent: hold a flow's parent, the first step of a flow with a child in another
  queue. The parent is held out of every set (state awaiting_children) with its count of
  children at <parent row>:dependencies, before any child lands, so no child can complete
  before the count exists. The library's @hold_parent, with this project's hardening: a
  parent id in use is a duplicate and nothing is written (the library's script overwrites
  it). @flow-child then lands each child in its own queue's slot.

  Sending the same flow again (the same ids, the same payloads) after a failure halfway
  completes it: this script answers that the parent is already held by an earlier send,
  with the children whose completion its :processed records (their rows are gone, and they
  are not to be landed again); @flow-child skips the children that are there.

  KEYS[1]  emq:{<q>}:job:<parent>                the parent's row (HASH)
  KEYS[2]  emq:{<q>}:job:<parent>:dependencies   its children not done yet (STRING)
  KEYS[3]  emq:{<q>}:job:<parent>:processed      its children's results (HASH; read only)

  ARGV[1]  <parent>   the parent's id: JOB + 11 base62 digits (a branded id)
  ARGV[2]  <n>        its number of children, in every queue: 1 to 1000, canonical decimal
  ARGV[3]  <payload>  the parent's bytes, stored verbatim; the last argument

  Replies
    1             held: HSET the row state awaiting_children attempts 0 payload <payload>;
                  SET dependencies <n>
    {2, id...}    held already, by an earlier send of this flow: the row is a hash whose
                  state is awaiting_children and whose payload is this one, and dependencies
                  holds a whole number from 1 to n (it only counts down). The ids: the
                  fields of :processed (children completed and counted). Nothing written
    0             duplicate: the id is in use otherwise (its row, dependencies or processed
                  key exists: another job, a parent released or finished, another flow);
                  nothing written

  Errors (nothing written; echoes: printable ASCII, 200 bytes each at most)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...   the keys are not those three of one queue q (1 to 128 of A-Za-z0-9._-,
                    not emq) and this id; the id is not branded; n is not 1 to 1000; not
                    exactly 3 arguments
    WRONGTYPE ...   (held already) KEYS[3] exists and is not a hash

  Order: kind, layout, the three keys' existence; none: HSET, SET, reply 1; else the row's
  type, state and payload, the count's type and value, KEYS[3]'s type, reply {2, ...} or 0.
]]

local parent, n, payload = ARGV[1], ARGV[2], ARGV[3]
local row, deps, processed = KEYS[1], KEYS[2], KEYS[3]

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
local function typeof(k) return redis.call('TYPE', k)['ok'] end
local fail = redis.error_reply

if type(parent) ~= 'string' or string.sub(parent, 1, 3) ~= 'JOB' then
  return fail('EMQKIND job id must be JOB-namespaced')
end
local q = #KEYS == 3 and string.match(row, '^emq:{([^{}]+)}:job:')
if not q or #q > 128 or q == 'emq' or not string.match(q, '^[A-Za-z0-9._%-]+$') then
  return fail('EMQLAYOUT KEYS: the parent row, its dependencies and its processed key, of one queue (1-128 of A-Za-z0-9._-, not emq)')
end
local base = 'emq:{' .. q .. '}:job:' .. parent
if not branded(parent) or row ~= base or deps ~= base .. ':dependencies' or processed ~= base .. ':processed' then
  return fail('EMQLAYOUT KEYS must be ' .. shown(base) .. ', its :dependencies and its :processed; ARGV[1] a branded id')
end
if #ARGV ~= 3 or not string.match(n, '^[1-9][0-9]?[0-9]?[0-9]?$') or tonumber(n) > 1000 then
  return fail('EMQLAYOUT ARGV: parent, n (1 to 1000), payload')
end

if redis.call('EXISTS', row, deps, processed) == 0 then
  redis.call('HSET', row, 'state', 'awaiting_children', 'attempts', '0', 'payload', payload)
  redis.call('SET', deps, n)
  return 1
end

-- In use: the same flow held by an earlier send, or a duplicate
if typeof(row) ~= 'hash' or typeof(deps) ~= 'string' then return 0 end
local held = redis.call('HMGET', row, 'state', 'payload')
local left = redis.call('GET', deps)
if held[1] ~= 'awaiting_children' or held[2] ~= payload then return 0 end
if #left > 4 or not string.match(left, '^[1-9][0-9]*$') or tonumber(left) > tonumber(n) then return 0 end
local t = typeof(processed)
if t ~= 'none' and t ~= 'hash' then return fail('WRONGTYPE ' .. shown(processed) .. ' holds a ' .. t .. ', not a hash') end
local reply = redis.call('HKEYS', processed)
table.insert(reply, 1, 2)
return reply
