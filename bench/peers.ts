// The peer to beat: BullMQ's Queue.add over ioredis, the client BullMQ users run it with
// (both dev dependencies, used by the benchmark only).
import { createRequire } from 'node:module';
import { Queue } from 'bullmq';
import type { ValkeyEndpoint } from '../shared/connections/valkey-url.js';
import { drive, measured, type Measured } from './drive.js';
import { payloadOf } from './payload.js';

export const BULL_PREFIX = 'bench-bull';

const require = createRequire(import.meta.url);
const versionOf = (pkg: string) => String((require(`${pkg}/package.json`) as { version: string }).version);

export interface PeerResult extends Measured {
  label: string;
}

/** Queue.add with `inFlight` adds outstanding: a warm-up, then `ms` measured. A string says why it was skipped. */
export async function measureBullmq(
  endpoint: ValkeyEndpoint,
  serverCpu: () => Promise<number>,
  inFlight: number,
  warmMs: number,
  ms: number,
): Promise<PeerResult> {
  const { host, port, db, username, password } = endpoint;
  const connection = { host, port, db, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
  const queue = new Queue('enqueue', { connection, prefix: BULL_PREFIX });
  try {
    await queue.waitUntilReady();
    let n = 0;
    const add = async () => {
      await queue.add('job', payloadOf(n++));
      return 1;
    };
    await drive(inFlight, warmMs, add);
    const m = await measured(serverCpu, () => drive(inFlight, ms, add));
    return { ...m, label: `BullMQ ${versionOf('bullmq')} Queue.add (ioredis ${versionOf('ioredis')})` };
  } finally {
    await queue.close();
  }
}
