// The EchoMQ library's consumer verbs with their host-side steps, as its Elixir functions make
// them (Jobs 54494128534, Lanes 54627295966, Pump 54721988820; LIBRARY.md section d): which
// keys and arguments each sends, the host reads it makes first (the queue's pause flag before a
// claim, the row's parent fields before complete and retry), and Connector.eval's EVALSHA with
// SCRIPT LOAD on NOSCRIPT. Restated for the soak; only the scripts' texts (./scripts.ts) run.
import { createHash } from 'node:crypto';
import type { GlideClient, GlideString } from '@valkey/valkey-glide';
import type { Send } from './connect.js';
import { CLAIM, COMPLETE, FLOW_DELIVER, GCLAIM, PROMOTE, REAP, RETRY } from './scripts.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const SHAS = new Map([CLAIM, COMPLETE, FLOW_DELIVER, GCLAIM, PROMOTE, REAP, RETRY].map((s) => [s, sha1(s)]));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('latin1') : String(v));

/** Keyspace.job_key/2's gate, BrandedId.valid?/1: 3 capitals, 11 base62, at most AzL8n0Y58m7. */
export function validBrandedId(id: string): boolean {
  return /^[A-Z]{3}[0-9A-Za-z]{11}$/.test(id) && id.slice(3) <= 'AzL8n0Y58m7';
}

export function jobKey(queue: string, id: string): string {
  if (!validBrandedId(id)) throw new Error('job_key requires a valid branded id'); // ArgumentError, before any wire
  return `emq:{${queue}}:job:${id}`;
}

export interface Claimed {
  id: string;
  payload: Buffer;
  attempts: number;
  group: string | null;
}

export type Completion = 'ok' | 'gone' | 'stale';

