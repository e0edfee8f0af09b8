// Memory per job: bytes Valkey holds for one job of a 200-byte payload, EchoMQ's (a row hash
// and a pending-set entry, written by enqueueMany over glide) against BullMQ's (Queue.addBulk:
// a job hash, a wait-list entry, an event in its stream, the id counter), at two settings of
// hash-max-listpack-value: the server's default (64 bytes, under which a 200-byte field turns
// a hash into a hashtable) and 1024 (the hash stays a listpack). Two measures each: the
// used_memory delta over JOBS jobs, and MEMORY USAGE (SAMPLES 0) of every key written, per job.
// Needs the bench's own server: it flushes it and changes a setting (restored after).
import { Queue } from 'bullmq';
import { connectGlide } from '../../shared/connections/glide.js';
import { enqueueMany, pendingKey } from '../../shared/index.js';
import { BATCH, payloadOf, type Bench } from '../common.js';
import { fmtInt, mdTable } from '../report.js';
import { BULL_PREFIX, bullConnection } from './peer.js';

const JOBS = 20_000;
export const PAYLOAD_BYTES = 200;
const SETTINGS = [64, 1024];

/** A job document of exactly PAYLOAD_BYTES as JSON: the bench's job, padded. */
function job(n: number): Record<string, unknown> {
  const base = { ...payloadOf(n), pad: '' };
  base.pad = 'x'.repeat(PAYLOAD_BYTES - Buffer.byteLength(JSON.stringify(base)));
  return base;
}

interface Measured {
  /** used_memory after less before, per job. */
  delta: number;
  /** MEMORY USAGE of every key written, summed, per job; and of one job's own hash. */
  keys: number;
  hash: number;
  encoding: string;
}

/** The memory section's markdown lines, or a line saying why it did not run. */
export async function memoryRows(bench: Bench): Promise<string[]> {
  const { server } = bench;
  if (!server.owned) return ['not measured: VALKEY_URL names a server of your own, and this section flushes it'];
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

  const lines: string[] = [];
  const table: string[][] = [];
  try {
    for (const setting of SETTINGS) {
      await server.call('CONFIG', 'SET', 'hash-max-listpack-value', String(setting));
      const queue = 'bench-mem';
      const glide = await connectGlide(server.url);
      let emq: Measured;
      try {
        emq = await settle(
          async () => {
            for (let n = 0; n < JOBS; n += BATCH) {
              await enqueueMany(
                glide,
                queue,
                Array.from({ length: Math.min(BATCH, JOBS - n) }, (_, i) => ({ payload: JSON.stringify(job(n + i)) })),
              );
            }
          },
          `emq:{${queue}}:*`,
          async () => `emq:{${queue}}:job:${String(((await server.call('ZRANGE', pendingKey(queue), '0', '0')) as string[])[0])}`,
        );
      } finally {
        await glide.close();
      }
      const bull = new Queue(queue, { connection: bullConnection(server.endpoint), prefix: BULL_PREFIX });
      let bullmq: Measured;
      try {
        await bull.waitUntilReady();
        bullmq = await settle(
          async () => {
            for (let n = 0; n < JOBS; n += BATCH) {
              await bull.addBulk(Array.from({ length: Math.min(BATCH, JOBS - n) }, (_, i) => ({ name: 'job', data: job(n + i) })));
            }
          },
          `${BULL_PREFIX}:${queue}:*`,
          async () => `${BULL_PREFIX}:${queue}:1`,
        );
      } finally {
        await bull.close();
      }
      for (const [who, m] of [
        ['EchoMQ (enqueueMany, glide)', emq],
        ['BullMQ (Queue.addBulk)', bullmq],
      ] as const) {
        table.push([String(setting), who, fmtInt(m.delta), fmtInt(m.keys), `${fmtInt(m.hash)} (${m.encoding})`]);
      }
      table.push([String(setting), 'BullMQ / EchoMQ', `${(bullmq.delta / emq.delta).toFixed(2)}x`, `${(bullmq.keys / emq.keys).toFixed(2)}x`, '']);
    }
  } finally {
    await server.call('CONFIG', 'SET', 'hash-max-listpack-value', before);
    await server.reset();
  }
  const head = ['hash-max-listpack-value', 'who', 'used_memory delta, bytes/job', 'MEMORY USAGE of its keys, bytes/job', "one job's hash, bytes (encoding)"];
  lines.push(
    `${fmtInt(JOBS)} jobs of a ${PAYLOAD_BYTES}-byte JSON payload into one queue, in batches of ${BATCH}, on a flushed server; per setting of hash-max-listpack-value (the server's default was ${before}).`,
    '',
    mdTable(head, table, new Set([2, 3, 4])),
    '',
    "BullMQ's keys include its events stream (one entry per job, trimmed at ~10,000 by default) and its id counter; EchoMQ writes a row and a pending-set entry per job.",
  );
  return lines;
}
