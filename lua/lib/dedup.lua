--[[
  lib/dedup.lua: the library's dedup key, as the three -once scripts read it. Included after
  lib/wire.lua, whose helpers it uses. Reads only: the caller writes after every gate.

  dedup_key_ok(k, base)   k is <base>de:<dedupId>, the dedup id 1-255 of A-Za-z0-9._-.
  gate_dedup(i, base)     'EMQLAYOUT KEYS[<i>] must be <shown base>de:<1-255 of A-Za-z0-9._->',
                          unless dedup_key_ok(KEYS[i], base).
  once_args_ok(compare, ttl)
                          compare is 0 or 1 and ttl a whole number of seconds, 1 to 9999999999.
                          Each script says its own ARGV in the error, so this is the rule only.
  parked(dedup, base, compare, payload, group)
                          the reply to a use of a dedup key that exists: {0, id}, id the job it
                          parks; or an error reply: EMQLAYOUT when the key holds no branded JOB
                          id; with compare '1', EMQCONFLICT when the parked row holds another
                          payload, or another group (group nil: a flat job, so any group is
                          another job), and WRONGTYPE when the parked row is not a hash. A
                          parked row that is gone is no conflict: the key still answers for its job.
  taken(row, id)          on a miss, the new id's row in the way: {2, id} when it is a hash, the
                          WRONGTYPE reply when it holds another type; nil when it is absent.
]]

local function dedup_key_ok(k, base)
  return string.sub(k, 1, #base + 3) == base .. 'de:' and valid_name(string.sub(k, #base + 4), 255)
end

local function gate_dedup(i, base)
  if not dedup_key_ok(KEYS[i], base) then
    return fail('EMQLAYOUT KEYS[' .. i .. '] must be ' .. shown(base) .. 'de:<1-255 of A-Za-z0-9._->')
  end
end

local function once_args_ok(compare, ttl)
  return (compare == '0' or compare == '1') and whole(ttl, 1, 9999999999) ~= nil
end

local function parked(dedup, base, compare, payload, group)
  local was = redis.call('GET', dedup)
  if not is_job(was) or not branded(was) then
    return fail('EMQLAYOUT ' .. shown(dedup) .. ' holds "' .. shown(was) .. '", not a branded JOB id')
  end
  if compare == '1' then
    local row = base .. 'job:' .. was
    local t = typeof(row)
    if t == 'hash' then
      local found = redis.call('HMGET', row, 'payload', 'group')
      if found[1] and found[1] ~= payload then return fail('EMQCONFLICT job ' .. was .. ' has another payload') end
      if (found[2] or nil) ~= group then return fail('EMQCONFLICT job ' .. was .. ' has another group') end
    elseif t ~= 'none' then
      return wrong(row, t, 'hash')
    end
  end
  return {0, was}
end

local function taken(row, id)
  local t = typeof(row)
  if t == 'hash' then return {2, id} end
  if t ~= 'none' then return wrong(row, t, 'hash') end
end
