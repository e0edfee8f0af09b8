// The EchoMQ library's consumer-side scripts, restated as seeds from the public corpus, byte
// for byte as the library sends them (its Elixir heredocs, indentation stripped, each ending in
// a newline; `'\\0'` in the heredoc is Lua's `'\0'`): EchoMQ.Jobs 54494128534 (@claim,
// @complete, @retry, @promote, @reap), EchoMQ.Lanes 54627295966 (@gclaim), EchoMQ.Pump
// 54721988820 (@flow_deliver). Not our code: the soak's consumer runs these and nothing of ours.

// The group branch @complete and @retry share, word for word, after the row named by `row`.
const groupRelease = (row: string) => `local g = redis.call('HGET', ${row}, 'group')
local was_active = redis.call('ZREM', KEYS[1], ARGV[1])
if g then
  local lane = p .. 'g:' .. g .. ':pending'
  if was_active == 1 then
    local act = redis.call('HINCRBY', p .. 'gactive', g, -1)
    if act <= 0 then redis.call('HDEL', p .. 'gactive', g) end
    if redis.call('SISMEMBER', p .. 'paused', g) == 0 and redis.call('ZCARD', lane) > 0 then
      local lim = redis.call('HGET', p .. 'glimit', g)
      if (not lim or act < tonumber(lim)) and not redis.call('LPOS', p .. 'ring', g) then
        redis.call('RPUSH', p .. 'ring', g)
        redis.call('LPUSH', p .. 'wake', '1')
        redis.call('LTRIM', p .. 'wake', 0, 63)
      end
    end
  else
    redis.call('ZREM', lane, ARGV[1])
    if redis.call('ZCARD', lane) == 0 then redis.call('LREM', p .. 'ring', 0, g) end
  end
else
  if was_active == 0 then redis.call('ZREM', p .. 'pending', ARGV[1]) end
end
`;

export const CLAIM = `local popped = redis.call('ZPOPMIN', KEYS[1])
if #popped == 0 then return {} end
local id = popped[1]
local jk = ARGV[1] .. id
local att = redis.call('HINCRBY', jk, 'attempts', 1)
redis.call('HSET', jk, 'state', 'active')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
return {id, redis.call('HGET', jk, 'payload'), att}
`;

export const GCLAIM = `local g = redis.call('LMOVE', KEYS[1], KEYS[1], 'LEFT', 'RIGHT')
if not g then return {} end
local lane = ARGV[1] .. 'g:' .. g .. ':pending'
local popped = redis.call('ZPOPMIN', lane)
if #popped == 0 then
  redis.call('LREM', KEYS[1], 0, g)
  return {}
end
local id = popped[1]
local jk = ARGV[1] .. 'job:' .. id
local att = redis.call('HINCRBY', jk, 'attempts', 1)
redis.call('HSET', jk, 'state', 'active')
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
local act = redis.call('HINCRBY', ARGV[1] .. 'gactive', g, 1)
local lim = redis.call('HGET', ARGV[1] .. 'glimit', g)
if lim and act >= tonumber(lim) then
  redis.call('LREM', KEYS[1], 0, g)
elseif redis.call('ZCARD', lane) == 0 then
  redis.call('LREM', KEYS[1], 0, g)
end
return {id, redis.call('HGET', jk, 'payload'), att, g}
`;

export const COMPLETE = `local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then return 0 end
if att ~= ARGV[2] then
  return redis.error_reply('EMQSTALE complete token mismatch')
end
local p = ARGV[3]
${groupRelease('KEYS[2]')}if ARGV[6] == 'xq' then
  if was_active == 1 then
    redis.call('RPUSH', KEYS[3], ARGV[7] .. '\\0' .. ARGV[4] .. '\\0' .. ARGV[1] .. '\\0' .. ARGV[5])
  end
  redis.call('DEL', KEYS[2])
  redis.call('HINCRBY', p .. 'metrics:completed', 'count', 1)
  return 1
end
if KEYS[3] and was_active == 1 then
  local left = redis.call('DECR', KEYS[3])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
  if left <= 0 then
    redis.call('ZADD', p .. 'pending', 0, ARGV[4])
    redis.call('HSET', KEYS[5], 'state', 'pending')
  end
end
redis.call('DEL', KEYS[2])
redis.call('HINCRBY', p .. 'metrics:completed', 'count', 1)
return 1
`;

