// A model of the EchoMQ library's consumer (../shared/protocol/LIBRARY.md §a.5, §c.4, §d), written from its
// description and independent of the code under test: the id check its key builder makes
// before any wire, @claim (ZPOPMIN of pending, attempts + 1 as the fencing token, state
// active, a lease in the active set), @promote (due schedule entries to pending, or to their
// group's lane with the ring and wake rule), @gclaim (rotate the ring one step, serve that
// lane's oldest job, count it in gactive, drop the group from the ring at its ceiling or
// when its lane is empty), @complete for flat and grouped jobs (token check, ZREM active,
// the group's bookkeeping and re-ring rule, DEL row, the completed counter), and the
// operator's group pause and limit, and flows (§c.5, §d): @complete's fan-in (a child of a
// parent in its queue counts down the parent's :dependencies, records itself in :processed and
// releases the parent to pending at 0; a child of a parent in another queue pushes its
// completion to its own queue's flow:outbox) and the Pump's delivery of that outbox on the
// parent's slot (@flow_deliver, HSETNX-idempotent). A job we write is only useful if this
// consumer can take it to the end.
/** What the model sends commands through: test/support/admin.ts's call on Node; the gateway's admin token in workerd. */
export interface CommandCaller {
  call(...args: Array<string | Uint8Array>): Promise<unknown>;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** BrandedId.valid?/1: 14 bytes, a namespace of A-Z, base62, at most AzL8n0Y58m7 (2^63 - 1). */
export function libraryAcceptsId(id: Uint8Array | string): boolean {
  const bytes = typeof id === 'string' ? new TextEncoder().encode(id) : id;
  if (bytes.length !== 14) return false;
  const text = String.fromCharCode(...bytes);
  if (!/^[A-Z]{3}$/.test(text.slice(0, 3))) return false;
  if (![...text.slice(3)].every((c) => BASE62.includes(c))) return false;
  return text.slice(3) <= 'AzL8n0Y58m7';
}

/** Keyspace.job_key/2: raises before any wire on an id the library does not accept. */
export function libraryJobKey(queue: string, id: string): string {
  if (!libraryAcceptsId(id)) throw new Error('job_key requires a valid branded id');
  return `emq:{${queue}}:job:${id}`;
}

// KEYS[1] pending, KEYS[2] active; ARGV[1] the queue's key prefix emq:{q}:job:, ARGV[2] lease ms
const CLAIM = `
local popped = redis.call('ZPOPMIN', KEYS[1])
if #popped == 0 then return {} end
local id = popped[1]
local row = ARGV[1] .. id
local token = redis.call('HINCRBY', row, 'attempts', 1)
redis.call('HSET', row, 'state', 'active')
local now = redis.call('TIME')
redis.call('ZADD', KEYS[2], now[1] * 1000 + math.floor(now[2] / 1000) + tonumber(ARGV[2]), id)
return { id, redis.call('HGET', row, 'payload'), token }
`;

// The ring rule the library repeats in admission, promote, reap, complete and resume: an
// unpaused group below its ceiling, not on the ring yet, goes on it, with a wake (at most
// 64 kept). p is the queue's prefix emq:{q}:, g the group, act its live count.
const RING = `
local function ring(p, g, act)
  if redis.call('SISMEMBER', p .. 'paused', g) == 1 then return end
  local lim = redis.call('HGET', p .. 'glimit', g)
  if lim and act >= tonumber(lim) then return end
  if redis.call('LPOS', p .. 'ring', g) then return end
  redis.call('RPUSH', p .. 'ring', g)
  redis.call('LPUSH', p .. 'wake', '1')
  redis.call('LTRIM', p .. 'wake', 0, 63)
end
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
`;

// KEYS[1] active, KEYS[2] the row; ARGV[1] id, ARGV[2] token, ARGV[3] emq:{q}:. A flow child
// adds, its parent in this queue: KEYS[3] the parent's :dependencies, KEYS[4] its :processed,
// KEYS[5] its row, ARGV[4] the parent's id, ARGV[5] the result; its parent in another queue:
// KEYS[3] this queue's flow:outbox, ARGV[4] the parent's id, ARGV[5] the result, ARGV[6] xq,
// ARGV[7] the parent's queue. Either counts only a completion that took the job out of active.
const COMPLETE = `${RING}
local attempts = redis.call('HGET', KEYS[2], 'attempts')
if not attempts then return 0 end
if attempts ~= ARGV[2] then return redis.error_reply('EMQSTALE complete token mismatch') end
local p = ARGV[3]
local g = redis.call('HGET', KEYS[2], 'group')
local was = redis.call('ZREM', KEYS[1], ARGV[1])
if g then
  local lane = p .. 'g:' .. g .. ':pending'
  if was == 1 then
    local act = redis.call('HINCRBY', p .. 'gactive', g, -1)
    if act <= 0 then redis.call('HDEL', p .. 'gactive', g) end
    if redis.call('ZCARD', lane) > 0 then ring(p, g, act) end
  else
    redis.call('ZREM', lane, ARGV[1])
    if redis.call('ZCARD', lane) == 0 then redis.call('LREM', p .. 'ring', 0, g) end
  end
elseif was == 0 then
  redis.call('ZREM', p .. 'pending', ARGV[1])
end
if ARGV[6] == 'xq' then
  if was == 1 then
    redis.call('RPUSH', KEYS[3], ARGV[7] .. '\\0' .. ARGV[4] .. '\\0' .. ARGV[1] .. '\\0' .. ARGV[5])
  end
elseif KEYS[3] and was == 1 then
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

// The Pump's delivery of one outbox entry, on the parent's slot. KEYS[1] the parent's
// :dependencies, KEYS[2] its :processed, KEYS[3] its row; ARGV[1] the child's id, ARGV[2] its
// result, ARGV[3] the parent's id, ARGV[4] the parent's queue prefix emq:{pq}:. Counted once:
// only the child's first record in :processed counts down.
const FLOW_DELIVER = `
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  local left = redis.call('DECR', KEYS[1])
  if left <= 0 then
    redis.call('ZADD', ARGV[4] .. 'pending', 0, ARGV[3])
    redis.call('HSET', KEYS[3], 'state', 'pending')
  end
end
return 1
`;

// KEYS[1] schedule, KEYS[2] pending; ARGV[1] emq:{q}:, ARGV[2] how many at most
const PROMOTE = `${RING}
local p = ARGV[1]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local row = p .. 'job:' .. id
  local g = redis.call('HGET', row, 'group')
  if g then
    redis.call('ZADD', p .. 'g:' .. g .. ':pending', 0, id)
    ring(p, g, tonumber(redis.call('HGET', p .. 'gactive', g) or '0'))
  else
    redis.call('ZADD', KEYS[2], 0, id)
  end
  redis.call('HSET', row, 'state', 'pending')
end
return #due
`;

// KEYS[1] ring, KEYS[2] active; ARGV[1] emq:{q}:, ARGV[2] lease ms
const GCLAIM = `${RING}
local p = ARGV[1]
local g = redis.call('LMOVE', KEYS[1], KEYS[1], 'LEFT', 'RIGHT')
if not g then return {} end
local lane = p .. 'g:' .. g .. ':pending'
local popped = redis.call('ZPOPMIN', lane)
if #popped == 0 then
  redis.call('LREM', KEYS[1], 0, g)
  return {}
end
local id = popped[1]
local row = p .. 'job:' .. id
local token = redis.call('HINCRBY', row, 'attempts', 1)
redis.call('HSET', row, 'state', 'active')
redis.call('ZADD', KEYS[2], now_ms() + tonumber(ARGV[2]), id)
local act = redis.call('HINCRBY', p .. 'gactive', g, 1)
local lim = redis.call('HGET', p .. 'glimit', g)
if (lim and act >= tonumber(lim)) or redis.call('ZCARD', lane) == 0 then
  redis.call('LREM', KEYS[1], 0, g)
end
return { id, redis.call('HGET', row, 'payload'), token, g }
`;

// Lanes.pause: KEYS[1] paused, KEYS[2] ring; ARGV[1] the group
const GPAUSE = `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 0, ARGV[1])
return 1
`;

// Lanes.limit: KEYS[1] glimit; ARGV[1] emq:{q}:, ARGV[2] the group, ARGV[3] the ceiling
const GLIMIT = `${RING}
local p, g, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
redis.call('HSET', KEYS[1], g, ARGV[3])
local act = tonumber(redis.call('HGET', p .. 'gactive', g) or '0')
if act >= n then
  redis.call('LREM', p .. 'ring', 0, g)
