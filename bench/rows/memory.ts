// Memory per job of a 200-byte payload, EchoMQ's (enqueueMany over glide) against BullMQ's
// (Queue.addBulk), at hash-max-listpack-value 64 (the default: a 200-byte field makes a hash a
// hashtable) and 1024 (it stays a listpack): the used_memory delta, and MEMORY USAGE of each key.
import { Queue } from 'bullmq';
import { connectGlide } from '../../shared/connections/glide.js';
import { enqueueMany, pendingKey } from '../../shared/index.js';
import { BATCH, payloadOf, type Bench } from '../common.js';
import { fmtInt, mdTable } from '../report.js';
import { BULL_PREFIX, bullConnection } from './peer.js';

const JOBS = 20_000;
const PAYLOAD_BYTES = 200;
const SETTINGS = [64, 1024];

/** A job document of exactly PAYLOAD_BYTES as JSON: the bench's job, padded. */
type Job = Record<string, unknown>;
function job(n: number): Job {
  const base = { ...payloadOf(n), pad: '' };
  base.pad = 'x'.repeat(PAYLOAD_BYTES - Buffer.byteLength(JSON.stringify(base)));
  return base;
}

/** Per job: used_memory after less before, and MEMORY USAGE of every key written; of one job's own hash. */
type Measured = { delta: number; keys: number; hash: number; encoding: string };

/** The memory section's markdown lines, or a line saying why it did not run. */
export async function memoryRows(bench: Bench): Promise<string[]> {
  const { server } = bench;
  // RESP3: glide's record [{ key, value }]; RESP2: [name, value]
  const got = (await server.call('CONFIG', 'GET', 'hash-max-listpack-value')) as Array<string | { key: string; value: string }>;
  const first = got[0];
  const before = String(typeof first === 'object' ? first.value : got[1]);
  const used = async () => Number((await server.info('memory')).get('used_memory'));
  const usage = async (keys: readonly string[]) => {
    let sum = 0;
    for (const k of keys) sum += Number(await server.call('MEMORY', 'USAGE', k, 'SAMPLES', '0'));
    return sum;
  };
  const settle = async (write: () => Promise<void>, pattern: string, sampleHash: () => Promise<string>): Promise<Measured> => {
    // SYNC: a lazy flush (Valkey 8's default) would free the last keys while these are written
    await server.call('FLUSHALL', 'SYNC');
    await server.loadScript();
    const m0 = await used();
    await write();
    const m1 = await used();
    const hashKey = await sampleHash();
    return {
      delta: (m1 - m0) / JOBS,
      keys: (await usage(await server.keys(pattern))) / JOBS,
      hash: Number(await server.call('MEMORY', 'USAGE', hashKey, 'SAMPLES', '0')),
      encoding: String(await server.call('OBJECT', 'ENCODING', hashKey)),
    };
  };

  const table: string[][] = [];
  const queue = 'bench-mem';
  const batches = async (write: (jobs: Job[]) => Promise<unknown>) => {
    for (let n = 0; n < JOBS; n += BATCH) await write(Array.from({ length: Math.min(BATCH, JOBS - n) }, (_, i) => job(n + i)));
  };
  try {
    for (const setting of SETTINGS) {
      await server.call('CONFIG', 'SET', 'hash-max-listpack-value', String(setting));
      const glide = await connectGlide(server.url);
      const toEmq = (jobs: Job[]) =>
        enqueueMany(
          glide,
          queue,
          jobs.map((j) => ({ payload: JSON.stringify(j) })),
        );
      const firstRow = async () => `emq:{${queue}}:job:${String(((await server.call('ZRANGE', pendingKey(queue), '0', '0')) as string[])[0])}`;
      const emq = await settle(() => batches(toEmq), `emq:{${queue}}:*`, firstRow).finally(() => glide.close());
      const bull = new Queue(queue, { connection: bullConnection(server.endpoint), prefix: BULL_PREFIX });
      const toBull = (jobs: Job[]) => bull.addBulk(jobs.map((data) => ({ name: 'job', data })));
      const bullHash = async () => `${BULL_PREFIX}:${queue}:1`;
      const bullmq = await bull
        .waitUntilReady()
        .then(() => settle(() => batches(toBull), `${BULL_PREFIX}:${queue}:*`, bullHash))
        .finally(() => bull.close());
      table.push([String(setting), 'EchoMQ (enqueueMany, glide)', ...cells(emq)], [String(setting), 'BullMQ (Queue.addBulk)', ...cells(bullmq)]);
      table.push([String(setting), 'BullMQ / EchoMQ', `${(bullmq.delta / emq.delta).toFixed(2)}x`, `${(bullmq.keys / emq.keys).toFixed(2)}x`, '']);
    }
  } finally {
    await server.call('CONFIG', 'SET', 'hash-max-listpack-value', before);
    await server.reset();
  }
  const head = ['hash-max-listpack-value', 'who', 'used_memory delta, bytes/job', 'MEMORY USAGE of its keys, bytes/job', "one job's hash, bytes (encoding)"];
  return [
    `${fmtInt(JOBS)} jobs of a ${PAYLOAD_BYTES}-byte JSON payload into one queue, in batches of ${BATCH}, on a flushed server; per setting of hash-max-listpack-value (the server's default was ${before}).`,
    '',
    mdTable(head, table, new Set([2, 3, 4])),
    '',
    "BullMQ's keys include its events stream (one entry per job, trimmed at ~10,000 by default) and its id counter; EchoMQ writes a row and a pending-set entry per job.",
  ];
}

const cells = (m: Measured) => [fmtInt(m.delta), fmtInt(m.keys), `${fmtInt(m.hash)} (${m.encoding})`];