export const RETRY = `local att = redis.call('HGET', KEYS[4], 'attempts')
if not att then return redis.error_reply('EMQSTALE job gone') end
if att ~= ARGV[2] then
  return redis.error_reply('EMQSTALE retry token mismatch')
end
local p = ARGV[6]
${groupRelease('KEYS[4]')}redis.call('HSET', KEYS[4], 'last_error', ARGV[5])
if tonumber(att) >= tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[4], 'state', 'dead')
  redis.call('ZADD', KEYS[3], 0, ARGV[1])
  redis.call('HINCRBY', p .. 'metrics:failed', 'count', 1)
  if ARGV[7] == 'sq:fp' then
    redis.call('HSET', KEYS[5], ARGV[1], ARGV[5])
    redis.call('HSET', KEYS[8], 'state', 'dead')
    redis.call('ZADD', p .. 'dead', 0, ARGV[8])
    redis.call('ZREM', p .. 'pending', ARGV[8])
  elseif ARGV[7] == 'sq:id' then
    redis.call('HSET', KEYS[6], ARGV[1], ARGV[5])
    local left = redis.call('DECR', KEYS[7])
    if left <= 0 then
      redis.call('ZADD', p .. 'pending', 0, ARGV[8])
      redis.call('HSET', KEYS[8], 'state', 'pending')
    end
  elseif ARGV[7] == 'xq:fp' then
    redis.call('RPUSH', KEYS[5], '' .. '\\0' .. 'fail' .. '\\0' .. ARGV[8] .. '\\0' .. ARGV[9] .. '\\0' .. ARGV[1] .. '\\0' .. 'fp' .. '\\0' .. ARGV[5])
  elseif ARGV[7] == 'xq:id' then
    redis.call('RPUSH', KEYS[5], '' .. '\\0' .. 'fail' .. '\\0' .. ARGV[8] .. '\\0' .. ARGV[9] .. '\\0' .. ARGV[1] .. '\\0' .. 'id' .. '\\0' .. ARGV[5])
  end
  return 'dead'
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('HSET', KEYS[4], 'state', 'scheduled')
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 'scheduled'
`;

export const PROMOTE = `local p = ARGV[1]
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local jk = p .. 'job:' .. id
  local g = redis.call('HGET', jk, 'group')
  if g then
    local lane = p .. 'g:' .. g .. ':pending'
    redis.call('ZADD', lane, 0, id)
    if redis.call('SISMEMBER', p .. 'paused', g) == 0 then
      local lim = redis.call('HGET', p .. 'glimit', g)
      local act = tonumber(redis.call('HGET', p .. 'gactive', g) or '0')
      if (not lim or act < tonumber(lim)) and not redis.call('LPOS', p .. 'ring', g) then
        redis.call('RPUSH', p .. 'ring', g)
        redis.call('LPUSH', p .. 'wake', '1')
        redis.call('LTRIM', p .. 'wake', 0, 63)
      end
    end
  else
    redis.call('ZADD', KEYS[2], 0, id)
  end
  redis.call('HSET', jk, 'state', 'pending')
end
return #due
`;

export const REAP = `local p = ARGV[1]
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local exp = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(exp) do
  redis.call('ZREM', KEYS[1], id)
  local jk = p .. 'job:' .. id
  local g = redis.call('HGET', jk, 'group')
  if g then
    local act = redis.call('HINCRBY', p .. 'gactive', g, -1)
    if act <= 0 then redis.call('HDEL', p .. 'gactive', g) end
    local lane = p .. 'g:' .. g .. ':pending'
    redis.call('ZADD', lane, 0, id)
    if redis.call('SISMEMBER', p .. 'paused', g) == 0 then
      local lim = redis.call('HGET', p .. 'glimit', g)
      if (not lim or act < tonumber(lim)) and not redis.call('LPOS', p .. 'ring', g) then
        redis.call('RPUSH', p .. 'ring', g)
        redis.call('LPUSH', p .. 'wake', '1')
        redis.call('LTRIM', p .. 'wake', 0, 63)
      end
    end
  else
    redis.call('ZADD', KEYS[2], 0, id)
  end
  redis.call('HSET', jk, 'state', 'pending')
end
return #exp
`;

export const FLOW_DELIVER = `if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  local left = redis.call('DECR', KEYS[1])
  if left <= 0 then
    redis.call('ZADD', ARGV[4] .. 'pending', 0, ARGV[3])
    redis.call('HSET', KEYS[3], 'state', 'pending')
  end
end
return 1
`;
