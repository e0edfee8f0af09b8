--[[
  @flow-parent: hold a flow's parent (a flow with a child in another queue), before any child
  lands: out of every set, its count of children set. The library's @hold_parent, hardened: a
  parent id in use is a duplicate and nothing is written (the library's script overwrites).
  Sent again (the same flow, after a failure halfway), it answers that it holds the parent
  already, with the children whose completion was counted (their rows are gone: they are not
  to land again). @flow-child then lands each child in its own queue's slot.

  KEYS[1]  emq:{<q>}:job:<parent>                the parent's row (HASH)
  KEYS[2]  emq:{<q>}:job:<parent>:dependencies   its children not done (STRING)
  KEYS[3]  emq:{<q>}:job:<parent>:processed      its children's results (HASH), read only

  ARGV[1]  <parent>   a branded JOB id (JOB + 11 base62 digits)
  ARGV[2]  <n>        its number of children, in every queue: 1 to 1000, canonical decimal
  ARGV[3]  <payload>  stored verbatim; the last argument

  Replies
    1           held: HSET the row state awaiting_children attempts 0 payload <payload>;
                SET dependencies <n>
    {2, id...}  held already by an earlier send: the row a hash in state awaiting_children
                with this payload, dependencies a whole number 1 to n (it only counts down)
                and, with the fields of :processed, adding up to n (the library's complete
                and pump DECR it as they record a child there); the ids: those fields.
                Nothing written. (The caller answers duplicate unless each id is among the
                flow's children.)
    0           duplicate: the row, dependencies or processed key exists otherwise (another
                job, a parent released or finished, another flow); nothing written

  Errors (nothing written; echoes printable ASCII, 200 bytes at most)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  not these three keys of one queue (1-128 of A-Za-z0-9._-, not emq) and this
                   id; the id not branded; n not 1 to 1000; not 3 arguments
    WRONGTYPE ...  (held already) KEYS[3] not a hash

  Order: kind, layout, the keys' existence; none: HSET, SET, reply 1; else the row's type,
  state and payload, the count, KEYS[3]'s type, the count with the processed fields, reply
  {2, ...} or 0.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local parent, n, payload = ARGV[1], ARGV[2], ARGV[3]
local row, deps, processed = KEYS[1], KEYS[2], KEYS[3]

local refused = gate_kind(parent)
if refused then return refused end
local q
q, refused = gate_keys(3, 1, 'job:.*', 'the parent row, its dependencies and its processed key,')
if not q then return refused end
local base = 'emq:{' .. q .. '}:job:' .. parent
if not branded(parent) or row ~= base or deps ~= base .. ':dependencies' or processed ~= base .. ':processed' then
  return fail('EMQLAYOUT KEYS must be ' .. shown(base) .. ', its :dependencies and its :processed; ARGV[1] a branded id')
end
if #ARGV ~= 3 or not whole(n, 1, 1000) then
  return fail('EMQLAYOUT ARGV: parent, n (1 to 1000), payload')
end

if redis.call('EXISTS', row, deps, processed) == 0 then
  redis.call('HSET', row, 'state', 'awaiting_children', 'attempts', '0', 'payload', payload)
  redis.call('SET', deps, n)
  return 1
end

-- in use: held by an earlier send of this flow, or a duplicate
if typeof(row) ~= 'hash' or typeof(deps) ~= 'string' then return 0 end
local held = redis.call('HMGET', row, 'state', 'payload')
local left = redis.call('GET', deps)
if held[1] ~= 'awaiting_children' or held[2] ~= payload then return 0 end
if not whole(left, 1, tonumber(n)) then return 0 end
refused = gate_types(processed, 'hash')
if refused then return refused end
local reply = redis.call('HKEYS', processed)
-- the library counts a child down and records it in one step: a flow of another size is another flow's
if tonumber(left) + #reply ~= tonumber(n) then return 0 end
table.insert(reply, 1, 2)
return reply
