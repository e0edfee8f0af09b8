--[[
  @repeat-read: one registration of the library's repeatables (EchoMQ.Repeat), as a
  reader is shown it: its period, its score in the registry (the next run, or a pause:
  lib/repeat.lua), and on request its template. Reads only; never writes.

  KEYS[1]  emq:{<queue>}:repeat          the registry (ZSET: name scored by next run)
  KEYS[2]  emq:{<queue>}:repeat:<name>   the record (HASH: every_ms, template)

  ARGV[1]  <name>      the registration's name: 1 to 255 of A-Z a-z 0-9 . _ -
  ARGV[2]  <template>  1: the reply carries the template; 0: it does not

  Replies
    { every_ms, score }            the record's every_ms as stored, and the name's score
    { every_ms, score, template }  in the registry as ZSCORE answers it; either is false
                                   when absent (a record without a registry member is
                                   never fired by the Pump)
    nil                            no record (a registry member without one is gone: the
                                   library's Pump cancels it)

  Errors
    EMQLAYOUT ...  the keys are not emq:{q}:repeat and emq:{q}:repeat:<ARGV[1]> of one queue
                   (a queue-name rule's queue), the name breaks its rule, ARGV[2] is not 0
                   or 1, or there are not 2 arguments
    WRONGTYPE ...  KEYS[1] exists and is not a zset, or KEYS[2] exists and is not a hash

  Order: layout gate, type gates, EXISTS KEYS[2], HGET every_ms, ZSCORE, HGET template.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/repeat.lua

local queue, refused = gate_registration(2)
if not queue then return refused end
if ARGV[2] ~= '0' and ARGV[2] ~= '1' then
  return fail('EMQLAYOUT ARGV[2] must be 1 (with the template) or 0')
end

local every, score = registration()
if every == nil then return false end
if ARGV[2] == '1' then
  return { every, score, redis.call('HGET', KEYS[2], 'template') }
end
return { every, score }
