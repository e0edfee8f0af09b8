--[[
  @job-remove: remove one job that waits (pending, flat or in its lane; scheduled; dead),
  atomically. The EchoMQ library's Jobs.remove_job (@remove_job) with this project's
  hardening: its writes, byte for byte, plus the lane a laned job waits in, and a refusal
  (nothing written) wherever the library's verb would leave the wire inconsistent: a
  claimed job (its worker's complete must still succeed, and a lane's gactive come down), a
  locked job, a flow member whose flow is not done.
  The script builds no key from data: a laned job's lane and a flow child's parent are named
  by the row, so a first call (ARGV[3], ARGV[4] empty) that finds them replies {2, ...} with
  nothing written, and the caller sends the call again with their keys.

  Capability: control
  (it changes what workers will do: the gateway runs it for a control token only)

  KEYS[1]   emq:{<queue>}:job:<id>               the job's row (HASH)
  KEYS[2]   emq:{<queue>}:pending                the pending set (ZSET)
  KEYS[3]   emq:{<queue>}:active                 the active set (ZSET)
  KEYS[4]   emq:{<queue>}:schedule               the schedule set (ZSET)
  KEYS[5]   emq:{<queue>}:dead                   the dead set (ZSET)
  KEYS[6]   emq:{<queue>}:job:<id>:logs          the job's logs (any type: deleted)
  KEYS[7]   emq:{<queue>}:job:<id>:lock          the library's worker lock marker (any type: read)
  KEYS[8]   emq:{<queue>}:job:<id>:dependencies  a flow parent's count of children not done (STRING)
  KEYS[9]   emq:{<queue>}:de:<ARGV[2]>           the dedup key (STRING); emq:{<queue>}:de: when
                                                 ARGV[2] is empty (never read then, as the library)
  KEYS[10]  emq:{<queue>}:ring                   the groups that can be served now (LIST)
  KEYS[11]  emq:{<queue>}:g:<ARGV[3]>:pending    the job's lane (ZSET); only when ARGV[3] is not empty
  KEYS[11|12]  emq:{<queue>}:job:<ARGV[4]>       the parent's row (HASH); only when ARGV[4] is not empty
  KEYS[12|13]  emq:{<queue>}:job:<ARGV[4]>:dependencies   the parent's count (STRING); with it

  ARGV[1]  <id>       the job id: JOB + 11 base62 characters, at most JOBAzL8n0Y58m7
  ARGV[2]  <dedupId>  empty, or a dedup id (1-255 of A-Za-z0-9._-): its key is deleted only
                      when it holds this id (the library's release)
  ARGV[3]  <group>    empty, or the row's group field (a branded id): the lane's key follows
  ARGV[4]  <parent>   empty, or the row's parent field when its parent is in this queue (a
                      branded id): the parent's keys follow

  Replies (every refusal writes nothing)
    {1, state}          removed; state is what it was: 'pending', 'scheduled' or 'dead'. The
                        library's writes: ZREM pending, active, schedule, dead; DEL KEYS[9]
                        when ARGV[2] is not empty and GET KEYS[9] is the id; DEL the row and
                        its logs. For a laned job (the row has group) also @complete's
                        non-active branch: ZREM lane, then LREM ring 0 group when the lane is
                        now empty. Never touched: gactive (the job is not claimed), the lock,
                        a released parent's :dependencies and :processed (the library leaves
                        them too)
    {0, 'absent'}       no row and no set holds the id; or a row in no set that is neither a
                        flow parent nor a laned job (the read-back, @job-state, answers nil too)
    {0, 'job_active'}   the id is in the active set: claimed (its worker completes it)
    {0, 'job_locked'}   KEYS[7] exists, or the row has a lock field (the library's native
                        lock; both refuse its @remove_job with EMQLOCK)
    {0, 'job_in_flow'}  a flow parent not released: its row's state is awaiting_children, or
                        KEYS[8] holds a count above 0 (or no number: a count we cannot read).
                        A flow child whose flow is not done: its parent (same queue) has
                        state awaiting_children or a count above 0; removed, it would never
                        count down and the parent would wait for ever (or, completed later by
                        its siblings, come back as a row without a payload). A child whose
                        parent is in another queue (parent_queue another queue) is always
                        refused: that parent is in another slot, out of this script's reach,
                        so we cannot tell whether its flow is done
    {2, group, parent}  the row names a group or a same-queue parent that ARGV[3] or ARGV[4]
                        does not (each '' when none): send again with those and their keys

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not the ones above for one queue, this id, dedup id, group and
                   parent; a name breaks its rule; not exactly 4 arguments; or the row's group
                   or parent field is not a branded id (no key can be named by it)
    WRONGTYPE ...  a key holds another type than the one above (KEYS[6], KEYS[7] excepted)

  Order: kind gate, layout gate, type gates, ZSCORE active, then pending, schedule, dead, the
  row's state and group (the state), EXISTS lock, HEXISTS lock, the count, the row's parent
  fields, the keys check, the parent's state and count, then the writes: ZREM x4, GET and
  DEL dedup, DEL row and logs, ZREM lane, ZCARD lane, LREM ring.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local id, did, group, parent = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local row = KEYS[1]

-- Kind gate: the wire admits only JOB-namespaced ids.
local refused = gate_kind(id)
if refused then return refused end

-- Layout gate: the keys of one queue, this id's, the dedup id's, the group's and the parent's.
if #ARGV ~= 4 then
  return fail('EMQLAYOUT expected 4 arguments: id, dedup id or empty, group or empty, parent or empty')
end
local laned, child = group ~= '', parent ~= ''
local n = 10 + (laned and 1 or 0) + (child and 2 or 0)
local queue
queue, refused = gate_keys(n, 2, 'pending', n .. ' keys (10, a lane with ARGV[3], a parent row and count with ARGV[4])')
if not queue then return refused end
refused = gate_id(id) or (laned and gate_group(3, group)) or (child and not branded(parent) and fail('EMQLAYOUT ARGV[4] ' .. shown(parent) .. ' is not a branded id'))
if refused then return refused end
if did ~= '' and not valid_name(did, 255) then
  return fail('EMQLAYOUT ARGV[2] must be empty or a dedup id: 1-255 of A-Za-z0-9._-')
end
local base = 'emq:{' .. queue .. '}:'
local want = { base .. 'job:' .. id, base .. 'pending', base .. 'active', base .. 'schedule', base .. 'dead', row .. ':logs', row .. ':lock', row .. ':dependencies', base .. 'de:' .. did, base .. 'ring' }
if laned then want[#want + 1] = base .. 'g:' .. group .. ':pending' end
if child then
  want[#want + 1] = base .. 'job:' .. parent
  want[#want + 1] = base .. 'job:' .. parent .. ':dependencies'
end
for i = 1, n do
  refused = gate_key(i, want[i])
  if refused then return refused end
end
local lane = laned and KEYS[11] or nil
local prow, pdeps = child and KEYS[n - 1] or nil, child and KEYS[n] or nil

-- Type gates: every key read or written holds its type (or is absent) before any is read.
refused = gate_types(row, 'hash', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'zset', KEYS[5], 'zset', KEYS[8], 'string', KEYS[10], 'list')
  or (did ~= '' and gate_types(KEYS[9], 'string'))
  or (laned and gate_types(lane, 'zset'))
  or (child and gate_types(prow, 'hash', pdeps, 'string'))
if refused then return refused end

-- Claimed: its worker still holds it.
if redis.call('ZSCORE', KEYS[3], id) then return { 0, 'job_active' } end

-- The state, as @job-state reads it: the first set that holds the id, else the row.
local held = redis.call('EXISTS', row) == 1
local told = held and redis.call('HGET', row, 'state') or false
local g = held and redis.call('HGET', row, 'group') or false
local state = nil
if redis.call('ZSCORE', KEYS[2], id) then
  state = 'pending'
elseif redis.call('ZSCORE', KEYS[4], id) then
  state = 'scheduled'
elseif redis.call('ZSCORE', KEYS[5], id) then
  state = 'dead'
elseif told == 'pending' and g then
  state = 'pending'
end
if state == nil and told ~= 'awaiting_children' then return { 0, 'absent' } end

-- The library's lock: its marker key, or its native field on the row.
if redis.call('EXISTS', KEYS[7]) == 1 or (held and redis.call('HEXISTS', row, 'lock') == 1) then
  return { 0, 'job_locked' }
end

-- A flow not done: a count above 0 (or one we cannot read), or a parent still held.
local function waiting(state_of, count)
  if state_of == 'awaiting_children' then return true end
  local left = redis.call('GET', count)
  return left and (tonumber(left) == nil or tonumber(left) > 0) or false
end
if waiting(told, KEYS[8]) then return { 0, 'job_in_flow' } end
local p = held and redis.call('HGET', row, 'parent') or false
if p then
  local pq = redis.call('HGET', row, 'parent_queue')
  if pq and pq ~= queue then return { 0, 'job_in_flow' } end
end

-- The keys the row names: a lane and a parent, each a branded id, as the call names them.
if g and not branded(g) then return fail('EMQLAYOUT the row names a group that is not a branded id: ' .. shown(g)) end
if p and not branded(p) then return fail('EMQLAYOUT the row names a parent that is not a branded id: ' .. shown(p)) end
if (g or '') ~= group or (p or '') ~= parent then return { 2, g or '', p or '' } end
if child and waiting(redis.call('HGET', prow, 'state'), pdeps) then return { 0, 'job_in_flow' } end

-- The library's writes, then the lane's, as @complete leaves a job taken out of it.
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
redis.call('ZREM', KEYS[5], id)
if did ~= '' and redis.call('GET', KEYS[9]) == id then redis.call('DEL', KEYS[9]) end
redis.call('DEL', row, KEYS[6])
if laned then
  redis.call('ZREM', lane, id)
  if redis.call('ZCARD', lane) == 0 then redis.call('LREM', KEYS[10], 0, group) end
end
return { 1, state }