/** The verbs over one server's client, or over a queue's `Send` (connect.ts: its slot's primary on a cluster). */
export function libraryVerbs(conn: GlideClient | Send) {
  const cmd = typeof conn === 'function' ? (...args: GlideString[]) => conn(args) : (...args: GlideString[]) => conn.customCommand(args);
  /** Connector.eval/5: EVALSHA; on NOSCRIPT, SCRIPT LOAD (the sha checked) and once more. */
  const evalScript = async (source: string, keys: string[], argv: GlideString[]): Promise<unknown> => {
    const sha = SHAS.get(source)!;
    try {
      return await cmd('EVALSHA', sha, String(keys.length), ...keys, ...argv);
    } catch (err) {
      if (!/NOSCRIPT|NoScript/.test(String((err as Error).message))) throw err; // glide names it NoScriptError
      const loaded = str(await cmd('SCRIPT', 'LOAD', source));
      if (loaded !== sha) throw new Error(`SCRIPT LOAD answered ${loaded}, not ${sha}`);
      return await cmd('EVALSHA', sha, String(keys.length), ...keys, ...argv);
    }
  };
  const qk = (queue: string, rest: string) => `emq:{${queue}}:${rest}`;
  const paused = async (queue: string) => (await cmd('HGET', qk(queue, 'meta'), 'paused')) !== null;

  return {
    evalScript,
    /** Jobs.reap/2. */
    reap: async (queue: string) => Number(await evalScript(REAP, [qk(queue, 'active'), qk(queue, 'pending')], [qk(queue, '')])),
    /** Jobs.promote/3. */
    promote: async (queue: string, batch: number) =>
      Number(await evalScript(PROMOTE, [qk(queue, 'schedule'), qk(queue, 'pending')], [qk(queue, ''), String(batch)])),
    /** Jobs.claim/3: the pause flag read host-side first, then @claim. */
    async claim(queue: string, leaseMs: number): Promise<Claimed | null> {
      if (await paused(queue)) return null;
      const r = (await evalScript(CLAIM, [qk(queue, 'pending'), qk(queue, 'active')], [qk(queue, 'job:'), String(leaseMs)])) as unknown[];
      if (r.length === 0) return null;
      return { id: str(r[0])!, payload: r[1] as Buffer, attempts: Number(r[2]), group: null };
    },
    /** Lanes.claim/3: the pause flag first, then @gclaim. */
    async gclaim(queue: string, leaseMs: number): Promise<Claimed | null> {
      if (await paused(queue)) return null;
      const r = (await evalScript(GCLAIM, [qk(queue, 'ring'), qk(queue, 'active')], [qk(queue, ''), String(leaseMs)])) as unknown[];
      if (r.length === 0) return null;
      return { id: str(r[0])!, payload: r[1] as Buffer, attempts: Number(r[2]), group: str(r[3]) };
    },
    /** Jobs.complete/5 with result nil: parent_of/3 (HMGET parent parent_queue), then @complete with the fan-in or outbox arguments. */
    async complete(queue: string, id: string, token: number): Promise<Completion> {
      const row = jobKey(queue, id);
      const [parent, parentQueue] = ((await cmd('HMGET', row, 'parent', 'parent_queue')) as unknown[]).map(str) as [string | null, string | null];
      let keys = [qk(queue, 'active'), row];
      let argv: string[] = [id, String(token), qk(queue, '')];
      if (parent !== null && parentQueue !== null && parentQueue !== queue) {
        keys = [...keys, qk(queue, 'flow:outbox')];
        argv = [...argv, parent, id, 'xq', parentQueue];
      } else if (parent !== null) {
        const pk = jobKey(queue, parent);
        keys = [...keys, `${pk}:dependencies`, `${pk}:processed`, pk];
        argv = [...argv, parent, id];
      }
      try {
        return Number(await evalScript(COMPLETE, keys, argv)) === 1 ? 'ok' : 'gone';
      } catch (err) {
        if (/^EMQSTALE/.test(String((err as Error).message))) return 'stale';
        throw err;
      }
    },
    /** Jobs.retry/7: parent_fail_of/3 (HMGET parent parent_queue parent_policy), then @retry with the flow arms' arguments. */
    async retry(queue: string, id: string, token: number, delayMs: number, maxAttempts: number, error: string): Promise<'scheduled' | 'dead' | 'stale'> {
      const row = jobKey(queue, id);
      let keys = [qk(queue, 'active'), qk(queue, 'schedule'), qk(queue, 'dead'), row];
      let argv: string[] = [id, String(token), String(delayMs), String(maxAttempts), error, qk(queue, '')];
      const [parent, parentQueue, policy] = ((await cmd('HMGET', row, 'parent', 'parent_queue', 'parent_policy')) as unknown[]).map(str) as [
        string | null,
        string | null,
        string | null,
      ];
      const arm = policy === 'id' ? 'id' : 'fp';
      if (parent !== null && parentQueue !== null && parentQueue !== queue) {
        keys = [...keys, qk(queue, 'flow:outbox')];
        argv = [...argv, `xq:${arm}`, parentQueue, parent];
      } else if (parent !== null) {
        const pk = jobKey(queue, parent);
        keys = [...keys, `${pk}:failed`, `${pk}:unsuccessful`, `${pk}:dependencies`, pk];
        argv = [...argv, `sq:${arm}`, parent];
      }
      try {
        return str(await evalScript(RETRY, keys, argv)) === 'dead' ? 'dead' : 'scheduled';
      } catch (err) {
        if (/^EMQSTALE/.test(String((err as Error).message))) return 'stale';
        throw err;
      }
    },
    /**
     * Pump.deliver_flow_completions/3: LRANGE up to `batch` outbox entries, deliver each on its
     * parent's slot (@flow_deliver) until one does not, then LTRIM the delivered prefix. Only
     * complete-entries are delivered here (the soak fails no flow member, so no fail-entry).
     */
    async deliverFlowCompletions(queue: string, batch: number): Promise<number> {
      const outbox = qk(queue, 'flow:outbox');
      const entries = (await cmd('LRANGE', outbox, '0', String(batch - 1))) as Buffer[];
      let delivered = 0;
      for (const entry of entries) {
        const cuts: number[] = [];
        for (let at = -1; cuts.length < 3; cuts.push(at)) if ((at = entry.indexOf(0, at + 1)) < 0) break;
        if (cuts.length < 3) break;
        const [a, b, c] = cuts as [number, number, number];
        const [parentQueue, parent, child] = [entry.subarray(0, a), entry.subarray(a + 1, b), entry.subarray(b + 1, c)].map((x) => x.toString('latin1')) as [
          string,
          string,
          string,
        ];
        if (parentQueue === '' || !validBrandedId(parent)) break; // a fail-entry or a malformed one: halts, as deliver_one's 0
        const pk = jobKey(parentQueue, parent);
        const r = await evalScript(FLOW_DELIVER, [`${pk}:dependencies`, `${pk}:processed`, pk], [child, entry.subarray(c + 1), parent, qk(parentQueue, '')]);
        if (Number(r) !== 1) break;
        delivered++;
      }
      if (delivered > 0) await cmd('LTRIM', outbox, String(delivered), '-1');
      return delivered;
    },
    /** The server's clock in ms (TIME), for the completion log. */
    async serverMs(): Promise<number> {
      const [s, us] = ((await cmd('TIME')) as unknown[]).map((v) => Number(str(v)));
      return s! * 1000 + Math.floor(us! / 1000);
    },
    /** When a held job's lease was taken (its active score less the lease), on the server's clock. */
    async claimedAt(queue: string, id: string, leaseMs: number): Promise<number | null> {
      const score = await cmd('ZSCORE', qk(queue, 'active'), id);
      return score === null ? null : Number(str(score)) - leaseMs;
    },
  };
}

export type LibraryVerbs = ReturnType<typeof libraryVerbs>;
