--[[
  @repeat-page: one page of a queue's registered repeatables (EchoMQ.Repeat's registry), by
  ZSCAN: bounded work per call, and every name registered for the whole walk is met at
  least once (a name may be met twice, and one registered or cancelled during the walk
  may or may not be). The order is the registry's hash order, not the names' or the
  scores': the registry is scored by next run, so no index orders it by name. Reads only.

  KEYS[1]  emq:{<queue>}:repeat   the registry (ZSET: name scored by next run)

  ARGV[1]  <cursor>  0 to start, else the cursor the previous page answered: 1 to 20 digits,
                     at most 18446744073709551615 (ZSCAN's cursor is unsigned 64-bit; past
                     it ZSCAN raises an error, which this gate answers as EMQLAYOUT first)
  ARGV[2]  <count>   ZSCAN's COUNT, a whole number from 1 to 1000: the work asked of this
                     call. A registry small enough for the server's compact encoding
                     (zset-max-listpack-entries, 128 by default) is answered whole

  Replies
    { cursor, name, name, ... }  the next cursor ('0': the walk is done) and the names met

  Errors
    EMQLAYOUT ...  KEYS is not emq:{q}:repeat of one queue (a queue-name rule's queue), the
                   cursor or the count breaks its rule, or there are not 2 arguments
    WRONGTYPE ...  KEYS[1] exists and is not a zset

  Order: layout gate, type gate, ZSCAN.
]]

--#include lib/wire.lua
--#include lib/gate.lua

local queue, refused = gate_keys(1, 1, 'repeat', 'exactly emq:{q}:repeat')
if not queue then return refused end
-- digits of one length compare as numbers: a 20-digit cursor past 2^64 - 1 is no cursor
if #ARGV ~= 2 or not string.match(ARGV[1], '^[0-9]+$') or #ARGV[1] > 20 or (#ARGV[1] == 20 and ARGV[1] > '18446744073709551615')
  or whole(ARGV[2], 1, 1000) == nil then
  return fail('EMQLAYOUT expected 2 arguments: a cursor (0, or 1 to 20 digits a page answered) and a count from 1 to 1000')
end
refused = gate_types(KEYS[1], 'zset')
if refused then return refused end

local scanned = redis.call('ZSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local out = { scanned[1] }
-- ZSCAN answers member, score, member, score: the names are the odd ones
for i = 1, #scanned[2], 2 do
  out[#out + 1] = scanned[2][i]
end
return out
