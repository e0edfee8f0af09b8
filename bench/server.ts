// The server under test: a private one started here (scripts/valkey.ts), or VALKEY_URL's; and
// the admin commands the bench needs around the rows (flush, script load, counts, errors).
import { readFileSync } from 'node:fs';
import { Decoder, type GlideClient } from '@valkey/valkey-glide';
import { startServer } from '../scripts/valkey.js';
import { command } from '../functions/gateway/glide-commands.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { parseValkeyUrl, redactUrl, type ValkeyEndpoint } from '../shared/connections/valkey-url.js';
import { pendingKey } from '../shared/index.js';
import { enqueueScript } from '../shared/scripts.js';
import { adopt } from './procs.js';

/** Key patterns every row writes under, so a shared server can be cleaned after. */
const OUR_KEYS = ['emq:{bench*', 'bench-bull:*'];

export class Server {
  private constructor(
    readonly url: string,
    readonly endpoint: ValkeyEndpoint,
    /** True when this bench started the server, so FLUSHALL is ours to send. */
    readonly owned: boolean,
    /** The server process on this machine, for its CPU from /proc; undefined when it is elsewhere. */
    readonly pid: number | undefined,
    private readonly admin: GlideConnection,
    private readonly stopServer: () => Promise<void>,
  ) {}

  static async open(): Promise<Server> {
    const given = process.env.VALKEY_URL;
    const started = given ? undefined : await startServer();
    const url = given ?? started!.url;
    const endpoint = parseValkeyUrl(url);
    if (endpoint.cluster) throw new Error(`${redactUrl(url)}: the bench needs a standalone server, not a cluster`);
    if (endpoint.tls) throw new Error(`${redactUrl(url)}: the bench's load generators speak plain TCP only`);
    const stop = started ? adopt('valkey', started.pid, () => started.stop(), true) : async () => undefined;
    try {
      const admin = await connectGlide(url);
      let pid = started?.pid;
      if (pid === undefined && ['127.0.0.1', 'localhost', '::1'].includes(endpoint.host)) {
        const info = await command(admin.wire, ['INFO', 'server']);
        const found = info.ok ? Number(/process_id:(\d+)/.exec(new TextDecoder().decode(info.value as Uint8Array))?.[1]) : NaN;
        if (found > 0 && /valkey|redis/.test(commOf(found) ?? '')) pid = found;
      }
      return new Server(url, endpoint, started !== undefined, pid, admin, stop);
    } catch (err) {
      await stop();
      throw err;
    }
  }

  private get client(): GlideClient {
    return this.admin.client as GlideClient;
  }

  async call(...args: string[]): Promise<unknown> {
    return this.client.customCommand(args, { decoder: Decoder.String });
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

  /** A clean slate between rows: FLUSHALL on our own server, else our keys only. */
  async reset(): Promise<void> {
    if (this.owned) {
      await this.call('FLUSHALL');
    } else {
      await this.dropOurKeys();
    }
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

  private async dropOurKeys(): Promise<void> {
    for (const pattern of OUR_KEYS) {
      const keys = await this.keys(pattern);
      for (let i = 0; i < keys.length; i += 10_000) await this.call('UNLINK', ...keys.slice(i, i + 10_000));
    }
  }

  /** Leaves the server as found (our keys gone), or stops the one we started. */
  async close(): Promise<void> {
    try {
      if (!this.owned) await this.dropOurKeys();
    } finally {
      await this.admin.close();
      await this.stopServer();
    }
  }
}

/** The process's command name from /proc, or undefined. */
function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}
