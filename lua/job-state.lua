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
if type(row) ~= 'string' or string.match(row, '^emq:{[^{}]+}:job:JOB') == nil then
  return redis.error_reply('EMQLAYOUT KEYS[1] must be emq:{<queue>}:job:<id>')
end
local kind = redis.call('TYPE', row)['ok']
if kind == 'none' then
  return false
end
if kind ~= 'hash' then
  return redis.error_reply('WRONGTYPE ' .. row .. ' holds a ' .. kind .. ', not a hash')
end
return redis.call('HMGET', row, 'state', 'attempts')
