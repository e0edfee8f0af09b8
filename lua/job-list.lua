--[[
  @job-list: one page of a queue's jobs in one state, for a reader (a console, a CLI): each
  job's id, attempts, group, due time (scheduled), last error (dead) and payload length,
  never the payload. Reads only; never writes: a read script.

  Orders, as the EchoMQ library browses them:
    pending (and a group's lane)  newest first: ZRANGE <set> + - BYLEX REV, the library's
                                  browse order (its members all score 0, and a branded id's
                                  bytes order its mint)
    schedule                      soonest first: by score (due time, Unix ms), ties by id
    dead                          newest first: by score descending, ties by id descending
                                  (the library's @retry scores a dead job 0, so this is its
                                  id's order, newest first)

  Paging is by key, not by offset, so a job that leaves the set between pages moves no
  other job across a page's edge: a page starts after the cursor's place (its id for
  pending; its score and id otherwise), found with ZCOUNT and a binary search over the
  cursor's score's ties (ZRANGE by rank, O(log n) each), whether or not the cursor's job is
  still in the set. Work per call: that search, one ZRANGE of limit + 1, and three reads
  per listed job (TYPE, HMGET, HSTRLEN of its row): bounded by the page, not the set.

  KEYS[1]  emq:{<queue>}:pending, emq:{<queue>}:g:<group>:pending, emq:{<queue>}:schedule
           or emq:{<queue>}:dead (ZSET): the set listed
  Each listed job's row, emq:{<queue>}:job:<id> (HASH), is built from the queue's prefix,
  as the library's @claim builds it from its ARGV: a row's name is known only once the set
  is read, and it has the queue's hash tag, so it is in KEYS[1]'s slot.

  ARGV[1]  <cursor>  '' (the first page), or the cursor the previous page answered: a
                     branded id (pending, a lane), or <score>:<id> (schedule, dead), the
                     score a whole number of at most 15 digits
  ARGV[2]  <limit>   1 to 100 in canonical decimal: the most jobs a page holds

  Replies
    { next, { id, attempts, group, score, last_error, bytes }, ... }
       next: the cursor of the page after this one, '' when none follows; per job: its id,
       the row's attempts ('0' when unset or no row), the row's group (false when unset),
       its score as the server formats it (schedule and dead; false for pending), the
       row's last_error (dead only; false when unset), and HSTRLEN of its payload (0 when
       there is no row)

  Errors
    EMQLAYOUT ...  KEYS is not one of the four sets of one queue (a queue-name rule's
                   queue; a lane's group a branded id); not exactly 2 arguments; the cursor
                   is not '' or of its set's form; the limit is not 1 to 100
    WRONGTYPE ...  KEYS[1] exists and is not a zset, or a listed job's row exists and is
                   not a hash

  Order: layout gate, argument gate, type gate of KEYS[1], the cursor's place, the page's
  ZRANGE, then each listed job's row (type gate, HMGET, HSTRLEN).
]]

--#include lib/wire.lua
--#include lib/gate.lua

-- Layout gate: one set of one queue; its kind picks the order.
local set = KEYS[1]
local queue, order = nil, nil
if #KEYS == 1 then
  queue = queue_of(set, 'pending') or queue_of(set, 'g:[A-Z][A-Z][A-Z][0-9A-Za-z]+:pending')
  if queue then
    order = 'lex'
    local g = string.match(set, '}:g:([^:]+):pending$')
    if g and not branded(g) then queue = nil end
  else
    queue = queue_of(set, 'schedule')
    if queue then
      order = 'asc'
    else
      queue = queue_of(set, 'dead')
      order = 'desc'
    end
  end
end
if not queue then
  return fail('EMQLAYOUT KEYS: exactly one of emq:{q}:pending, emq:{q}:g:<group>:pending, emq:{q}:schedule, emq:{q}:dead of one queue (1-128 of A-Za-z0-9._-, not emq)')
end
if #ARGV ~= 2 then return fail('EMQLAYOUT expected 2 arguments: cursor (empty or the previous page\'s), limit') end
local cursor = ARGV[1]
local score, after = nil, nil -- score: its digits, as sent (Lua's tostring would write 1.7647e+12)
if cursor ~= '' then
  if order == 'lex' then
    after = branded(cursor) and cursor or nil
  else
    local s, id = string.match(cursor, '^([0-9]+):(.+)$')
    score = s and whole(s, 0, 999999999999999) and s
    after = score and branded(id) and id or nil
  end
  if not after then
    return fail('EMQLAYOUT ARGV[1] ' .. shown(cursor) .. ' is not a cursor of this set: empty, or what the previous page answered')
  end
end
local limit = whole(ARGV[2], 1, 100)
if not limit then return fail('EMQLAYOUT ARGV[2] ' .. shown(ARGV[2]) .. ' is not a limit: 1 to 100 in decimal') end

local refused = gate_types(set, 'zset')
if refused then return refused end

-- Bytes compared one by one, never with Lua's < on strings (the locale's strcoll).
local function above(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- The page: limit + 1 members (the one past the page says another page follows).
local members = {}
local scores = {}
if order == 'lex' then
  local from = after and ('(' .. after) or '+'
  members = redis.call('ZRANGE', set, from, '-', 'BYLEX', 'REV', 'LIMIT', 0, limit + 1)
else
  local start = 0
  if after then
    -- the first rank (ascending) past the cursor's place among its score's ties: above it
    -- (asc: the page starts there), or at or above it (desc: the page starts just below)
    local lo = redis.call('ZCOUNT', set, '-inf', '(' .. score)
    local hi = redis.call('ZCOUNT', set, '-inf', score)
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      local m = redis.call('ZRANGE', set, mid, mid)[1]
      local past = m and (above(m, after) or (order == 'desc' and m == after))
      if past then hi = mid else lo = mid + 1 end
    end
    start = order == 'asc' and lo or (redis.call('ZCARD', set) - lo)
  end
  local got
  if order == 'asc' then
    got = redis.call('ZRANGE', set, start, start + limit, 'WITHSCORES')
  else
    got = redis.call('ZRANGE', set, start, start + limit, 'REV', 'WITHSCORES')
  end
  for i = 1, #got, 2 do
    members[#members + 1] = got[i]
    scores[#members] = got[i + 1]
  end
end

local more = ''
if #members > limit then
  members[#members] = nil
  local last = members[#members]
  more = order == 'lex' and last or (scores[#members] .. ':' .. last)
end

local base = 'emq:{' .. queue .. '}:'
local out = { more }
for i, id in ipairs(members) do
  local row = base .. 'job:' .. id
  local t = typeof(row)
  local attempts, group, last_error, bytes = '0', false, false, 0
  if t == 'hash' then
    local f = redis.call('HMGET', row, 'attempts', 'group', 'last_error')
    attempts = f[1] or '0'
    group = f[2] or false
    last_error = order == 'desc' and f[3] or false
    bytes = redis.call('HSTRLEN', row, 'payload')
  elseif t ~= 'none' then
    return wrong(row, t, 'hash')
  end
  out[i + 1] = { id, attempts, group, scores[i] or false, last_error, bytes }
end
return out
