// npm run bench: enqueue throughput against one private server, four ways, in one run.
//   1. the server ceiling: @enqueue with the client out of the way (ceiling.ts)
//   2. BullMQ Queue.add, 64 in flight (peers.ts)
//   3. our enqueue() over glide, 64 in flight
//   4. our enqueueMany() over glide, batches of 100, 8 batches in flight
//   5. our enqueue() over connectRest through the gateway (`emq gateway`, a child process
//      in front of the same server), 64 in flight
//   6. the gateway's enqueue request vs a no-op Hono server (noop-server.ts, a child
//      process), under the same node:http load generator, 64 in flight (http-load.ts)
// Then a table, the targets, and exit. VALKEY_URL points it at another server (never
// flushed: only the bench's own keys are removed); BENCH_ONLY=ceiling,bullmq,single,batch,
// rest,gateway,noop runs a subset (for profiling one phase); BENCH_MAX_BATCH sets
// connectGlide's maxBatch. Child processes are stopped at the end, whatever happens.
import type { GlideClient } from '@valkey/valkey-glide';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { enqueue, enqueueMany, mintId, pendingKey } from '../shared/index.js';
import { measureCeiling, type Ceiling } from './ceiling.js';
import { startGateway, startNoop, stopAll, type GatewayChild } from './children.js';
import { drive, measured, type Measured } from './drive.js';
import { errorsOf } from './http-load.js';
import { enqueueRequests, measureLoad, measureRest, type LoadPhase } from './http-phases.js';
import { payloadOf } from './payload.js';
import { measureBullmq } from './peers.js';
import { machine, table, targets, type Row } from './report.js';
import { Server } from './server.js';

const WARM_MS = 1_000;
const MEASURE_MS = 5_000;
const IN_FLIGHT = 64;
const BATCH = 100;
const BATCHES_IN_FLIGHT = 8;
/** BENCH_MAX_BATCH: glide's coalescing cap (connectGlide's maxBatch), to try other settings. */
const MAX_BATCH = Number(process.env.BENCH_MAX_BATCH) || undefined;
/** The whole run's bound: past it, the bench stops the server and exits. */
const DEADLINE_MS = 150_000;

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const runs = (phase: string) => !only || only.includes(phase);

/** Glide round trips: each customCommand or exec is one; exec carries many commands. */
interface Trips {
  calls: number;
  commands: number;
}

function countTrips(connection: GlideConnection): Trips {
  const trips = { calls: 0, commands: 0 };
  const client = connection.client as GlideClient;
  const custom = client.customCommand.bind(client);
  const exec = client.exec.bind(client);
  client.customCommand = (...args: Parameters<GlideClient['customCommand']>) => {
    trips.calls++;
    trips.commands++;
    return custom(...args);
  };
  client.exec = async (...args: Parameters<GlideClient['exec']>) => {
    trips.calls++;
    const replies = await exec(...args);
    trips.commands += replies?.length ?? 0;
    return replies;
  };
  return trips;
}

interface Ours extends Measured {
  jobs: number;
  trips: Trips;
}

/** Our client over glide: `step` is one call (one job or one batch) on a fresh connection. */
async function measureOurs(
  server: Server,
  queue: string,
  inFlight: number,
  step: (connection: GlideConnection, queue: string) => Promise<number>,
): Promise<Ours> {
  const connection = await connectGlide(MAX_BATCH ? { url: server.url, maxBatch: MAX_BATCH } : server.url);
  try {
    await drive(inFlight, WARM_MS, () => step(connection, queue));
    const trips = countTrips(connection);
    const m = await measured(() => server.cpuSeconds(), () => drive(inFlight, MEASURE_MS, () => step(connection, queue)));
    const jobs = Number(await server.call('ZCARD', pendingKey(queue)));
    return { ...m, jobs, trips };
  } finally {
    await connection.close();
  }
}

let n = 0;
const job = () => ({ id: mintId(), payload: JSON.stringify(payloadOf(n++)) });

async function single(connection: GlideConnection, queue: string): Promise<number> {
  const { id, payload } = job();
  const verdict = await enqueue(connection, queue, id, payload);
  if (verdict !== 'enqueued') throw new Error(`fresh id ${id} answered ${verdict}`);
  return 1;
}

async function batch(connection: GlideConnection, queue: string): Promise<number> {
  const jobs = Array.from({ length: BATCH }, job);
  const results = await enqueueMany(connection, queue, jobs);
  if (results.some((r) => r.verdict !== 'enqueued')) throw new Error('a fresh id in a batch answered duplicate');
  return results.length;
}

function perCall(trips: Trips, seconds: number): string {
  const avg = trips.calls > 0 ? trips.commands / trips.calls : 0;
  return `${Math.round(trips.calls / seconds).toLocaleString('en-US')} glide calls/s, ${avg.toFixed(1)} commands per call`;
}

