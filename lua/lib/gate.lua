--[[
  lib/gate.lua: the gates the scripts share, each rule with its error text, written once:
  the text is contract (clients and tests match on it). Included after lib/wire.lua, whose
  helpers it uses. Each name is a local of the including script: a script must not define it
  again. Every helper reads, none writes: a script runs its gates before its first write. A
  gate answers nil when its input passes, else the error reply, which the script returns (a
  helper cannot return for it); a gate that finds a value (a queue) answers it, or nil and
  the error reply. Texts that differ between scripts (each says its own KEYS and ARGV) stay
  in the script; what they share is written here.

  gate_kind(id)         the kind gate: EMQKIND job id must be JOB-namespaced, unless is_job(id).
  queue_of(k, rest)     q when k is a string emq:{q}:<rest> and q keeps the queue-name rule
                        (valid_queue), else nil. rest is a pattern for the rest of k: a name
                        ('pending'), or 'job:.*' for any row. Braces cannot appear in q, so
                        the hash tag is exactly {q}.
  gate_queue(i, name)   queue_of(KEYS[i], name), or nil and 'EMQLAYOUT KEYS[<i>] must be
                        emq:{<queue>}:<name>, the queue 1 to 128 of A-Z a-z 0-9 . _ - (not emq)'.
  gate_keys(n, i, rest, what)
                        queue_of(KEYS[i], rest) when there are n keys, or nil and 'EMQLAYOUT
                        KEYS: <what> of one queue (1-128 of A-Za-z0-9._-, not emq)'.
  gate_id(id)           'EMQLAYOUT ARGV[1] <shown id> is not a branded id: JOB + 11 base62
                        characters, at most JOBAzL8n0Y58m7', unless branded(id).
  gate_group(i, g)      'EMQLAYOUT ARGV[<i>] <shown g> is not a group: a branded id, 3 capitals
                        and 11 base62 digits, at most AzL8n0Y58m7', unless branded(g).
  gate_key(i, want)     'EMQLAYOUT KEYS[<i>] must be <shown want>', unless KEYS[i] is want.
  gate_row(i, base, j)  'EMQLAYOUT KEYS[<i>] must be <shown base>job:<ARGV[<j>]>, a branded
                        id', unless ARGV[j] is branded and KEYS[i] is <base>job:<ARGV[j]>.
  gate_ceiling(glimit, gactive, group)
                        the group's ceiling and live count (HGET of its field in each), each a
                        string or false; or nil, nil and 'EMQLAYOUT the glimit or gactive field
                        of group <group> holds no number' when either holds no number (the
                        library compares them as numbers, and would fail after its writes).
  gate_types(k1, t1, k2, t2, ...)
                        the WRONGTYPE reply (wrong) for the first key ki that exists and holds
                        another type than ti, reading them in that order; else nil.
]]

local function gate_kind(id)
  if not is_job(id) then return fail('EMQKIND job id must be JOB-namespaced') end
end

local function queue_of(k, rest)
  local q = type(k) == 'string' and string.match(k, '^emq:{([^{}]+)}:' .. rest .. '$')
  if q and valid_queue(q) then return q end
  return nil
end

local function gate_queue(i, name)
  local q = queue_of(KEYS[i], name)
  if q then return q end
  return nil, fail('EMQLAYOUT KEYS[' .. i .. '] must be emq:{<queue>}:' .. name .. ', the queue 1 to 128 of A-Z a-z 0-9 . _ - (not emq)')
end

local function gate_keys(n, i, rest, what)
  local q = #KEYS == n and queue_of(KEYS[i], rest)
  if q then return q end
  return nil, fail('EMQLAYOUT KEYS: ' .. what .. ' of one queue (1-128 of A-Za-z0-9._-, not emq)')
end

local function gate_id(id)
  if not branded(id) then
    return fail('EMQLAYOUT ARGV[1] ' .. shown(id) .. ' is not a branded id: JOB + 11 base62 characters, at most JOBAzL8n0Y58m7')
  end
end

local function gate_group(i, g)
  if not branded(g) then
    return fail('EMQLAYOUT ARGV[' .. i .. '] ' .. shown(g) .. ' is not a group: a branded id, 3 capitals and 11 base62 digits, at most AzL8n0Y58m7')
  end
end

local function gate_key(i, want)
  if KEYS[i] ~= want then return fail('EMQLAYOUT KEYS[' .. i .. '] must be ' .. shown(want)) end
end

local function gate_row(i, base, j)
  if not branded(ARGV[j]) or KEYS[i] ~= base .. 'job:' .. ARGV[j] then
    return fail('EMQLAYOUT KEYS[' .. i .. '] must be ' .. shown(base) .. 'job:<ARGV[' .. j .. ']>, a branded id')
  end
end

local function gate_ceiling(glimit, gactive, group)
  local lim = redis.call('HGET', glimit, group)
  local act = redis.call('HGET', gactive, group)
  if (lim and tonumber(lim) == nil) or (act and tonumber(act) == nil) then
    return nil, nil, fail('EMQLAYOUT the glimit or gactive field of group ' .. group .. ' holds no number')
  end
  return lim, act
end

local function gate_types(...)
  local kt = { ... }
  for i = 1, select('#', ...), 2 do
    local k, want = kt[i], kt[i + 1]
    local t = typeof(k)
    if t ~= 'none' and t ~= want then return wrong(k, t, want) end
  end
end
