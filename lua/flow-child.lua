--[[
  @flow-child: one child of a flow with a child in another queue, in its own queue's slot,
  after @flow-parent held the parent: claimable, carrying its parent, the parent's queue when
  another, and its policy. The library's @enqueue_flow_child and the parent_policy HSET its
  host sends after it, in one HSET, hardened: a row is never overwritten, a refusal writes
  nothing. Mode check writes nothing: the host checks every child before it holds the parent,
  so that a child in the way refuses the flow before anything is written. Sent again (the
  same flow, after a failure halfway), a child there, or that ran, is skipped (reply 0).

  KEYS[1]  emq:{<cq>}:job:<child>   the child's row (HASH)
  KEYS[2]  emq:{<cq>}:pending       its queue's pending set (ZSET)
  KEYS[3]  where its completion is recorded until the parent counts it, read only: the parent
           in this queue (ARGV[3] empty or cq): emq:{<cq>}:job:<parent>:processed (HASH); else
           emq:{<cq>}:flow:outbox (LIST of <parent queue>\0<parent>\0<child>\0<result>)

  ARGV[1]  <child>    a branded JOB id (JOB + 11 base62 digits)
  ARGV[2]  <parent>   a branded JOB id, not the child's
  ARGV[3]  <pqueue>   the parent's queue (1-128 of A-Za-z0-9._-, not emq); cq or empty: the
                      parent in this queue, read as empty below (REST's path-style requests
                      cannot carry an empty argument: the host sends cq)
  ARGV[4]  <policy>   fp (its death fails the parent) or id (it counts as done)
  ARGV[5]  <mode>     check or land
  ARGV[6]  <payload>  land only: stored verbatim; the last argument

  Replies
    1  check: it would land; land: HSET the row state pending attempts 0 payload <payload>
       parent <parent> [parent_queue <pqueue> when another] parent_policy <policy>; ZADD
       pending 0 <child>
    0  there, or ran: its row exists with this parent and parent_queue (none when the
       parent is in cq); or KEYS[3] records it (a :processed field, or an outbox entry starting
       <pqueue>\0<parent>\0<child>\0). Nothing written

  Errors (nothing written; echoes printable ASCII, 200 bytes at most)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  not these keys of one queue cq (1-128 of A-Za-z0-9._-, not emq) and these
                   ids; an id not branded, or the two the same; ARGV[3] not a queue; the
                   policy or mode not above; not 5 arguments (check) or 6 (land)
    EMQCONFLICT job <child> exists and is not a child of <parent> ...   whatever it holds
    WRONGTYPE ...  KEYS[2] or KEYS[3] not its type above

  Order: kind, layout, the row (0 or EMQCONFLICT), the types, the record (0); check: 1; land:
  HSET, ZADD, 1. The outbox is read whole (LRANGE): the Pump drains it every tick.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local child, parent, pqueue, policy, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local row, pending, record = KEYS[1], KEYS[2], KEYS[3]

local refused = gate_kind(child)
if refused then return refused end
local cq
cq, refused = gate_keys(3, 2, 'pending', 'the child row, its pending set and where its completion is recorded,')
if not cq then return refused end
local base = 'emq:{' .. cq .. '}:'
refused = gate_row(1, base, 1)
if refused then return refused end
if not branded(parent) or not is_job(parent) or parent == child then
  return fail('EMQLAYOUT ARGV[2] must be the parent: a branded JOB id, not the child\'s')
end
if pqueue ~= '' and not valid_queue(pqueue) then
  return fail('EMQLAYOUT ARGV[3] must be the parent\'s queue, or empty')
end
if pqueue == cq then pqueue = '' end
refused = gate_key(3, pqueue == '' and base .. 'job:' .. parent .. ':processed' or base .. 'flow:outbox')
if refused then return refused end
if (policy ~= 'fp' and policy ~= 'id') or not ((mode == 'check' and #ARGV == 5) or (mode == 'land' and #ARGV == 6)) then
  return fail('EMQLAYOUT ARGV: child, parent, parent queue or empty, policy fp|id, then check, or land and the payload')
end

-- the row: this parent's child is there already; any other job refuses
local t = typeof(row)
if t ~= 'none' then
  if t == 'hash' then
    local was = redis.call('HMGET', row, 'parent', 'parent_queue')
    if was[1] == parent and (was[2] or '') == pqueue then return 0 end
  end
  return fail('EMQCONFLICT job ' .. child .. ' exists and is not a child of ' .. parent .. (pqueue == '' and '' or ' in ' .. shown(pqueue)))
end

refused = gate_types(pending, 'zset', record, pqueue == '' and 'hash' or 'list')
if refused then return refused end

-- its row gone: a completion recorded means it ran; it does not land again
if pqueue == '' then
  if redis.call('HEXISTS', record, child) == 1 then return 0 end
else
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