async function main(): Promise<number> {
  const t0 = performance.now();
  const server = await Server.open();
  let stopping: Promise<void> | undefined;
  // the children first: the gateway fronts the server
  const stop = () => (stopping ??= stopAll().finally(() => server.close()));
  const bail = (why: string) => {
    process.stderr.write(`bench: ${why}; stopping the server\n`);
    const forced = setTimeout(() => process.exit(2), 5_000);
    void stop().finally(() => {
      clearTimeout(forced);
      process.exit(2);
    });
  };
  setTimeout(() => bail(`over ${DEADLINE_MS / 1000} s`), DEADLINE_MS).unref();
  process.once('SIGINT', () => bail('interrupted'));

  const rows: Row[] = [];
  const extra: string[] = [];
  let ceiling: Ceiling | undefined;
  let bullmq: number | undefined;
  let singleOps: number | undefined;
  let batchOps: number | undefined;
  let restOps: number | undefined;
  let gatewayOps: number | undefined;
  let noopOps: number | undefined;
  const phase = async (name: string, body: () => Promise<Row>) => {
    process.stderr.write(`bench: ${name}...\n`);
    try {
      await server.reset();
      rows.push(await body());
    } catch (err) {
      rows.push({ name, note: `failed: ${(err as Error).stack ?? String(err)}` });
    }
  };

  let version = '?';
  try {
    version = await server.version();
    if (runs('ceiling')) {
      await phase('server ceiling', async () => {
        ceiling = await measureCeiling(server);
        extra.push(`server ceiling: ${ceiling.method}`, ...ceiling.notes.map((s) => `  ${s}`));
        const trust = ceiling.problems.length > 0 ? `NOT TRUSTED: ${ceiling.problems.join('; ')}` : undefined;
        const { opsPerSec, clientCores, serverCores } = ceiling;
        return {
          name: 'server ceiling (EVALSHA @enqueue)',
          opsPerSec,
          ...(clientCores !== undefined ? { clientCores } : {}),
          ...(serverCores !== undefined ? { serverCores } : {}),
          ...(trust ? { note: trust } : {}),
        };
      });
      if (ceiling?.problems.length) ceiling = undefined;
    }
    if (runs('bullmq')) {
      await phase('BullMQ Queue.add', async () => {
        const r = await measureBullmq(server.endpoint, () => server.cpuSeconds(), IN_FLIGHT, WARM_MS, MEASURE_MS);
        bullmq = r.ops / r.seconds;
        extra.push(`BullMQ: ${r.label}, ${IN_FLIGHT} in flight`);
        return { name: 'BullMQ Queue.add', opsPerSec: bullmq, clientCores: r.clientCores, serverCores: r.serverCores };
      });
    }
    if (runs('single')) {
      await phase('enqueue over glide', async () => {
        const r = await measureOurs(server, 'bench-single', IN_FLIGHT, single);
        singleOps = r.ops / r.seconds;
        extra.push(`enqueue: ${IN_FLIGHT} in flight, maxBatch ${MAX_BATCH ?? 'default'}; ${perCall(r.trips, r.seconds)}; pending set holds ${r.jobs}`);
        return { name: 'enqueue (glide)', opsPerSec: singleOps, clientCores: r.clientCores, serverCores: r.serverCores };
      });
    }
    if (runs('batch')) {
      await phase('enqueueMany over glide', async () => {
        const r = await measureOurs(server, 'bench-batch', BATCHES_IN_FLIGHT, batch);
        batchOps = r.ops / r.seconds;
        extra.push(`enqueueMany: batches of ${BATCH}, ${BATCHES_IN_FLIGHT} in flight, maxBatch ${MAX_BATCH ?? 'default'}; ${perCall(r.trips, r.seconds)}; pending set holds ${r.jobs}`);
        return { name: `enqueueMany x${BATCH} (glide)`, opsPerSec: batchOps, clientCores: r.clientCores, serverCores: r.serverCores };
      });
    }
    // 5 and 6a share one gateway process, started by whichever runs first
    let gateway: GatewayChild | undefined;
    const gatewayUp = async () => (gateway ??= await startGateway(server.url));
    if (runs('rest')) {
      await phase('enqueue over REST → gateway', async () => {
        const gw = await gatewayUp();
        const r = await measureRest(server, gw, 'bench-rest', IN_FLIGHT, WARM_MS, MEASURE_MS);
        restOps = r.ops / r.seconds;
        extra.push(`enqueue REST: connectRest (fetch) → gateway ${gw.url}, ${IN_FLIGHT} in flight; pending set holds ${r.jobs}`);
        return { name: 'enqueue (REST → gateway)', opsPerSec: restOps, ...httpCells(r) };
      });
    }
    if (runs('gateway')) {
      await phase('gateway under node:http load', async () => {
        const gw = await gatewayUp();
        const queue = 'bench-gw';
        const r = await measureLoad(server, gw, gw.producer, enqueueRequests(queue), IN_FLIGHT, WARM_MS, MEASURE_MS);
        gatewayOps = r.ops / r.seconds;
        const jobs = Number(await server.call('ZCARD', pendingKey(queue)));
        extra.push(`gateway (node:http): ${loadLine(r)}; pending set holds ${jobs} of ${r.okTotal} answered {"result":1}`);
        const notes = [
          ...(r.load.ok < r.load.requests ? [`NOT TRUSTED: errors ${errorsOf(r.load)}`] : []),
          ...(jobs !== r.okTotal ? [`NOT TRUSTED: pending set holds ${jobs}, ${r.okTotal} enqueued`] : []),
        ];
        return { name: 'gateway enqueue (node:http load)', opsPerSec: gatewayOps, ...httpCells(r), ...(notes.length ? { note: notes.join('; ') } : {}) };
      });
    }
    if (gateway) {
      const gw: GatewayChild = gateway;
      const code = await gw.stop();
      extra.push(`gateway: SIGTERM, exit code ${code}`);
      if (code !== 0) rows.push({ name: 'gateway exit', note: `failed: exit code ${code}, stderr: ${gw.stderr().trim().slice(-500)}` });
    }
    if (runs('noop')) {
      await phase('no-op Hono under node:http load', async () => {
        const noop = await startNoop();
        let r: LoadPhase;
        try {
          // the same requests, headers and bodies as the gateway's, ids minted the same way
          r = await measureLoad(server, noop, `prd-${'0'.repeat(32)}`, enqueueRequests('bench-noop'), IN_FLIGHT, WARM_MS, MEASURE_MS);
        } finally {
          const code = await noop.stop();
          extra.push(`no-op server: SIGTERM, exit code ${code}`);
          if (code !== 0) rows.push({ name: 'no-op exit', note: `failed: exit code ${code}, stderr: ${noop.stderr().trim().slice(-500)}` });
        }
        noopOps = r.ops / r.seconds;
        extra.push(`no-op Hono (node:http): ${loadLine(r)}`);
        const trust = r.load.ok < r.load.requests ? { note: `NOT TRUSTED: errors ${errorsOf(r.load)}` } : {};
        return { name: 'no-op Hono (node:http load)', opsPerSec: noopOps, ...httpCells(r), ...trust };
      });
    }
  } finally {
    await stop();
  }

  const ratios = [
    ['gateway / no-op Hono, same node:http load', gatewayOps, noopOps],
    ['enqueue REST (fetch) / gateway under node:http load', restOps, gatewayOps],
    ['enqueue REST / enqueue glide', restOps, singleOps],
  ] as const;
  for (const [what, a, b] of ratios) {
    const r = ratioOf(a, b);
    if (r !== undefined) extra.push(`ratio ${what}: ${fmt(a!)}/s / ${fmt(b!)}/s = ${r.toFixed(2)}x`);
  }

  const verdict = targets([
    { what: 'single enqueue vs BullMQ Queue.add', ratio: ratioOf(singleOps, bullmq), atLeast: 1.0 },
    { what: `enqueueMany x${BATCH} vs server ceiling`, ratio: ratioOf(batchOps, ceiling?.opsPerSec), atLeast: 0.6 },
  ]);
  const out = [
    '',
    machine(`${version} (${server.owned ? 'private, started by the bench' : 'VALKEY_URL'})`),
    '',
    table(rows, bullmq, ceiling?.opsPerSec),
    '',
    ...extra,
    '',
    verdict.text,
    `(whole run ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  return rows.some((r) => r.note?.startsWith('failed')) ? 1 : 0;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** The table cells an HTTP phase fills beyond ops/s. */
function httpCells(r: { clientCores: number; serverCores: number; httpCores: number | undefined; p50Ms: number | undefined; p99Ms: number | undefined }): Omit<Row, 'name'> {
  return {
    clientCores: r.clientCores,
    serverCores: r.serverCores,
    ...(r.httpCores !== undefined ? { httpCores: r.httpCores } : {}),
    ...(r.p50Ms !== undefined ? { p50Ms: r.p50Ms } : {}),
    ...(r.p99Ms !== undefined ? { p99Ms: r.p99Ms } : {}),
  };
}

function loadLine(r: LoadPhase): string {
  const l = r.load;
  return `${IN_FLIGHT} in flight (keep-alive Agent, maxSockets ${IN_FLIGHT}), ${fmt(l.requests / l.seconds)} requests/s, errors: ${errorsOf(l)}`;
}

function ratioOf(a: number | undefined, b: number | undefined): number | undefined {
  return a !== undefined && b !== undefined && b > 0 ? a / b : undefined;
}

// glide's client keeps the loop alive after close; exit explicitly.
main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
