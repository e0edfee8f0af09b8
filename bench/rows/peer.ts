// The peer to beat: BullMQ's Queue.add and Queue.addBulk over ioredis, as BullMQ users run it
// (dev dependencies); its HTTP peer (Hono + BullMQ) runs with the HTTP rows (servers.ts).
import { createRequire } from 'node:module';
import { Queue } from 'bullmq';
import type { ValkeyEndpoint } from '../../shared/connections/valkey-url.js';
import { BATCH, BATCHES_IN_FLIGHT, IN_FLIGHT, drivenRow, payloadOf, type Bench } from '../common.js';
import type { Row } from '../report.js';

export const BULL_PREFIX = 'bench-bull';

const require = createRequire(import.meta.url);
export const versionOf = (pkg: string) => String((require(`${pkg}/package.json`) as { version: string }).version);

/** ioredis's options for `endpoint`. */
export function bullConnection({ host, port, db, username, password }: ValkeyEndpoint) {
  return { host, port, db, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}

export async function peerRows(bench: Bench): Promise<void> {
  await bench.row('bull-add', (r) => bullRow(bench, r, 1, IN_FLIGHT));
  await bench.row('bull-bulk', (r) => bullRow(bench, r, BATCH, BATCHES_IN_FLIGHT));
}

/** Queue.add (`batch` 1) or Queue.addBulk of `batch` jobs, `inFlight` calls outstanding: a warm-up, then the measured window. */
async function bullRow(bench: Bench, r: Row, batch: number, inFlight: number): Promise<void> {
  const queue = new Queue(`enqueue-${r.key}`, { connection: bullConnection(bench.server.endpoint), prefix: BULL_PREFIX });
  try {
    await queue.waitUntilReady();
    let n = 0;
    const step =
      batch === 1
        ? async () => (await queue.add('job', payloadOf(n++)), 1)
        : async () => (await queue.addBulk(Array.from({ length: batch }, () => ({ name: 'job', data: payloadOf(n++) })))).length;
    await drivenRow(r, { inFlight, step, valkey: bench.valkey, count: () => queue.getWaitingCount(), where: 'the wait list' });
    r.notes.push(`BullMQ ${versionOf('bullmq')}, ioredis ${versionOf('ioredis')}; ${inFlight} calls in flight; latency per call`);
  } finally {
    await queue.close();
  }
}
