--[[
  lib/group.lua: one group's view, read alike by @group-set (before its writes, as a gate,
  and after them, as its reply), @group-read and @queue-info. Included after lib/wire.lua,
  whose helpers it uses. Reads only.

  group_view(base, g, ringed)
      { g, pending, active, limit, weight, paused, ringed } for group g of the queue whose
      keys start with base (emq:{q}:): pending the ZCARD of its lane base..'g:'..g..':pending';
      active its gactive field as a number (0 when unset); limit and weight its glimit and
      gweight fields as stored ('' when unset: no number is ''); paused 1 when the paused set
      holds g, else 0; ringed 1 when the argument ringed is true, else 0 (the caller knows
      the ring: one LPOS for one group, one LRANGE for a page of them). Or nil and the error
      reply: WRONGTYPE when the lane exists and is no sorted set; EMQLAYOUT when the glimit,
      gactive or gweight field of g holds no number (the library reads each with tonumber
      and would fail on it, or after its writes). The keys ring, paused, glimit, gactive and
      gweight are the caller's to type-gate first.
]]

local function group_view(base, g, ringed)
  local lane = base .. 'g:' .. g .. ':pending'
  local t = typeof(lane)
  if t ~= 'none' and t ~= 'zset' then return nil, wrong(lane, t, 'zset') end
  local lim = redis.call('HGET', base .. 'glimit', g)
  local act = redis.call('HGET', base .. 'gactive', g)
  local w = redis.call('HGET', base .. 'gweight', g)
  if (lim and tonumber(lim) == nil) or (act and tonumber(act) == nil) or (w and tonumber(w) == nil) then
    return nil, fail('EMQLAYOUT the glimit, gactive or gweight field of group ' .. shown(g) .. ' holds no number')
  end
  local paused = redis.call('SISMEMBER', base .. 'paused', g)
  return { g, redis.call('ZCARD', lane), tonumber(act or '0'), lim or '', w or '', paused, ringed and 1 or 0 }
end
