// The EchoMQ library's own texts our control scripts are held to, restated as seeds
// (../shared/protocol/LIBRARY.md section f: EchoMQ.Jobs @remove_job and @promote, EchoMQ.Metrics
// @state_lookup), and a reading of a queue's whole keyspace to compare two runs by.
import type { Admin } from './admin.js';
import { CLAIM, COMPLETE, GCLAIM, PROMOTE, REAP, RETRY } from '../../soak/library/scripts.js';
import type { CommandCaller } from './consumer.js';

// KEYS[1] row, [2] pending, [3] active, [4] schedule, [5] dead, [6] emq:{q}:de:<did>; ARGV[1] id, ARGV[2] did or ''
export const SEED_REMOVE_JOB = `local jk = KEYS[1]
if redis.call('EXISTS', jk) == 0 then return -1 end
if redis.call('EXISTS', jk .. ':lock') == 1 then
  return redis.error_reply('EMQLOCK job is locked')
end
local id = ARGV[1]
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
redis.call('ZREM', KEYS[5], id)
if ARGV[2] ~= '' then
  local dk = KEYS[6]
  if redis.call('GET', dk) == id then redis.call('DEL', dk) end
end
redis.call('DEL', jk, jk .. ':logs')
return 1`;

// KEYS[1] schedule, KEYS[2] pending; ARGV[1] emq:{q}:, ARGV[2] batch: the library's @promote (soak/library/scripts.ts)
export const SEED_PROMOTE = PROMOTE;

// KEYS[1] pending, [2] active, [3] schedule, [4] dead, [5] the row; ARGV[1] id
export const SEED_STATE_LOOKUP = `local id = ARGV[1]
if redis.call('ZSCORE', KEYS[1], id) then return 'pending' end
if redis.call('ZSCORE', KEYS[2], id) then return 'active' end
if redis.call('ZSCORE', KEYS[3], id) then return 'scheduled' end
if redis.call('ZSCORE', KEYS[4], id) then return 'dead' end
local st = redis.call('HGET', KEYS[5], 'state')
if st == 'awaiting_children' then return 'awaiting_children' end
if st then return 'unknown' end
return 'absent'`;

/** `emq:{<queue>}:<rest>`: a key of the queue, for tests that build keys by hand. */
export const key = (queue: string, rest: string) => `emq:{${queue}}:${rest}`;

/** Metrics.get_job_state's answer for the id: pending, active, scheduled, dead, awaiting_children, unknown or absent. */
export async function stateLookup(admin: Admin, queue: string, id: string): Promise<string> {
  const p = `emq:{${queue}}:`;
  return String(await admin.text('EVAL', SEED_STATE_LOOKUP, '5', `${p}pending`, `${p}active`, `${p}schedule`, `${p}dead`, `${p}job:${id}`, id));
}

const hex = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v));
/** glide answers maps and scored members as [{ key, value }] or nested pairs; RESP2 servers flat: flat in every case. */
const flat = (reply: unknown[]): unknown[] =>
  reply.flatMap((e) =>
    Array.isArray(e) ? e : e !== null && typeof e === 'object' && 'key' in e ? [(e as { key: unknown }).key, (e as unknown as { value: unknown }).value] : [e],
  );

/**
 * Every key of the queue with its type and contents, read by type (hash fields sorted, a
 * sorted set's members with their scores in order, a list in order, a set sorted, a string's
 * bytes), and its TTL: what two runs are compared by.
 */
export async function keyspaceOf(admin: Admin, queue: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, type] of Object.entries(await admin.footprint(queue))) {
    let value: unknown;
    if (type === 'hash') {
      const f = flat((await admin.call('HGETALL', k)) as unknown[]);
      const pairs: string[] = [];
      for (let i = 0; i < f.length; i += 2) pairs.push(`${hex(f[i])}=${hex(f[i + 1])}`);
      value = pairs.sort();
    } else if (type === 'zset') {
      const f = flat((await admin.call('ZRANGE', k, '0', '-1', 'WITHSCORES')) as unknown[]);
      const pairs: string[] = [];
      for (let i = 0; i < f.length; i += 2) pairs.push(`${hex(f[i])}@${Number(String(f[i + 1]))}`);
      value = pairs;
    } else if (type === 'list') value = ((await admin.call('LRANGE', k, '0', '-1')) as Buffer[]).map(hex);
    else if (type === 'set') value = ((await admin.call('SMEMBERS', k)) as Buffer[]).map(hex).sort();
    else if (type === 'string') value = hex(await admin.call('GET', k));
    else value = ((await admin.call('DUMP', k)) as Buffer).toString('hex');
    out[k] = [type, value, Number(await admin.call('PTTL', k)) > 0 ? 'ttl' : 'no ttl'];
  }
  return out;
}

