// The peer to beat: BullMQ's Queue.add and Queue.addBulk over ioredis, the client BullMQ
// users run it with (both dev dependencies, used by the benchmark only).
import { createRequire } from 'node:module';
import { Queue } from 'bullmq';
import type { ValkeyEndpoint } from '../shared/connections/valkey-url.js';
import { drive, type Driven } from './drive.js';
import { payloadOf } from './payload.js';

export const BULL_PREFIX = 'bench-bull';

const require = createRequire(import.meta.url);
export const versionOf = (pkg: string) => String((require(`${pkg}/package.json`) as { version: string }).version);

export interface PeerRun {
  warm: Driven;
  measured: Driven;
  /** The jobs in the queue's wait list after the run. */
  waiting: number;
}

/**
 * Queue.add (`batch` 1) or Queue.addBulk of `batch` jobs, `inFlight` calls outstanding: a
 * warm-up, then `measure` runs the measured window (so the caller can sample CPU around it).
 */
export async function runBullmq(
  endpoint: ValkeyEndpoint,
  name: string,
  batch: number,
  inFlight: number,
  warmMs: number,
  ms: number,
  measure: (work: () => Promise<Driven>) => Promise<Driven>,
): Promise<PeerRun> {
  const { host, port, db, username, password } = endpoint;
  const connection = { host, port, db, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
  const queue = new Queue(name, { connection, prefix: BULL_PREFIX });
  try {
    await queue.waitUntilReady();
    let n = 0;
    const step =
      batch === 1
        ? async () => {
            await queue.add('job', payloadOf(n++));
            return 1;
          }
        : async () => {
            const jobs = await queue.addBulk(Array.from({ length: batch }, () => ({ name: 'job', data: payloadOf(n++) })));
            return jobs.length;
          };
    const warm = await drive(inFlight, warmMs, step);
    const measured = await measure(() => drive(inFlight, ms, step, true));
    const waiting = await queue.getWaitingCount();
    return { warm, measured, waiting };
  } finally {
    await queue.close();
  }
}
