--[[
  @schedule: admit one job to a queue's schedule set, atomically: it waits there, out of
  every pending set, until the library's @promote finds it due (score <= the server's
  TIME in ms) and moves it to pending, or to its group's lane when the row carries a
  group. The EchoMQ library's scheduled admission (Jobs.enqueue_at / enqueue_in) with this
  project's hardening: a refusal writes nothing. The payload is the last argument (so REST
  sends it as the raw body), which puts the arguments in another order than the library's
  [id, payload, mode, value].

  KEYS[1]  emq:{<queue>}:job:<id>   the job's row (HASH)
  KEYS[2]  emq:{<queue>}:schedule   the queue's schedule set (ZSET, scored by run-at Unix ms)

  ARGV[1]  <id>       the job id: JOB + 11 base62 characters, at most JOBAzL8n0Y58m7
  ARGV[2]  <mode>     at: ARGV[3] is the run-at time in Unix ms, on the caller's clock;
                      in: ARGV[3] is a delay in ms, added to the server's clock (TIME)
  ARGV[3]  <value>    a whole number in decimal, no sign, no leading zero;
                      at: 0 to 3903090455551 (the snowflake horizon, 2093-09-06T15:47:35.551Z);
                      in: 0 to 315576000000 (ten years of 365.25 days)
  ARGV[4]  <group>    only when there are 5 arguments: the group (lane) the job joins once
                      promoted, a branded id of any namespace (3 capitals, 11 base62 digits,
                      at most AzL8n0Y58m7); the row then carries a fourth field, group
  ARGV[4|5] <payload> the caller's bytes, stored verbatim; always the last argument

  Replies
    1  scheduled: the row was born (state=scheduled, attempts=0, payload[, group]) in
       one HSET and the id was added to the schedule set at its run-at score
    0  duplicate: a row already exists at KEYS[1] (whatever it holds); nothing written

  Errors (nothing written)
    EMQKIND job id must be JOB-namespaced
    EMQLAYOUT ...  the keys are not emq:{q}:job:<ARGV[1]> and emq:{q}:schedule for one
                   queue q, q breaks the queue-name rule (1 to 128 of A-Z a-z 0-9 . _ -,
                   not emq), the id or the group is not a branded id, the mode is not at
                   or in, the value is not a whole number within its mode's bounds, or
                   there are not 4 or 5 arguments
    WRONGTYPE ...  KEYS[2] exists and is not a sorted set

  Order: kind gate, layout gate, idempotency, type gate, TIME (mode in), HSET, ZADD.
  Every gate runs before the first write, because a script that errors after a write does
  not roll back. Error text is printable ASCII and short (an echo at most 200 bytes),
  whatever the keys hold. No string comparison uses < or >: Lua compares strings with
  strcoll, and the server's locale decides that order.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local id = ARGV[1]
local row = KEYS[1]
local schedule = KEYS[2]
-- ARGV[3]'s bounds by mode: the snowflake horizon (at), ten years of ms (in).
local BOUND = { at = 3903090455551, ['in'] = 315576000000 }

-- Kind gate: the wire admits only JOB-namespaced ids.
local refused = gate_kind(id)
if refused then return refused end

-- Layout gate: both keys of one queue, the row this id's, the arguments exactly as above.
if #KEYS ~= 2 then
  return fail('EMQLAYOUT expected 2 keys: emq:{q}:job:<id> emq:{q}:schedule')
end
local queue
queue, refused = gate_queue(2, 'schedule')
if not queue then return refused end
refused = gate_id(id) or gate_key(1, 'emq:{' .. queue .. '}:job:' .. id)
if refused then return refused end
if #ARGV ~= 4 and #ARGV ~= 5 then
  return fail('EMQLAYOUT expected 4 or 5 arguments: id, at|in, value, [group,] payload')
end
local mode = ARGV[2]
if mode ~= 'at' and mode ~= 'in' then
  return fail('EMQLAYOUT ARGV[2] must be at or in')
end
local value = whole(ARGV[3], 0, BOUND[mode])
if value == nil then
  return fail('EMQLAYOUT ARGV[3] ' .. shown(ARGV[3]) .. ' must be a whole number from 0 to ' .. BOUND[mode] .. ' (' .. mode .. '), in decimal without a sign or leading zeros')
end
local group = nil
if #ARGV == 5 then
  group = ARGV[4]
  refused = gate_group(4, group)
  if refused then return refused end
end
local payload = ARGV[#ARGV]

-- Idempotency: an existing row is a duplicate; the id is the idempotency key.
if redis.call('EXISTS', row) == 1 then
  return 0
end

-- Type gate: the schedule set must be absent or a sorted set before we write.
refused = gate_types(schedule, 'zset')
if refused then return refused end

-- The run-at score: the caller's Unix ms, or the server's clock plus the delay.
local score = value
if mode == 'in' then
  local t = redis.call('TIME')
  score = t[1] * 1000 + math.floor(t[2] / 1000) + value
end

-- The record: one HSET, state scheduled; a group only when one was given.
if group then
  redis.call('HSET', row, 'state', 'scheduled', 'attempts', '0', 'payload', payload, 'group', group)
else
  redis.call('HSET', row, 'state', 'scheduled', 'attempts', '0', 'payload', payload)
end
redis.call('ZADD', schedule, score, id)
return 1
