--[[
  @group-read: one group's (lane's) view: how many jobs wait in its lane, how many are
  claimed, its ceiling and weight, whether it is paused and whether it is on the ring (the
  library's @gclaim serves only groups on the ring). Reads only; never writes: a read script.
  A group that has none of these reads as all zeros, unpaused and off the ring.

  KEYS[1]  emq:{<queue>}:g:<group>:pending   the group's lane (ZSET)
  KEYS[2]  emq:{<queue>}:ring                the groups that can be served now (LIST)
  KEYS[3]  emq:{<queue>}:paused              the paused groups (SET)
  KEYS[4]  emq:{<queue>}:glimit              group -> concurrency ceiling (HASH)
  KEYS[5]  emq:{<queue>}:gactive             group -> jobs claimed now (HASH)
  KEYS[6]  emq:{<queue>}:gweight             group -> fair-share weight (HASH)

  ARGV[1]  <group>   a branded id of any namespace (3 capitals, 11 base62 digits, at most
                     AzL8n0Y58m7), as admission's; exactly one argument

  Replies
    { group, pending, active, limit, weight, paused, ringed }  pending the lane's ZCARD,
       active gactive's field (0 when unset), limit and weight as stored ('' when unset),
       paused 1 when the paused set holds the group, else 0; ringed 1 when LPOS finds it
       on the ring, else 0

  Errors
    EMQLAYOUT ...  the keys are not the six above for one queue q (a queue-name rule's queue)
                   and this group; the group is not a branded id; not exactly 1 argument; or
                   the group's glimit, gactive or gweight field holds no number
    WRONGTYPE ...  a key exists and holds another type than the one above

  Order: layout gate, type gates (KEYS[1] to KEYS[6]), LPOS ring, the group's view.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/group.lua

local g = ARGV[1]

-- Layout gate: the six keys of one queue, the lane this group's.
if #KEYS ~= 6 then
  return fail('EMQLAYOUT expected 6 keys: emq:{q}: g:<group>:pending ring paused glimit gactive gweight')
end
local queue, refused = gate_queue(2, 'ring')
if not queue then return refused end
if #ARGV ~= 1 then return fail('EMQLAYOUT expected 1 argument: the group') end
refused = gate_group(1, g)
if refused then return refused end
local base = 'emq:{' .. queue .. '}:'
local want = { base .. 'g:' .. g .. ':pending', KEYS[2], base .. 'paused', base .. 'glimit', base .. 'gactive', base .. 'gweight' }
for i = 1, 6 do
  refused = gate_key(i, want[i])
  if refused then return refused end
end

-- Type gates, before any is read.
refused = gate_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'set', KEYS[4], 'hash', KEYS[5], 'hash', KEYS[6], 'hash')
if refused then return refused end

local view
view, refused = group_view(base, g, redis.call('LPOS', KEYS[2], g) ~= false)
if not view then return refused end
return view
