// The EchoMQ library's own texts our control scripts are held to, restated as seeds
// (../shared/protocol/LIBRARY.md section f: EchoMQ.Jobs @remove_job and @promote, EchoMQ.Metrics
// @state_lookup), and a reading of a queue's whole keyspace to compare two runs by.
import type { Admin } from './admin.js';

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

// KEYS[1] schedule, KEYS[2] pending; ARGV[1] emq:{q}:, ARGV[2] batch
export const SEED_PROMOTE = `local p = ARGV[1]
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
return #due`;

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

/** Deletes every key of the queue. */
export async function wipe(admin: Admin, queue: string): Promise<void> {
  const keys = Object.keys(await admin.footprint(queue));
  if (keys.length > 0) await admin.call('DEL', ...keys);
}