/** keyspaceOf with each key named by its suffix after emq:{queue}:, so two queues given the same start compare directly. */
export async function keyspaceBySuffix(admin: Admin, queue: string): Promise<Record<string, unknown>> {
  const prefix = key(queue, '');
  return Object.fromEntries(Object.entries(await keyspaceOf(admin, queue)).map(([k, v]) => [k.slice(prefix.length), v]));
}

/** Deletes every key of the queue. */
export async function wipe(admin: Admin, queue: string): Promise<void> {
  const keys = Object.keys(await admin.footprint(queue));
  if (keys.length > 0) await admin.call('DEL', ...keys);
}

// Admin (54570722691) and Lanes (54627295966) control verbs, @counts (54998517730), and the
// consumer verbs a queue is driven through (Jobs 54494128534, Lanes): each called by
// libraryVerbs with the keys and arguments its Elixir function builds. The consumer verbs'
// texts are the soak's restatement (soak/library/scripts.ts: @claim, @gclaim, @complete,
// @retry, @promote, @reap, byte for byte); the ring entry with a wake is written once here.

/** The library's ring entry with a wake, as each of its verbs writes it (text for a seed). */
const push = (ring: string, g: string, wake: string) => `redis.call('RPUSH', ${ring}, ${g})
redis.call('LPUSH', ${wake}, '1')
redis.call('LTRIM', ${wake}, 0, 63)`;

export const SEED_QUEUE_PAUSE = `redis.call('HSET', KEYS[1], 'paused', '1')
return 1`;

export const SEED_QUEUE_RESUME = `redis.call('HDEL', KEYS[1], 'paused')
return 1`;

export const SEED_GWEIGHT = `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;

export const SEED_GPAUSE = `redis.call('SADD', KEYS[1], ARGV[1])
redis.call('LREM', KEYS[2], 0, ARGV[1])
return 1`;

export const SEED_GRESUME = `redis.call('SREM', KEYS[1], ARGV[2])
local lane = ARGV[1] .. 'g:' .. ARGV[2] .. ':pending'
if redis.call('ZCARD', lane) > 0 then
  local lim = redis.call('HGET', KEYS[3], ARGV[2])
  local act = tonumber(redis.call('HGET', KEYS[4], ARGV[2]) or '0')
  if (not lim or act < tonumber(lim)) and not redis.call('LPOS', KEYS[2], ARGV[2]) then
    ${push('KEYS[2]', 'ARGV[2]', 'KEYS[5]')}
  end
end
return 1`;

export const SEED_GLIMIT = `redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
local act = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
if act >= tonumber(ARGV[3]) then
  redis.call('LREM', KEYS[3], 0, ARGV[2])
else
  local lane = ARGV[1] .. 'g:' .. ARGV[2] .. ':pending'
  if redis.call('SISMEMBER', KEYS[4], ARGV[2]) == 0 and redis.call('ZCARD', lane) > 0 and
     not redis.call('LPOS', KEYS[3], ARGV[2]) then
    ${push('KEYS[3]', 'ARGV[2]', 'KEYS[5]')}
  end
end
return 1`;

export const SEED_COUNTS = `local base = KEYS[1]
local out = {}
for i = 2, #KEYS do
  out[#out + 1] = redis.call('ZCARD', KEYS[i])
end
for i = 1, #ARGV do
  out[#out + 1] = tonumber(redis.call('HGET', base .. 'metrics:' .. ARGV[i], 'count') or '0')
end
return out`;

export const SEED_GENQUEUE = `if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2], 'group', ARGV[3])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
if redis.call('SISMEMBER', KEYS[4], ARGV[3]) == 0 then
  local lim = redis.call('HGET', KEYS[5], ARGV[3])
  local act = tonumber(redis.call('HGET', KEYS[6], ARGV[3]) or '0')
  if (not lim or act < tonumber(lim)) and not redis.call('LPOS', KEYS[3], ARGV[3]) then
    ${push('KEYS[3]', 'ARGV[3]', 'KEYS[7]')}
  end
