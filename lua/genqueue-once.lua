--[[
  @genqueue-once: @genqueue behind the library's dedup key, atomically, one round trip. A
  dedup id's first use enqueues the job into its group's lane and parks its bare id at
  emq:{q}:de:<dedupId> (SET NX EX); later uses answer the parked id. Writes exactly
  @genqueue's row, lane entry, ring and wake. The keys are @genqueue's with the dedup key
  last; the arguments @genqueue's with compare and ttl after the id (as @enqueue-once adds
  them to @enqueue's); the payload stays last.

  KEYS[1]  emq:{<q>}:job:<id>            the row (HASH)
  KEYS[2]  emq:{<q>}:g:<group>:pending   the group's lane (ZSET)
  KEYS[3]  emq:{<q>}:ring                the groups that can be served now (LIST)
  KEYS[4]  emq:{<q>}:paused              the paused groups (SET)
  KEYS[5]  emq:{<q>}:glimit              group -> concurrency ceiling (HASH)
  KEYS[6]  emq:{<q>}:gactive             group -> jobs claimed now (HASH)
  KEYS[7]  emq:{<q>}:wake                wake tokens (LIST, 64 at most)
  KEYS[8]  emq:{<q>}:de:<dedupId>        the dedup key (STRING), dedupId 1-255 of A-Za-z0-9._-

  ARGV[1]  <id>       the new job's id: JOB + 11 base62 digits (a branded id)
  ARGV[2]  <compare>  1: on a hit the parked row must hold this payload and this group; 0: never
  ARGV[3]  <ttl>      the dedup key's seconds, 1 to 9999999999
  ARGV[4]  <group>    a branded id of any namespace
  ARGV[5]  <payload>  stored verbatim; last, so REST sends it as the raw body

  Replies
    {1, id}        enqueued: row (state=pending, attempts=0, payload, group), lane entry
                   at score 0, the ring and wake rule of @genqueue, dedup key holding id
    {0, original}  duplicate: the dedup key parks original (its row may be gone)
    {2, id}        no dedup key, but a row for id exists; nothing written. The host
                   decides: its own minted id collided (mint again), a caller's id is that job

  Errors (nothing written; echoes: printable ASCII, 200 bytes each at most)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  not one queue's keys (q: 1-128 of A-Za-z0-9._-, not emq), KEYS[1] not
                   id's row, KEYS[2] not group's lane, id or group not branded, a bad
                   dedup id, ARGV not exactly as above; the dedup key parks no JOB id; or
                   (on a miss) the group's glimit or gactive field holds no number
    EMQCONFLICT    compare is 1 and the parked row's payload or group differs
    WRONGTYPE ...  KEYS[8] not a string, KEYS[2] to KEYS[7] not their types above, a row
                   read not a hash

  Order: kind, layout, types of KEYS[8], KEYS[2] to KEYS[7]; then a hit: parked id gate,
  with compare its row's type, payload and group, reply 0; a miss: type of KEYS[1], a row:
  reply 2, else the glimit and gactive fields, HSET, ZADD, the ring and wake rule, SET NX
  EX, reply 1.

  One key is built here: compare reads the parked job's row, which the host cannot declare
  (the call finds its id out). The id passed the branded JOB gate: one row in KEYS' slot,
  read only.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/dedup.lua

local id, compare, ttl, group, payload = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local row, lane, ring, paused, glimit, gactive, wake, dedup = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]

local refused = gate_kind(id)
if refused then return refused end
local q
q, refused = gate_keys(8, 3, 'ring', 'the row, lane, ring, paused, glimit, gactive, wake and dedup key')
if not q then return refused end
local base = 'emq:{' .. q .. '}:'
refused = gate_row(1, base, 1)
if refused then return refused end
if #ARGV ~= 5 or not once_args_ok(compare, ttl) or not branded(group) then
  return fail('EMQLAYOUT ARGV: id, compare 0|1, ttl 1-9999999999, group (a branded id), payload')
end
local want = { nil, base .. 'g:' .. group .. ':pending', ring, base .. 'paused', base .. 'glimit', base .. 'gactive', base .. 'wake' }
for i = 2, 7 do
  refused = gate_key(i, want[i])
  if refused then return refused end
end
refused = gate_dedup(8, base)
  or gate_types(dedup, 'string', lane, 'zset', ring, 'list', paused, 'set', glimit, 'hash', gactive, 'hash', wake, 'list')
if refused then return refused end
if typeof(dedup) == 'string' then return parked(dedup, base, compare, payload, group) end

local there = taken(row, id)
if there then return there end
local lim, act
lim, act, refused = gate_ceiling(glimit, gactive, group)
if refused then return refused end
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload, 'group', group)
redis.call('ZADD', lane, 0, id)
if redis.call('SISMEMBER', paused, group) == 0 then
  if (not lim or tonumber(act or '0') < tonumber(lim)) and not redis.call('LPOS', ring, group) then
    redis.call('RPUSH', ring, group)
    redis.call('LPUSH', wake, '1')
    redis.call('LTRIM', wake, 0, 63)
  end
end
redis.call('SET', dedup, id, 'NX', 'EX', ttl)
return {1, id}
