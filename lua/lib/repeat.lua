--[[
  lib/repeat.lua: what the repeat scripts of ours share (lua/repeat-read.lua,
  lua/repeat-move.lua): the layout of one registration's keys, its read, and how a pause is
  written in its score. Included after lib/wire.lua and lib/gate.lua, whose helpers it uses.
  Every helper reads, none writes.

  The registration is the library's (EchoMQ.Repeat, LIBRARY.md c.6): the registry
  emq:{q}:repeat (ZSET, name scored by next run in Unix ms, which the library's Pump reads:
  due = ZRANGEBYSCORE -inf now) and the record emq:{q}:repeat:<name> (HASH: every_ms,
  template). A pause is written in the score alone, the one thing the Pump reads, so no key
  or field the library does not know is made:

  PAUSED              10^15 (Unix ms in the year 33658). A paused registration's score is
                      PAUSED + the next run it had, so the Pump never finds it due, and a
                      resume finds that next run again. Every real next run is below
                      PAUSED: the snowflake horizon is 3903090455551.
  gate_registration(argc)
                      the queue, when KEYS are emq:{q}:repeat and emq:{q}:repeat:<ARGV[1]>
                      of one queue, ARGV[1] a name of 1 to 255 of A-Z a-z 0-9 . _ -, and
                      there are argc arguments; else nil and the EMQLAYOUT reply. Then the
                      types: the WRONGTYPE reply unless KEYS[1] is a zset (or absent) and
                      KEYS[2] a hash (or absent).
  registration()      nil when the record KEYS[2] does not exist (the library's Pump cancels
                      a member without a record: it is gone); else its every_ms field and
                      the member's score, each a string, or false when absent.
  score_of(s)         a score string read as a whole number from 0 to 2 * PAUSED - 1 (a
                      paused one included), else nil: the library writes whole Unix ms.
]]

local PAUSED = 1000000000000000

local function gate_registration(argc)
  local q = #KEYS == 2 and #ARGV == argc and valid_name(ARGV[1], 255) and queue_of(KEYS[1], 'repeat')
  if not q or KEYS[2] ~= 'emq:{' .. q .. '}:repeat:' .. ARGV[1] then
    return nil, fail('EMQLAYOUT expected keys emq:{q}:repeat emq:{q}:repeat:<name> of one queue and ' .. argc .. ' arguments, the name first: 1 to 255 of A-Z a-z 0-9 . _ -')
  end
  local refused = gate_types(KEYS[1], 'zset', KEYS[2], 'hash')
  if refused then return nil, refused end
  return q
end

local function registration()
  if redis.call('EXISTS', KEYS[2]) == 0 then return nil end
  return redis.call('HGET', KEYS[2], 'every_ms'), redis.call('ZSCORE', KEYS[1], ARGV[1])
end

local function score_of(s)
  local n = s and tonumber(s)
  if n and n >= 0 and n < 2 * PAUSED and math.floor(n) == n then return n end
  return nil
end
