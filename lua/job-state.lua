--[[
  @job-state: a producer's read-back of one job (did it land, where is it now).
  Reads only; never writes.

  KEYS[1]  emq:{<queue>}:job:<id>   the job's row (HASH)

  ARGV[1]  none: the script takes no arguments

  Replies
    nil                    no row at KEYS[1]
    { state, attempts }    the row's state and attempts fields, as stored

  Errors
    EMQLAYOUT ...  KEYS[1] is not emq:{q}:job:JOB...
    WRONGTYPE ...  KEYS[1] exists and is not a hash
]]

local row = KEYS[1]

-- Keys and ids echoed in an error, every byte outside printable ASCII as \xHH: an error
-- reply must be UTF-8 text, or a client may fail to parse it (glide drops its connection,
-- and with it every request in flight on that connection).
local function shown(s)
  return (string.gsub(s, '[^ -~]', function(c) return string.format('\\x%02x', string.byte(c)) end))
end

if type(row) ~= 'string' or string.match(row, '^emq:{[^{}]+}:job:JOB') == nil then
  return redis.error_reply('EMQLAYOUT KEYS[1] must be emq:{<queue>}:job:<id>')
end
local kind = redis.call('TYPE', row)['ok']
if kind == 'none' then
  return false
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE ' .. shown(row) .. ' holds a ' .. kind .. ', not a hash')
end
return redis.call('HMGET', row, 'state', 'attempts')
