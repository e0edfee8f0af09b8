--[[
  lib/dedup.lua: the library's dedup key, as the three -once scripts read it. Included after
  lib/wire.lua, whose helpers it uses. Reads only: the caller writes after every gate.

  dedup_key_ok(k, base)   k is <base>de:<dedupId>, the dedup id 1-255 of A-Za-z0-9._-.
  parked(dedup, base, compare, payload, group)
                          the job a dedup key parks, for a reuse of that key: returns its id
                          (the caller answers {0, id}), or nil and an error reply:
                          EMQLAYOUT when the key holds no branded JOB id; with compare '1',
                          EMQCONFLICT when the parked row holds another payload, or another
                          group (group nil: a flat job, so any group is another job), and
                          WRONGTYPE when the parked row is not a hash. A parked row that is
                          gone is no conflict: the key still answers for its job.
]]

local function dedup_key_ok(k, base)
  return string.sub(k, 1, #base + 3) == base .. 'de:' and valid_name(string.sub(k, #base + 4), 255)
end

local function parked(dedup, base, compare, payload, group)
  local was = redis.call('GET', dedup)
  if not is_job(was) or not branded(was) then
    return nil, fail('EMQLAYOUT ' .. shown(dedup) .. ' holds "' .. shown(was) .. '", not a branded JOB id')
  end
  if compare == '1' then
    local row = base .. 'job:' .. was
    local t = typeof(row)
    if t == 'hash' then
      local found = redis.call('HMGET', row, 'payload', 'group')
      if found[1] and found[1] ~= payload then return nil, fail('EMQCONFLICT job ' .. was .. ' has another payload') end
      if (found[2] or nil) ~= group then return nil, fail('EMQCONFLICT job ' .. was .. ' has another group') end
    elseif t ~= 'none' then
      return nil, wrong(row, t, 'hash')
    end
  end
  return was
end
