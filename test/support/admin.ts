// A plain glide client for looking at the keyspace from outside the code under test.
import { Decoder, GlideClient, type GlideString } from '@valkey/valkey-glide';
import { parseValkeyUrl } from '../../shared/connections/valkey-url.js';

export type Admin = Awaited<ReturnType<typeof connectAdmin>>;

export async function connectAdmin(url: string) {
  const e = parseValkeyUrl(url);
  const client = await GlideClient.createClient({
    addresses: [{ host: e.host, port: e.port }],
    databaseId: e.db,
    defaultDecoder: Decoder.Bytes,
    requestTimeout: 10_000,
    ...(e.password ? { credentials: { password: e.password, ...(e.username ? { username: e.username } : {}) } } : {}),
  });
  const call = (...args: GlideString[]) => client.customCommand(args);
  const text = async (...args: GlideString[]) => {
    const r = await call(...args);
    return Buffer.isBuffer(r) ? r.toString('utf8') : (r as unknown);
  };
  return {
    call,
    text,
    /** A hash as field → bytes. */
    async hgetall(key: string): Promise<Record<string, Buffer>> {
      // glide answers a map as [{ key, value }]; RESP2 servers may answer a flat list
      const reply = (await call('HGETALL', key)) as unknown[];
      const out: Record<string, Buffer> = {};
      for (let i = 0; i < reply.length; i++) {
        const entry = reply[i];
        if (Buffer.isBuffer(entry)) out[entry.toString()] = reply[++i] as Buffer;
        else {
          const { key: k, value } = entry as { key: Buffer; value: Buffer };
          out[k.toString()] = value;
        }
      }
      return out;
    },
    /** A job's row, field → its bytes as latin1 text (each byte one character). */
    async row(queue: string, id: string): Promise<Record<string, string>> {
      return Object.fromEntries(Object.entries(await this.hgetall(`emq:{${queue}}:job:${id}`)).map(([k, v]) => [k, v.toString('latin1')]));
    },
    /** A sorted set's members, lowest score first. */
    async zmembers(key: string): Promise<string[]> {
      return ((await call('ZRANGE', key, '0', '-1')) as Buffer[]).map(String);
    },
    /** A list, head first. */
    async list(key: string): Promise<string[]> {
      return ((await call('LRANGE', key, '0', '-1')) as Buffer[]).map(String);
    },
    /** Every key of a queue, each with its type: the whole footprint a test may have left. */
    async footprint(queue: string): Promise<Record<string, string>> {
      const keys = ((await call('KEYS', `emq:{${queue}}:*`)) as Buffer[]).map((k) => k.toString());
      const out: Record<string, string> = {};
      for (const k of keys.sort()) out[k] = String(await text('TYPE', k));
      return out;
    },
    /** Calls of a command since the last CONFIG RESETSTAT. */
    async calls(command: string): Promise<number> {
      const info = String(await text('INFO', 'commandstats'));
      const m = new RegExp(`^cmdstat_${command.toLowerCase()}:calls=(\\d+)`, 'm').exec(info);
      return m ? Number(m[1]) : 0;
    },
    close: () => client.close(),
  };
}

/** A queue name no other test uses. */
export function freshQueue(label = 'q'): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * What "nothing written" compares: every key of these queues with its type and exact value
 * (DUMP), and the server's change counter (every write bumps it; the test servers never save,
 * so it never resets). Not the key count: another test's keys expire under it (a CI run saw
 * 12,105 become 12,103 with no write).
 */
export async function snapshot(admin: Admin, ...queues: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const q of queues) {
    for (const [key, type] of Object.entries(await admin.footprint(q))) {
      out[key] = `${type} ${((await admin.call('DUMP', key)) as Buffer).toString('hex')}`;
    }
  }
  out['(changes)'] = /rdb_changes_since_last_save:(\d+)/.exec(String(await admin.text('INFO', 'persistence')))?.[1] ?? 'none';
  return out;
}
