// A model of the EchoMQ library's consumer (LIBRARY.md §a.5, §d), written from its description
// and independent of the code under test: the id check its key builder makes before any
// wire, @claim (ZPOPMIN of pending, attempts + 1 as the fencing token, state active, a lease
// in the active set) and a flat @complete (token check, ZREM active, DEL row, the completed
// counter). A job we write is only useful if this consumer can take it to the end.
import type { Admin } from './admin.js';

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

// KEYS[1] active, KEYS[2] the row; ARGV[1] id, ARGV[2] token, ARGV[3] emq:{q}:
const COMPLETE = `
local attempts = redis.call('HGET', KEYS[2], 'attempts')
if not attempts then return 0 end
if attempts ~= ARGV[2] then return redis.error_reply('EMQSTALE complete token mismatch') end
local was = redis.call('ZREM', KEYS[1], ARGV[1])
if was == 0 then redis.call('ZREM', ARGV[3] .. 'pending', ARGV[1]) end
redis.call('DEL', KEYS[2])
redis.call('HINCRBY', ARGV[3] .. 'metrics:completed', 'count', 1)
return 1
`;

export interface Claimed {
  id: string;
  payload: Buffer;
  token: number;
}

export function libraryConsumer(admin: Admin, queue: string) {
  const p = `emq:{${queue}}:`;
  return {
    /** Jobs.claim/3: the oldest pending job (lowest bytes at score 0), or null. */
    async claim(leaseMs = 30_000): Promise<Claimed | null> {
      const reply = (await admin.call('EVAL', CLAIM, '2', `${p}pending`, `${p}active`, `${p}job:`, String(leaseMs))) as unknown[];
      if (reply.length === 0) return null;
      const [id, payload, token] = reply as [Buffer, Buffer, number];
      return { id: id.toString('latin1'), payload, token: Number(token) };
    },
    /** Jobs.complete/4 for a flat job: 'ok', 'gone', or throws EMQSTALE; the key builder first. */
    async complete(id: string, token: number): Promise<'ok' | 'gone'> {
      const row = libraryJobKey(queue, id); // raises on an ill-formed id, as the library does
      const reply = await admin.call('EVAL', COMPLETE, '2', `${p}active`, row, id, String(token), p);
      return Number(reply) === 1 ? 'ok' : 'gone';
    },
  };
}