elseif redis.call('ZCARD', p .. 'g:' .. g .. ':pending') > 0 then
  ring(p, g, act)
end
return 1
`;

export interface Claimed {
  id: string;
  payload: Buffer;
  token: number;
}

export interface GroupClaimed extends Claimed {
  group: string;
}

export function libraryConsumer(admin: CommandCaller, queue: string) {
  const p = `emq:{${queue}}:`;
  /** One outbox entry, parent_queue NUL parent NUL child NUL result (the result may hold any byte), delivered: true; a malformed one: false. */
  const deliver = async (entry: Buffer): Promise<boolean> => {
    const cuts: number[] = [];
    for (let at = -1; cuts.length < 3; cuts.push(at)) if ((at = entry.indexOf(0, at + 1)) < 0) return false;
    const [a, b, c] = cuts as [number, number, number];
    const latin1 = (from: number, to: number) => String.fromCharCode(...entry.subarray(from, to));
    const [parentQueue, parent, child] = [latin1(0, a), latin1(a + 1, b), latin1(b + 1, c)];
    if (parentQueue === '') return false; // a fail entry: not modelled here
    let parentRow: string;
    try {
      parentRow = libraryJobKey(parentQueue, parent);
    } catch {
      return false;
    }
    const reply = await admin.call(
      'EVAL',
      FLOW_DELIVER,
      '3',
      `${parentRow}:dependencies`,
      `${parentRow}:processed`,
      parentRow,
      child,
      entry.subarray(c + 1),
      parent,
      `emq:{${parentQueue}}:`,
    );
    return Number(reply) === 1;
  };
  return {
    /** Jobs.claim/3: the queue's pause flag first (its paused?/2), then the oldest pending job (lowest bytes at score 0), or null. */
    async claim(leaseMs = 30_000): Promise<Claimed | null> {
      if ((await admin.call('HGET', `${p}meta`, 'paused')) !== null) return null;
      const reply = (await admin.call('EVAL', CLAIM, '2', `${p}pending`, `${p}active`, `${p}job:`, String(leaseMs))) as unknown[];
      if (reply.length === 0) return null;
      const [id, payload, token] = reply as [Buffer, Buffer, number];
      return { id: id.toString('latin1'), payload, token: Number(token) };
    },
    /**
     * Jobs.complete/5: 'ok', 'gone', or throws EMQSTALE; the key builder first. A flow child
     * (its row's parent field, read first, as the library's parent_of/3) fans in: the parent in
     * this queue counts it at once; a parent in another queue (parent_queue) gets it through
     * this queue's outbox and the pump. `result` defaults to the child's id, as the library's.
     */
    async complete(id: string, token: number, result?: string): Promise<'ok' | 'gone'> {
      const row = libraryJobKey(queue, id); // raises on an ill-formed id, as the library does
      const fields = (await admin.call('HMGET', row, 'parent', 'parent_queue')) as Array<Buffer | null>;
      const [parent, parentQueue] = [0, 1].map((i) => fields[i]?.toString('latin1') ?? null) as [string | null, string | null];
      const keys = [`${p}active`, row];
      const args = [id, String(token), p];
      if (parent !== null && parentQueue !== null && parentQueue !== queue) {
        keys.push(`${p}flow:outbox`);
        args.push(parent, result ?? id, 'xq', parentQueue);
      } else if (parent !== null) {
        const parentRow = libraryJobKey(queue, parent);
        keys.push(`${parentRow}:dependencies`, `${parentRow}:processed`, parentRow);
        args.push(parent, result ?? id);
      }
      const reply = await admin.call('EVAL', COMPLETE, String(keys.length), ...keys, ...args);
      return Number(reply) === 1 ? 'ok' : 'gone';
    },
    /**
     * Pump.deliver_flow_completions/3: reads up to `batch` outbox entries (without taking
     * them), delivers each on its parent's slot, then trims the delivered prefix; answers how
     * many were delivered. `crash: true` stops before the trim, as a pump that died there
     * would: the next pump delivers the same entries again.
     */
    async pump(batch = 100, { crash = false } = {}): Promise<number> {
      const entries = (await admin.call('LRANGE', `${p}flow:outbox`, '0', String(batch - 1))) as Buffer[];
      let delivered = 0;
      for (const entry of entries) {
        if (!(await deliver(entry))) break;
        delivered++;
      }
      if (delivered > 0 && !crash) await admin.call('LTRIM', `${p}flow:outbox`, String(delivered), '-1');
      return delivered;
    },
    /** Jobs.promote/3: moves up to `batch` due jobs (score <= the server's TIME) on; answers how many. */
    async promote(batch = 100): Promise<number> {
      return Number(await admin.call('EVAL', PROMOTE, '2', `${p}schedule`, `${p}pending`, p, String(batch)));
    },
    /** Lanes.claim/3: the queue's pause flag first, then one ring step and that lane's oldest job, or null. */
    async gclaim(leaseMs = 30_000): Promise<GroupClaimed | null> {
      if ((await admin.call('HGET', `${p}meta`, 'paused')) !== null) return null;
      const reply = (await admin.call('EVAL', GCLAIM, '2', `${p}ring`, `${p}active`, p, String(leaseMs))) as unknown[];
      if (reply.length === 0) return null;
      const [id, payload, token, group] = reply as [Buffer, Buffer, number, Buffer];
      return { id: id.toString('latin1'), payload, token: Number(token), group: group.toString('latin1') };
    },
    /** Lanes.pause/3: the group leaves the ring; its lane and its jobs in flight stay. */
    async pauseGroup(group: string): Promise<void> {
      if (!libraryAcceptsId(group)) throw new Error('a lane is named by a valid branded id');
      await admin.call('EVAL', GPAUSE, '2', `${p}paused`, `${p}ring`, group);
    },
    /** Lanes.limit/4: the group's ceiling; at or under its live count the group leaves the ring. */
    async limitGroup(group: string, n: number): Promise<void> {
      if (!libraryAcceptsId(group)) throw new Error('a lane is named by a valid branded id');
      await admin.call('EVAL', GLIMIT, '1', `${p}glimit`, p, group, String(n));
    },
  };
}
