// The server under test, a private one (scripts/valkey.ts), and the admin commands the bench
// needs around the rows.
import { Decoder, type GlideClient } from '@valkey/valkey-glide';
import { startServer } from '../scripts/valkey.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { parseValkeyUrl, type ValkeyEndpoint } from '../shared/connections/valkey-url.js';
import { pendingKey } from '../shared/index.js';
import { enqueueScript } from '../shared/scripts.js';
import { adopt } from './procs.js';

export class Server {
  private constructor(
    readonly url: string,
    readonly endpoint: ValkeyEndpoint,
    readonly pid: number,
    private readonly admin: GlideConnection,
    private readonly stopServer: () => Promise<void>,
  ) {}

  static async open(): Promise<Server> {
    const started = await startServer();
    const stop = adopt('valkey', started.pid, () => started.stop(), true);
    try {
      return new Server(started.url, parseValkeyUrl(started.url), started.pid, await connectGlide(started.url), stop);
    } catch (err) {
      await stop();
      throw err;
    }
  }

  call(...args: string[]): Promise<unknown> {
    return (this.admin.client as GlideClient).customCommand(args, { decoder: Decoder.String });
  }

  async info(section: string): Promise<Map<string, string>> {
    const text = String(await this.call('INFO', section));
    const out = new Map<string, string>();
    for (const line of text.split('\r\n')) {
      const at = line.indexOf(':');
      if (at > 0 && !line.startsWith('#')) out.set(line.slice(0, at), line.slice(at + 1));
    }
    return out;
  }

  /** "valkey 8.0.1" (or "redis 7.2.4"), from the server itself. */
  async version(): Promise<string> {
    const info = await this.info('server');
    const valkey = info.get('valkey_version');
    return valkey ? `valkey ${valkey}` : `redis ${info.get('redis_version') ?? '?'}`;
  }

  /** `errorstat_<PREFIX>` counts, e.g. { EMQLAYOUT: 3 }. */
  async errorStats(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [k, v] of await this.info('errorstats')) {
      const count = /count=(\d+)/.exec(v)?.[1];
      if (k.startsWith('errorstat_') && count) out[k.slice('errorstat_'.length)] = Number(count);
    }
    return out;
  }

  /** Jobs in the pending set of `queue`. */
  async pending(queue: string): Promise<number> {
    return Number(await this.call('ZCARD', pendingKey(queue)));
  }

  /** A clean slate between rows. */
  async reset(): Promise<void> {
    await this.call('FLUSHALL');
    await this.loadScript();
  }

  async loadScript(): Promise<void> {
    const sha = String(await this.call('SCRIPT', 'LOAD', enqueueScript.text));
    if (sha !== enqueueScript.sha1) throw new Error(`SCRIPT LOAD answered ${sha}, expected ${enqueueScript.sha1}`);
  }

  /** Every key matching `pattern` (SCAN). */
  async keys(pattern: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = (await this.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', '10000')) as [string, string[]];
      keys.push(...found);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  }

  async close(): Promise<void> {
    await this.admin.close();
    await this.stopServer();
  }
}
