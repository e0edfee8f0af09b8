// The library's consumer, one process: an EchoMQ.Consumer loop per queue, each on its own
// connection (the soak starts several such processes, kills one mid-job with SIGKILL and starts
// it again, as the library's supervisor restarts a permanent child). The order of steps is
// EchoMQ.Consumer's (54703564357): Jobs.reap, Jobs.promote(pump_batch), then Lanes.claim
// until empty, each job settled by Jobs.complete (:ok) or Jobs.retry ({:error, _}); then, for
// the flat jobs EchoMQ.Consumer never claims (flows, plain jobs), Jobs.claim until empty,
// settled the same way; then park on BLPOP of the queue's wake key for one beat. A failed step
// crashes the loop, which starts over (the library's `{:ok, _} =` match and :permanent restart).
//
// The handler reads the job's tag at the head of its payload (`<verb>~<fate>~<unique>|`; a
// webhook's, at the head of the delivered body its envelope holds):
// fate `once` fails the first attempt, `dead` every attempt (to the dead set after
// max_attempts). Every claim and settle is a line in this loop's completion log (JSON), with
// server-clock times: the soak's verifier reads it.
import { createHash } from 'node:crypto';
import { openSync, writeSync } from 'node:fs';
import { Decoder, GlideClient, Logger } from '@valkey/valkey-glide';
import { type Claimed, libraryVerbs, type LibraryVerbs } from './verbs.js';

export interface ConsumerConfig {
  port: number;
  /** This process's index, in its connections' names and in every log line. */
  loop: number;
  queues: string[];
  leaseMs: number;
  beatMs: number;
  retryDelayMs: number;
  maxAttempts: number;
  /** At most this many claims per drain, so the flat claim is reached while lanes stay busy (a bound the library's drain does not have). */
  drainCap: number;
  log: string;
}

