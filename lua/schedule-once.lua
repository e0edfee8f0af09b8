--[[
  @schedule-once: @schedule behind the library's dedup key, atomically, one round trip. A
  dedup id's first use schedules the job and parks its bare id at emq:{q}:de:<dedupId>
  (SET NX EX); later uses answer the parked id. Writes exactly @schedule's row and
  schedule entry. The arguments are @schedule's with compare and ttl after the id (as
  @enqueue-once adds them to @enqueue's); the payload stays last.

  KEYS[1]  emq:{<q>}:job:<id>       the row (HASH)
  KEYS[2]  emq:{<q>}:schedule       the schedule set (ZSET, scored by run-at Unix ms)
  KEYS[3]  emq:{<q>}:de:<dedupId>   the dedup key (STRING), dedupId 1-255 of A-Za-z0-9._-

  ARGV[1]  <id>       the new job's id: JOB + 11 base62 digits (a branded id)
  ARGV[2]  <compare>  1: on a hit the parked row must hold this payload and this group
                      (or, without ARGV[6], no group); 0: never compared
  ARGV[3]  <ttl>      the dedup key's seconds, 1 to 9999999999
  ARGV[4]  <mode>     at (ARGV[5] is Unix ms) or in (ARGV[5] is a delay on the server's TIME)
  ARGV[5]  <value>    whole, decimal, no sign or leading zero; at: 0 to 3903090455551,
                      in: 0 to 315576000000 (as @schedule)
  ARGV[6]  <group>    only when there are 7 arguments: a branded id of any namespace
  ARGV[6|7] <payload> stored verbatim; last, so REST sends it as the raw body

  Replies
    {1, id}        scheduled: row (state=scheduled, attempts=0, payload[, group]), schedule
                   entry at its run-at score, dedup key holding id
    {0, original}  duplicate: the dedup key parks original (its row may be gone); the
                   run-at time is not compared (a retried `in` differs by nature)
    {2, id}        no dedup key, but a row for id exists; nothing written. The host
                   decides: its own minted id collided (mint again), a caller's id is that job

  Errors (nothing written; echoes: printable ASCII, 200 bytes each at most)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  not one queue's keys (q: 1-128 of A-Za-z0-9._-, not emq), KEYS[1] not
                   id's row, id or group not branded, a bad dedup id, ARGV not exactly as
                   above; or the dedup key parks no JOB id
    EMQCONFLICT    compare is 1 and the parked row's payload or group differs
    WRONGTYPE ...  KEYS[3] not a string, KEYS[2] not a zset, a row read not a hash

  Order: kind, layout, types of KEYS[3], KEYS[2]; then a hit: parked id gate, with compare
  its row's type, payload and group, reply 0; a miss: type of KEYS[1], a row: reply 2,
  else TIME (mode in), HSET, ZADD, SET NX EX, reply 1.

  One key is built here: compare reads the parked job's row, which the host cannot declare
  (the call finds its id out). The id passed the branded JOB gate: one row in KEYS' slot,
  read only.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/dedup.lua

local id, row, schedule, dedup = ARGV[1], KEYS[1], KEYS[2], KEYS[3]
local compare, ttl, mode, value = ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local BOUND = { at = 3903090455551, ['in'] = 315576000000 }

local refused = gate_kind(id)
if refused then return refused end
local q
q, refused = gate_keys(3, 2, 'schedule', 'the row, schedule set and dedup key')
if not q then return refused end
local base = 'emq:{' .. q .. '}:'
refused = gate_row(1, base, 1) or gate_dedup(3, base)
if refused then return refused end
if (#ARGV ~= 6 and #ARGV ~= 7) or not once_args_ok(compare, ttl)
  or (mode ~= 'at' and mode ~= 'in') or whole(value, 0, BOUND[mode]) == nil or (#ARGV == 7 and not branded(ARGV[6])) then
  return fail('EMQLAYOUT ARGV: id, compare 0|1, ttl 1-9999999999, at 0-3903090455551 | in 0-315576000000, [group (a branded id),] payload')
end
local group = #ARGV == 7 and ARGV[6] or nil
local payload = ARGV[#ARGV]

refused = gate_types(dedup, 'string', schedule, 'zset')
if refused then return refused end
if typeof(dedup) == 'string' then return parked(dedup, base, compare, payload, group) end

local there = taken(row, id)
if there then return there end
local score = whole(value, 0, BOUND[mode])
if mode == 'in' then
  local now = redis.call('TIME')
  score = now[1] * 1000 + math.floor(now[2] / 1000) + score
end
if group then
  redis.call('HSET', row, 'state', 'scheduled', 'attempts', '0', 'payload', payload, 'group', group)
else
  redis.call('HSET', row, 'state', 'scheduled', 'attempts', '0', 'payload', payload)
end
redis.call('ZADD', schedule, score, id)
redis.call('SET', dedup, id, 'NX', 'EX', ttl)
return {1, id}