end
return 1`;

/** The library's verbs on one queue, each with the keys and arguments its Elixir function sends. */
export function libraryVerbs(admin: CommandCaller, queue: string) {
  const p = `emq:{${queue}}:`;
  const k = (s: string) => p + s;
  const run = (text: string, keys: string[], ...args: Array<string | Uint8Array>) => admin.call('EVAL', text, String(keys.length), ...keys, ...args);
  return {
    /** Admin.pause/2 and Admin.resume/2. */
    pause: () => run(SEED_QUEUE_PAUSE, [k('meta')]),
    resume: () => run(SEED_QUEUE_RESUME, [k('meta')]),
    /** Lanes.weight/4, pause/3, resume/3, limit/4. */
    weight: (g: string, w: number) => run(SEED_GWEIGHT, [k('gweight')], g, String(w)),
    gpause: (g: string) => run(SEED_GPAUSE, [k('paused'), k('ring')], g),
    gresume: (g: string) => run(SEED_GRESUME, [k('paused'), k('ring'), k('glimit'), k('gactive'), k('wake')], p, g),
    limit: (g: string, n: number) => run(SEED_GLIMIT, [k('glimit'), k('gactive'), k('ring'), k('paused'), k('wake')], p, g, String(n)),
    /** Metrics.get_counts/3 of every state, as { name: n }. */
    async counts(): Promise<Record<string, number>> {
      const sets = ['pending', 'active', 'schedule', 'dead'];
      const reply = (await run(SEED_COUNTS, [p, ...sets.map(k)], 'completed', 'failed')) as number[];
      return Object.fromEntries([...sets, 'completed', 'failed'].map((s, i) => [s, Number(reply[i])]));
    },
    /** Lanes.enqueue/5. */
    genqueue: (g: string, id: string, payload = 'cargo') =>
      run(SEED_GENQUEUE, [k(`job:${id}`), k(`g:${g}:pending`), k('ring'), k('paused'), k('glimit'), k('gactive'), k('wake')], id, payload, g),
    /** Jobs.claim/3 (the queue's pause flag first): [id, payload, attempts] or null. */
    async claim(leaseMs = 30_000): Promise<[string, string, number] | null> {
      if ((await admin.call('HGET', k('meta'), 'paused')) !== null) return null;
      const reply = (await run(CLAIM, [k('pending'), k('active')], k('job:'), String(leaseMs))) as unknown[];
      if (reply.length === 0) return null;
      const [id, payload, att] = reply as [Buffer, Buffer, number];
      return [String(id), String(payload), Number(att)];
    },
    /** Lanes.claim/3 (the queue's pause flag first): [id, payload, attempts, group] or null. */
    async gclaim(leaseMs = 30_000): Promise<[string, string, number, string] | null> {
      if ((await admin.call('HGET', k('meta'), 'paused')) !== null) return null;
      const reply = (await run(GCLAIM, [k('ring'), k('active')], p, String(leaseMs))) as unknown[];
      if (reply.length === 0) return null;
      const [id, payload, att, g] = reply as [Buffer, Buffer, number, Buffer];
      return [String(id), String(payload), Number(att), String(g)];
    },
    /** Jobs.complete/4 of a job outside a flow. */
    complete: (id: string, token: number) => run(COMPLETE, [k('active'), k(`job:${id}`)], id, String(token), p),
    /** Jobs.retry/7 of a job outside a flow. */
    retry: (id: string, token: number, delayMs: number, max: number) =>
      run(RETRY, [k('active'), k('schedule'), k('dead'), k(`job:${id}`)], id, String(token), String(delayMs), String(max), 'boom', p),
    /** Jobs.promote/3 and Jobs.reap/2. */
    promote: (batch = 100) => run(SEED_PROMOTE, [k('schedule'), k('pending')], p, String(batch)),
    reap: () => run(REAP, [k('active'), k('pending')], p),
  };
}