/** A line of the completion log. */
export type LogLine =
  | { e: 'claim'; l: number; q: string; id: string; t: number; at: number | null; g: string | null; v: string }
  | { e: 'done'; l: number; q: string; id: string; t: number; at: number | null; done: number; v: string; r: string; h: string }
  | { e: 'retry'; l: number; q: string; id: string; t: number; r: string }
  | { e: 'kill'; l: number; q: string; id: string; t: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const digest = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('hex').slice(0, 16);

/** What the producer sent: a payload as it is, a webhook delivery's raw body from its envelope (`{"v":1,…,"body":"<base64>"}`). */
export function sentBytes(payload: Uint8Array): Uint8Array {
  if (!Buffer.from(payload.subarray(0, 6)).equals(Buffer.from('{"v":1'))) return payload;
  try {
    const { body } = JSON.parse(Buffer.from(payload).toString('utf8')) as { body?: unknown };
    return typeof body === 'string' ? Buffer.from(body, 'base64') : payload;
  } catch {
    return payload;
  }
}

/** The tag at the head of a payload: verb, fate. */
export function tagOf(payload: Uint8Array): { verb: string; fate: string; tag: string } {
  const bar = Buffer.from(payload).indexOf(0x7c);
  const tag = Buffer.from(payload.subarray(0, Math.max(0, bar))).toString('latin1');
  const [verb = '?', fate = 'ok'] = tag.split('~');
  return { verb, fate, tag };
}

export async function runConsumer(cfg: ConsumerConfig, control: { stop: boolean; dieMidJob: boolean }): Promise<void> {
  const fd = openSync(cfg.log, 'a');
  const write = (line: LogLine) => writeSync(fd, `${JSON.stringify(line)}\n`);
  await Promise.all(cfg.queues.map((q) => consume(q, cfg, control, write)));
}

/** EchoMQ.Consumer's loop for one queue, on a connection of its own. */
async function consume(q: string, cfg: ConsumerConfig, control: { stop: boolean; dieMidJob: boolean }, write: (line: LogLine) => void): Promise<void> {
  const conn = await GlideClient.createClient({
    addresses: [{ host: '127.0.0.1', port: cfg.port }],
    clientName: `soak-consumer-${cfg.loop}`,
    defaultDecoder: Decoder.Bytes,
    requestTimeout: cfg.beatMs + 5_000,
  });
  const lib: LibraryVerbs = libraryVerbs(conn);
  const settle = async (job: Claimed) => {
    // the soak's own reads (not the library's) must not crash the loop with a job in hand
    const at = await lib.claimedAt(q, job.id, cfg.leaseMs).catch(() => null);
    const sent = sentBytes(job.payload);
    const { verb, fate } = tagOf(sent);
    write({ e: 'claim', l: cfg.loop, q, id: job.id, t: job.attempts, at, g: job.group, v: verb });
    if (control.dieMidJob) {
      write({ e: 'kill', l: cfg.loop, q, id: job.id, t: job.attempts });
      process.kill(process.pid, 'SIGKILL');
      await sleep(60_000);
    }
    if (fate === 'dead' || (fate === 'once' && job.attempts === 1)) {
      // logged even when its reply is lost: it may have run, so a quick re-claim is legal
      const r = await lib.retry(q, job.id, job.attempts, cfg.retryDelayMs, cfg.maxAttempts, `soak: ${fate}`).catch((err: Error) => {
        write({ e: 'retry', l: cfg.loop, q, id: job.id, t: job.attempts, r: 'error' });
        throw err;
      });
      write({ e: 'retry', l: cfg.loop, q, id: job.id, t: job.attempts, r });
      return;
    }
    // A lost reply is asked again with the same token: the answer then is ok (it had not run),
    // gone (it had, or another holder's completion after the lease ran out) or stale.
    let r: string | undefined;
    for (let tries = 0; r === undefined; tries++) {
      try {
        r = await lib.complete(q, job.id, job.attempts);
        if (tries > 0 && r !== 'ok') r = `${r} after an error`;
      } catch (err) {
        if (tries >= 100) throw err;
        await sleep(200);
      }
    }
    const done = await lib.serverMs().catch(() => Date.now()); // the same host's clock
    write({ e: 'done', l: cfg.loop, q, id: job.id, t: job.attempts, at, done, v: verb, r, h: digest(sent) });
  };

  /** Claims and settles until the claim answers empty (true), or up to the cap (false). */
  const drain = async (claim: (q: string, lease: number) => Promise<Claimed | null>): Promise<boolean> => {
    for (let n = 0; n < cfg.drainCap && !control.stop; n++) {
      const job = await claim(q, cfg.leaseMs);
      if (!job) return true;
      await settle(job);
    }
    return false;
  };

  const wake = `emq:{${q}}:wake`;
  while (!control.stop) {
    try {
      await lib.reap(q);
      await lib.promote(q, 100);
      const lanesEmpty = await drain(lib.gclaim);
      const flatEmpty = await drain(lib.claim);
      // parks only when the claims answered empty, as the library's drain does
      if (lanesEmpty && flatEmpty && !control.stop) await conn.customCommand(['BLPOP', wake, (cfg.beatMs / 1000).toFixed(3)]);
    } catch {
      await sleep(100); // the loop crashed: it starts over, as its supervisor would restart it
    }
  }
  conn.close();
}

// As a child process: the config in SOAK_CONSUMER, `die-mid-job` and `stop` by IPC.
if (process.env.SOAK_CONSUMER && process.send) {
  Logger.init('off'); // glide's own warnings (reconnects, NOSCRIPT) are the faults the soak injects
  const control = { stop: false, dieMidJob: false };
  process.on('message', (m) => {
    if (m === 'stop') control.stop = true;
    if (m === 'die-mid-job') control.dieMidJob = true;
  });
  runConsumer(JSON.parse(process.env.SOAK_CONSUMER) as ConsumerConfig, control).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`consumer: ${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
