--[[
  @job-state: a producer's read-back of one job: where is it now, and how many attempts.
  The state is read as the EchoMQ library reads it (EchoMQ.Metrics.get_job_state, its
  @state_lookup): by which of the queue's sets holds the id, in the order pending, active,
  schedule, dead; failing those, a flow parent held out of every set, or a job waiting in
  its group's lane, told by its row's fields. Reads only; never writes.

  KEYS[1]  emq:{<queue>}:job:<id>   the job's row (HASH)
  KEYS[2]  emq:{<queue>}:pending    the pending set (ZSET)
  KEYS[3]  emq:{<queue>}:active     the active set (ZSET: claimed, scored by lease deadline)
  KEYS[4]  emq:{<queue>}:schedule   the schedule set (ZSET: due time)
  KEYS[5]  emq:{<queue>}:dead       the dead set (ZSET)

  ARGV[1]  <id>    the job id: a 14-byte branded id (any namespace, as the library's key
                   builder checks)
  ARGV[2]  <what>  optional: 'detail' adds the row's fields a job's reader shows (below);
                   'payload' adds those and the payload. Without it, the reply is the two
                   elements below, as before

  Replies
    { state, attempts }  state: 'pending', 'active', 'scheduled' or 'dead' (the first set
                         whose ZSCORE has the id), else 'awaiting_children' when the row's
                         state field is exactly that, else 'pending' when it is 'pending'
                         and the row has a group field (a job in its lane, which the
                         library's lookup answers 'unknown'); attempts: the row's field as stored,
                         '0' when the row has none (or there is no row)
    { state, attempts, name, value, ... }
                         with ARGV[2]: then, each only when present, in this order: 'group'
                         (the row's group), 'run_at' (the schedule set's score, when the state
                         is 'scheduled', as the server formats it), 'parent' and
                         'parent_queue' (a flow child's), 'last_error' (the row's, when the
                         state is 'dead'), 'payload' (its bytes, with 'payload' only)
    nil                  none of those: no row, or a row in no set with any other state
                         (the library answers 'absent' and 'unknown' there; a producer
                         answers 404 for both)

  Errors (every key echoed is printable ASCII, at most 200 bytes of it, the rest counted)
    EMQLAYOUT ...  the keys are not this id's row and the four sets of one queue (a
                   queue-name rule's queue), or the arguments are not one branded id and,
                   optionally, 'detail' or 'payload'
    WRONGTYPE ...  KEYS[1] exists and is not a hash, or a set exists and is not a zset

  Order: layout gate, type gates (KEYS[1] to KEYS[5]), ZSCORE in KEYS[2] to KEYS[5], the
  row's state (and group) field, the row's attempts field; with ARGV[2], HMGET of the row's
  fields and ZSCORE of the schedule set.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local row = KEYS[1]
local id = ARGV[1]

-- Layout gate: this id's row and the four sets, all of one queue.
if #KEYS ~= 5 then
  return fail('EMQLAYOUT expected 5 keys: emq:{q}:job:<id> emq:{q}:pending emq:{q}:active emq:{q}:schedule emq:{q}:dead')
end
local what = ARGV[2]
if #ARGV < 1 or #ARGV > 2 or not branded(id) or (#ARGV == 2 and what ~= 'detail' and what ~= 'payload') then
  return fail("EMQLAYOUT expected 1 argument, a 14-byte branded id (3 capitals and 11 base62 digits), and optionally 'detail' or 'payload'")
end
local queue, refused = gate_queue(2, 'pending')
if not queue then return refused end
local base = 'emq:{' .. queue .. '}:'
if row ~= base .. 'job:' .. id then
  return fail('EMQLAYOUT KEYS[1] must be emq:{' .. shown(queue) .. '}:job:<ARGV[1]>')
end
refused = gate_key(3, base .. 'active') or gate_key(4, base .. 'schedule') or gate_key(5, base .. 'dead')
if refused then return refused end

-- Type gates: a row is a hash, a set a sorted set (or absent), before any is read.
refused = gate_types(row, 'hash', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'zset', KEYS[5], 'zset')
if refused then return refused end
local held = typeof(row)

-- Where is it now: the first set that holds the id, in the library's order and names.
local names = { 'pending', 'active', 'scheduled', 'dead' }
local state = nil
for i = 1, 4 do
  if redis.call('ZSCORE', KEYS[i + 1], id) then
    state = names[i]
    break
  end
end
if state == nil and held == 'hash' then
  local told = redis.call('HGET', row, 'state')
  if told == 'awaiting_children' then
    state = 'awaiting_children'
  elseif told == 'pending' and redis.call('HEXISTS', row, 'group') == 1 then
    -- a lane holds it: the lane's key is named by the group, so it is not among KEYS
    state = 'pending'
  end
end
if state == nil then
  return false
end
local attempts = held == 'hash' and redis.call('HGET', row, 'attempts') or false
local reply = { state, attempts or '0' }
if what == nil then return reply end

-- The detail: the row's fields a reader shows, each named, only when present.
local f = held == 'hash' and redis.call('HMGET', row, 'group', 'parent', 'parent_queue', 'last_error', 'payload') or {}
local function add(name, value)
  if value then
    reply[#reply + 1] = name
    reply[#reply + 1] = value
  end
end
add('group', f[1])
add('run_at', state == 'scheduled' and redis.call('ZSCORE', KEYS[4], id))
add('parent', f[2])
add('parent_queue', f[3])
add('last_error', state == 'dead' and f[4])
add('payload', what == 'payload' and f[5])
return reply
