--[[
  @job-reschedule: move a scheduled job's due time, atomically: ZADD schedule XX <ms> id and
  nothing else. The library has no such verb; this write stays inside its family, since its
  @promote reads only the score (../shared/protocol/LIBRARY.md section f). The row is not written:
  its state stays scheduled, its attempts and payload as they are.

  Capability: control
  (it changes what workers will do: the gateway runs it for a control token only)

  KEYS[1]  emq:{<queue>}:job:<id>   the job's row (HASH)
  KEYS[2]  emq:{<queue>}:schedule   the schedule set (ZSET, scored by run-at Unix ms)

  ARGV[1]  <id>     the job id: JOB + 11 base62 characters, at most JOBAzL8n0Y58m7
  ARGV[2]  <mode>   at: ARGV[3] is the run-at time in Unix ms, on the caller's clock;
                    in: ARGV[3] is a delay in ms, added to the server's clock (TIME, in ms:
                    t[1] * 1000 + floor(t[2] / 1000), as the library's @schedule and @promote)
  ARGV[3]  <value>  a whole number in decimal, no sign, no leading zero, at most 15 digits
                    (below 2^53, so exact). The caller holds it to admission's own bounds
                    (shared/schedule.ts); the script only to these

  Replies (every refusal writes nothing)
    {1, runAt}           rescheduled: runAt is the score written (an integer, Unix ms)
    {0, 'not_scheduled'} the row exists and the schedule set does not hold the id
    {0, 'absent'}        there is no row

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not this id's row and the schedule set of one queue; a name
                   breaks its rule; the mode is not at or in; the value is not a whole
                   number of at most 15 digits; not exactly 3 arguments
    WRONGTYPE ...  a key holds another type than the one above

  Order: kind gate, layout gate, type gates, EXISTS row, ZSCORE schedule, TIME (mode in), ZADD XX.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local id, mode, value = ARGV[1], ARGV[2], ARGV[3]
local row, schedule = KEYS[1], KEYS[2]

-- Kind gate: the wire admits only JOB-namespaced ids.
local refused = gate_kind(id)
if refused then return refused end

-- Layout gate: this id's row and the schedule set of one queue; the arguments as above.
local queue
queue, refused = gate_keys(2, 2, 'schedule', 'emq:{q}:job:<id> emq:{q}:schedule')
if not queue then return refused end
refused = gate_row(1, 'emq:{' .. queue .. '}:', 1)
if refused then return refused end
if #ARGV ~= 3 or (mode ~= 'at' and mode ~= 'in') then
  return fail('EMQLAYOUT expected 3 arguments: id, at or in, a whole number of ms')
end
local ms = whole(value, 0, 999999999999999)
if not ms then
  return fail('EMQLAYOUT ARGV[3] ' .. shown(value) .. ' is not a whole number of ms: decimal digits, no leading zero, at most 15')
end

-- Type gates: the row a hash, the schedule a sorted set (or absent).
refused = gate_types(row, 'hash', schedule, 'zset')
if refused then return refused end

if redis.call('EXISTS', row) == 0 then return { 0, 'absent' } end
if not redis.call('ZSCORE', schedule, id) then return { 0, 'not_scheduled' } end

if mode == 'in' then
  local t = redis.call('TIME')
  ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ms
end
redis.call('ZADD', schedule, 'XX', ms, id)
return { 1, ms }
