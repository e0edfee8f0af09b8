--[[
  @queue-info: a queue at a glance: whether it is paused, its counts as the EchoMQ library's
  Metrics.get_counts (@counts) reads them, and a page of its groups (lanes), each as
  @group-read shows it. Reads only; never writes: a read script. An unknown queue reads as
  unpaused, all zeros, no groups.

  Counts: ZCARD of pending, active, schedule and dead; completed and failed the count field
  of metrics:completed and metrics:failed as a number (0 when unset), as @counts.

  Groups: every group named by the ring, the paused set, or a field of glimit, gactive or
  gweight: the groups with a lane on the ring, a pause, a ceiling, jobs claimed or a weight.
  That finds every lane that holds jobs, with declared keys only, on a wire that the
  library's own verbs made. Why: a lane gets jobs from @genqueue, @promote, @reap and
  @greassign, each of which puts its group on the ring unless it is paused (the paused set
  names it) or at its ceiling (glimit names it). A group leaves the ring only by @gclaim
  (its lane empty, or at its ceiling: glimit names it), @gpause (paused names it), @glimit
  at or under the live count (glimit names it), @complete or @retry of a job still in its
  lane, and @greassign (both only when the lane is then empty), or @gdrain (which empties
  the lane). A pause or ceiling ends only through @gresume or @glimit, which put a group
  with work back on the ring. So a lane with jobs is on the ring, or its group is paused or
  has a ceiling. The library's Dashboard looks only at gactive: it misses groups whose jobs
  all wait. Found outside that: Admin.obliterate drains the lanes of the groups on the ring
  or paused, then deletes glimit and gactive, so a lane at its ceiling (off the ring, not
  paused) keeps its jobs and is named by nothing; neither the library's claim nor this read
  can find it without a keyspace scan, which no script may make (its keys are not declared,
  and its work is not bounded). @group-read still shows such a group by its name.

  A name that is not a branded id names no lane (the library's lane_key! refuses it) and is
  left out. The groups are ordered by their bytes (as ASCII, never the locale's strcoll),
  and a page is the first ARGV[2] of them after the cursor. Its work is not bounded by the
  page: every call reads every name (LRANGE ring, SMEMBERS paused, HKEYS of the three hashes)
  and keeps the page's names in a heap; only the per-group reads (a ZCARD, four field reads)
  are made for the page alone. Measured on a loaded 2-core machine (each group named twice,
  server time): 1,000 groups 3 to 10 ms, 10,000 groups 20 to 50 ms, 100,000 groups 0.4 to
  0.8 s, of which reading the names alone is half or more. No order by name can be paged
  without that read: the wire keeps no index of groups.

  KEYS[1]   emq:{<queue>}:meta                the queue's settings (HASH; paused)
  KEYS[2]   emq:{<queue>}:pending             (ZSET)
  KEYS[3]   emq:{<queue>}:active              (ZSET)
  KEYS[4]   emq:{<queue>}:schedule            (ZSET)
  KEYS[5]   emq:{<queue>}:dead                (ZSET)
  KEYS[6]   emq:{<queue>}:metrics:completed   (HASH; count)
  KEYS[7]   emq:{<queue>}:metrics:failed      (HASH; count)
  KEYS[8]   emq:{<queue>}:ring                (LIST)
  KEYS[9]   emq:{<queue>}:paused              (SET of groups)
  KEYS[10]  emq:{<queue>}:glimit              (HASH group -> ceiling)
  KEYS[11]  emq:{<queue>}:gactive             (HASH group -> claimed now)
  KEYS[12]  emq:{<queue>}:gweight             (HASH group -> weight)
  A page's lanes, emq:{<queue>}:g:<group>:pending, are built from the queue's prefix, as
  the library's @gclaim builds them: a group's name is known only once it is read, and a
  lane's key has the queue's hash tag, so it is in the slot of the keys above.

  ARGV[1]  <cursor>  '' (the first page) or a branded id: the groups after it
  ARGV[2]  <count>   1 to 1000 in canonical decimal: the most groups a page holds

  Replies
    { { paused, pending, active, scheduled, dead, completed, failed }, next, { view, ... } }
       paused 1 when meta's paused field is set, else 0; next the last group of this page
       when more follow, else ''; each view { group, pending, active, limit, weight, paused,
       ringed } as @group-read's

  Errors
    EMQLAYOUT ...  the keys are not the twelve above for one queue (a queue-name rule's
                   queue); not exactly 2 arguments, the cursor is not '' or a branded id, the
                   count not 1 to 1000; a count field of the metrics holds no number; or a
                   group on the page has a glimit, gactive or gweight field that holds no number
    WRONGTYPE ...  a key (or a lane on the page) exists and holds another type

  Order: layout gate, argument gate, type gates (KEYS[1] to KEYS[12]), the counts, the
  names (ring, paused, glimit, gactive, gweight), the page's views.
]]

--#include lib/wire.lua
--#include lib/gate.lua
--#include lib/group.lua

local names = { 'meta', 'pending', 'active', 'schedule', 'dead', 'metrics:completed', 'metrics:failed', 'ring', 'paused', 'glimit', 'gactive', 'gweight' }
local types = { 'hash', 'zset', 'zset', 'zset', 'zset', 'hash', 'hash', 'list', 'set', 'hash', 'hash', 'hash' }

-- Layout gate: the twelve keys of one queue, in order.
local queue, refused = gate_keys(12, 1, 'meta', 'emq:{q}: meta pending active schedule dead metrics:completed metrics:failed ring paused glimit gactive gweight')
if not queue then return refused end
local base = 'emq:{' .. queue .. '}:'
for i = 2, 12 do
  refused = gate_key(i, base .. names[i])
  if refused then return refused end
end
local cursor = ARGV[1]
if #ARGV ~= 2 then return fail('EMQLAYOUT expected 2 arguments: cursor (empty or a group), count') end
if cursor ~= '' and not branded(cursor) then
  return fail('EMQLAYOUT ARGV[1] ' .. shown(cursor) .. ' is not a cursor: empty, or the last group of a page')
end
local count = whole(ARGV[2], 1, 1000)
if not count then return fail('EMQLAYOUT ARGV[2] ' .. shown(ARGV[2]) .. ' is not a count: 1 to 1000 in decimal') end

-- Type gates, before any is read.
for i = 1, 12 do
  local t = typeof(KEYS[i])
  if t ~= 'none' and t ~= types[i] then return wrong(KEYS[i], t, types[i]) end
end

-- The counts, as @counts reads them.
local counts = { redis.call('HEXISTS', KEYS[1], 'paused') }
for i = 2, 5 do counts[i] = redis.call('ZCARD', KEYS[i]) end
for i = 6, 7 do
  local n = tonumber(redis.call('HGET', KEYS[i], 'count') or '0')
  if n == nil then return fail('EMQLAYOUT the count field of ' .. shown(KEYS[i]) .. ' holds no number') end
  counts[i] = n
end

-- A name's place in byte order as two numbers, bytes 1-7 and 8-14, 7 bits each (a branded
-- id is 14 ASCII bytes): exact below 2^53, and compared as numbers, never with Lua's < on
-- strings (the locale's strcoll). One table per candidate; the page is chosen by a max-heap
-- of the count smallest, so the work per name is a few comparisons, not a sort of them all.
local function place(g)
  local a1, a2, a3, a4, a5, a6, a7 = string.byte(g, 1, 7)
  local b1, b2, b3, b4, b5, b6, b7 = string.byte(g, 8, 14)
  local hi = ((((((a1 * 128 + a2) * 128 + a3) * 128 + a4) * 128 + a5) * 128 + a6) * 128) + a7
  local lo = ((((((b1 * 128 + b2) * 128 + b3) * 128 + b4) * 128 + b5) * 128 + b6) * 128) + b7
  return hi, lo
end
local function below(x, y) return x[1] < y[1] or (x[1] == y[1] and x[2] < y[2]) end

local after = { -1, -1 }
if cursor ~= '' then after = { place(cursor) } end
local heap = {} -- the count smallest names after the cursor so far, the greatest at heap[1]
local beyond = false -- whether a name after the cursor was left off the page
local function sift_down(i)
  local n = #heap
  while true do
    local l, r, top = 2 * i, 2 * i + 1, i
    if l <= n and below(heap[top], heap[l]) then top = l end
    if r <= n and below(heap[top], heap[r]) then top = r end
    if top == i then return end
    heap[i], heap[top] = heap[top], heap[i]
    i = top
  end
end
local function offer(g)
  if not branded(g) then return end
  local hi, lo = place(g)
  if hi < after[1] or (hi == after[1] and lo <= after[2]) then return end
  if #heap < count then
    heap[#heap + 1] = { hi, lo, g }
    local i = #heap
    while i > 1 and below(heap[math.floor(i / 2)], heap[i]) do
      local up = math.floor(i / 2)
      heap[i], heap[up] = heap[up], heap[i]
      i = up
    end
    return
  end
  beyond = true
  local top = heap[1]
  if hi < top[1] or (hi == top[1] and lo < top[2]) then
    heap[1] = { hi, lo, g }
    sift_down(1)
  end
end

-- The names: each once, from the ring, the paused set, and the fields of glimit, gactive, gweight.
local seen, ringed = {}, {}
for _, g in ipairs(redis.call('LRANGE', KEYS[8], 0, -1)) do
  ringed[g] = true
  if not seen[g] then seen[g] = true; offer(g) end
end
for _, g in ipairs(redis.call('SMEMBERS', KEYS[9])) do
  if not seen[g] then seen[g] = true; offer(g) end
end
for i = 10, 12 do
  for _, g in ipairs(redis.call('HKEYS', KEYS[i])) do
    if not seen[g] then seen[g] = true; offer(g) end
  end
end
local page = {}
for i = #heap, 1, -1 do -- the greatest out, last
  page[i] = heap[1][3]
  heap[1] = heap[#heap]
  heap[#heap] = nil
  sift_down(1)
end

local views = {}
for i, g in ipairs(page) do
  local view
  view, refused = group_view(base, g, ringed[g])
  if not view then return refused end
  views[i] = view
end
local more = beyond and page[#page] or ''
return { counts, more, views }
