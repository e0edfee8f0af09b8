--[[
  @queue-pause: pause or resume claiming on a whole queue, as the EchoMQ library's
  Admin.pause and Admin.resume (its @queue_pause and @queue_resume) write it: the field
  paused of the queue's meta hash, set to '1' or deleted. The library's claims (Jobs.claim,
  Lanes.claim, wclaim, bclaim) read that field before their script and answer empty while it
  is set; admission never reads it, so a paused queue still takes jobs, and no set, lane or
  ring is touched (the backlog waits). A script and not a plain HSET so that a gateway can
  admit it, by its SHA-1, to a control scope only.

  Capability: control
  (it changes what workers will do: the gateway runs it for a control token only)

  KEYS[1]  emq:{<queue>}:meta   the queue's settings (HASH; paused, and fields of others)

  ARGV[1]  pause | resume       exactly one argument, compared as ASCII

  Replies
    1  done, as the library's (idempotent: pausing a paused queue writes the same '1' again;
       resuming a queue that is not paused deletes nothing)

  Errors (nothing written)
    EMQLAYOUT ...  KEYS[1] is not emq:{q}:meta of a queue-name rule's queue (1 to 128 of
                   A-Z a-z 0-9 . _ -, not emq), or the arguments are not exactly pause or resume
    WRONGTYPE ...  KEYS[1] exists and is not a hash

  Order: layout gate, argument gate, type gate, then HSET meta paused 1 (pause) or
  HDEL meta paused (resume).
]]

--#include lib/wire.lua
--#include lib/gate.lua

-- Layout gate: one key, the meta hash of one queue.
local _, refused = gate_keys(1, 1, 'meta', 'exactly emq:{q}:meta')
if refused then return refused end
local verb = ARGV[1]
if #ARGV ~= 1 or (verb ~= 'pause' and verb ~= 'resume') then
  return fail('EMQLAYOUT expected 1 argument: pause or resume')
end

-- Type gate: meta is a hash, or absent.
refused = gate_types(KEYS[1], 'hash')
if refused then return refused end

-- The library's writes, byte for byte: the value is the string 1.
if verb == 'pause' then
  redis.call('HSET', KEYS[1], 'paused', '1')
else
  redis.call('HDEL', KEYS[1], 'paused')
end
return 1
