--[[
@enqueue-once: @enqueue behind the library's dedup key, atomically, one round trip. A
dedup id's first use enqueues and parks the job's bare id at emq:{q}:de:<dedupId> (SET NX
EX); later uses answer the parked id. Writes exactly @enqueue's row and pending entry.

KEYS[1] emq:{<q>}:job:<id> the row (HASH)
KEYS[2] emq:{<q>}:pending the pending set (ZSET)
KEYS[3] emq:{<q>}:de:<dedupId> the dedup key (STRING), dedupId 1-255 of A-Za-z0-9._-
ARGV[1] <id> the new job's id: JOB + 11 base62 digits (a branded id)
ARGV[2] <compare> 1: on a hit the parked row's payload must be ARGV[4], and it has no group; 0: never
ARGV[3] <ttl> the dedup key's seconds, 1 to 9999999999
ARGV[4] <payload> stored verbatim; last, so REST sends it as the raw body

Replies
- {1, id} enqueued: row, pending entry, dedup key holding id
- {0, original} duplicate: the dedup key parks original (its row may be gone)
- {2, id} no dedup key, but a row for id exists; nothing written. The host decides:
  its own minted id collided (mint again), a caller's id is that job (duplicate)
Errors (nothing written; echoes: printable ASCII, 200 bytes each at most)
- EMQKIND job id must be JOB-namespaced
- EMQLAYOUT: not one queue's keys (q: 1-128 of A-Za-z0-9._-, not emq), KEYS[1] not id's row, id not branded, a bad dedup
  id, ARGV not exactly as above; or the dedup key parks no JOB id
- EMQCONFLICT: compare is 1 and the parked row's payload differs, or it has a group
- WRONGTYPE: KEYS[3] not a string, KEYS[2] not a zset, a row read not a hash
Order: kind, layout, types of KEYS[3], KEYS[2]; then a hit: parked id gate, with compare
its row's type and payload, reply 0; a miss: type of KEYS[1], a row: reply 2, else HSET,
ZADD, SET NX EX, reply 1.

One key is built here: compare reads the parked job's row, which the host cannot declare
(the call finds its id out). The id passed the branded JOB gate: one row in KEYS' slot,
read only.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/dedup.lua

local id, row, pending, dedup = ARGV[1], KEYS[1], KEYS[2], KEYS[3]
local compare, ttl, payload = ARGV[2], ARGV[3], ARGV[4]

local refused = gate_kind(id)
if refused then return refused end
local q
q, refused = gate_keys(3, 2, 'pending', 'the row, pending set and dedup key')
if not q then return refused end
local base = 'emq:{' .. q .. '}:'
refused = gate_row(1, base, 1) or gate_dedup(3, base)
if refused then return refused end
if #ARGV ~= 4 or not once_args_ok(compare, ttl) then
  return fail('EMQLAYOUT ARGV: id, compare 0|1, ttl 1-9999999999, payload')
end

refused = gate_types(dedup, 'string', pending, 'zset')
if refused then return refused end
if typeof(dedup) == 'string' then return parked(dedup, base, compare, payload, nil) end

local there = taken(row, id)
if there then return there end
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload)
redis.call('ZADD', pending, 0, id)
redis.call('SET', dedup, id, 'NX', 'EX', ttl)
return {1, id}
