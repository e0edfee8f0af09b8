--[[
  @repeat-move: pause, resume or run now one of the library's repeatables (EchoMQ.Repeat),
  by moving its score in the registry and writing nothing else: the score is all the
  library's Pump reads to find a registration due (ZRANGEBYSCORE repeat -inf now), so a
  paused one is scored where the Pump never looks (lib/repeat.lua: PAUSED + its next run).

  Capability: control

  KEYS[1]  emq:{<queue>}:repeat          the registry (ZSET: name scored by next run)
  KEYS[2]  emq:{<queue>}:repeat:<name>   the record (HASH: every_ms, template)

  ARGV[1]  <name>  the registration's name: 1 to 255 of A-Z a-z 0-9 . _ -
  ARGV[2]  <verb>  pause, resume or run-now
  ARGV[3]  <now>   the caller's clock, Unix ms, a whole number from 0 to 3903090455551: the
                   clock the library prices repeat scores on (first_at, and the Pump's
                   now + every_ms) is its host's, not the server's TIME

  What each verb writes (ZADD KEYS[1] <score> ARGV[1], or nothing)
    pause    a next run s (below PAUSED) becomes PAUSED + s; a record without a registry
             member is scored PAUSED + now; a paused one is left as it is
    resume   a paused one, PAUSED + s, is scored at its next period: s when s >= now, else
             the first s + k * every_ms (k whole) at or after now; one not paused, or
             without a member, is left as it is
    run-now  now, paused or not (the Pump's advance then scores it now + every_ms, so a
             paused one is resumed by it: the score cannot say both "due" and "paused")

  Replies
    { every_ms, score }  the record's every_ms and the name's score after the verb, as
                         @repeat-read answers them
    nil                  no record: nothing written (a member without one is gone: the
                         library's Pump cancels it)

  Errors (nothing written)
    EMQLAYOUT ...  the keys are not emq:{q}:repeat and emq:{q}:repeat:<ARGV[1]> of one queue,
                   the name breaks its rule, the verb is not one of the three, now is not
                   a whole number within its bounds, there are not 3 arguments; the score
                   is not a whole number from 0 to 2 * PAUSED - 1; on resume, every_ms is
                   not a whole number from 1 to 999999999999999
    WRONGTYPE ...  KEYS[1] exists and is not a zset, or KEYS[2] exists and is not a hash

  Order: layout gate, type gates, EXISTS KEYS[2], HGET every_ms, ZSCORE, the score's and
  every_ms's gates, ZADD, ZSCORE. A pause that lands while a Pump is firing this
  registration (after its due read, before its advance) is undone by the advance's ZADD:
  the Pump writes now + every_ms whatever the score is then.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/repeat.lua

local queue, refused = gate_registration(3)
if not queue then return refused end
local verb = ARGV[2]
if verb ~= 'pause' and verb ~= 'resume' and verb ~= 'run-now' then
  return fail('EMQLAYOUT ARGV[2] must be pause, resume or run-now')
end
local now = whole(ARGV[3], 0, 3903090455551)
if now == nil then
  return fail('EMQLAYOUT ARGV[3] ' .. shown(ARGV[3]) .. ' must be a whole number of Unix ms from 0 to 3903090455551, in decimal without a sign or leading zeros')
end

local every, held = registration()
if every == nil then return false end
local score = nil
if held then
  score = score_of(held)
  if score == nil then
    return fail('EMQLAYOUT the score of ' .. shown(ARGV[1]) .. ' in ' .. shown(KEYS[1]) .. ' is ' .. shown(held) .. ', not a whole number of ms from 0 to ' .. (2 * PAUSED - 1))
  end
end

local to = nil
if verb == 'run-now' then
  to = now
elseif verb == 'pause' then
  if score == nil then
    to = PAUSED + now
  elseif score < PAUSED then
    to = PAUSED + score
  end
elseif score ~= nil and score >= PAUSED then
  local period = whole(every, 1, 999999999999999)
  if period == nil then
    return fail('EMQLAYOUT the every_ms of ' .. shown(KEYS[2]) .. ' is ' .. shown(every or '') .. ', not a whole number of ms from 1 to 999999999999999')
  end
  local s = score - PAUSED
  to = s
  if s < now then
    -- the grid s + k * period at or after now; fmod is exact on whole numbers below 2^53
    local r = math.fmod(now - s, period)
    to = r == 0 and now or now - r + period
  end
end

if to ~= nil then
  redis.call('ZADD', KEYS[1], to, ARGV[1])
  held = redis.call('ZSCORE', KEYS[1], ARGV[1])
end
return { every, held }
