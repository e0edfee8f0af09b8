// npm run bench: enqueue throughput, every way in, from one run on one private Valkey, in
// one table (ratios against the server ceiling and against BullMQ), saved with a chart:
//
//   server alone   1 valkey-benchmark EVALSHA @enqueue, duplicate path (all it can send)
//                  2 the ceiling: EVALSHA @enqueue, unique ids (node RESP generator)
//   peer           3 BullMQ Queue.add, 64 in flight    4 Queue.addBulk x100, 8 in flight
//   glide          5 enqueue(), 64 in flight           6 enqueueMany() x100, 8 in flight
//   cluster        7, 8: 5 and 6 against a private Valkey Cluster (3 primaries), the same
//                  64 queues spread over its slots; ratio cluster / single node
//   REST           9 enqueue() over connectRest → the gateway (`emq gateway`) → Valkey
//   HTTP           64 keep-alive connections, POST /v1/queues/bench/jobs, ~100-byte JSON:
//                  10 the producer Worker bundle under bare `workerd serve` → gateway → Valkey
//                  11 no-op Hono Worker (workerd)   12 1-fetch Worker (workerd) → no-op upstream
//                  13 no-op Hono on Node            14 Hono on Node + BullMQ Queue.add
//                  15 `emq producer` (Hono on Node over glide)
//
// Each row: a warm-up, then the measured window; CPU of every process involved from /proc.
// Rows run one at a time; each starts and stops its own processes. Written to
// bench/results/latest.{md,svg} plus a dated copy, and into README.md's Benchmarks section
// (between its bench markers), unless a subset ran.
//
// Env: BENCH_MS (measured window per row, ms; default 5000), BENCH_WARM_MS (default 1000),
// BENCH_ONLY=name,... (or names as arguments; rows by key or group, see ROWS and GROUPS; a
// subset is not saved), BENCH_LOAD=wrk|node (the HTTP load generator; default wrk when on
// PATH), BENCH_MAX_BATCH (glide's maxBatch), BENCH_SAVE=0 (print only), BENCH_RESULTS=<dir>
// (save any run there instead), BENCH_DEADLINE_MS (default 300000), VALKEY_URL (another
// server for the single-node rows; only the bench's keys are removed then). Every process
// started is stopped at the end, on failure, on SIGINT/SIGTERM and past the deadline.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { command } from '../functions/gateway/glide-commands.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectRest } from '../shared/connections/rest.js';
import type { Connection } from '../shared/connection.js';
import { enqueue, enqueueMany, mintId, pendingKey } from '../shared/index.js';
import { generatorUnique, toolDuplicate, type ServerFigures } from './ceiling.js';
import { chart } from './chart.js';
import { isRunning, spawnServing, spawned, startGateway, startProducer, stopAll, type Child } from './children.js';
import { drive, quantile, type Driven } from './drive.js';
import { pickTool, runLoad, type LoadSpec } from './http-gen.js';
import { payloadOf } from './payload.js';
import { BULL_PREFIX, runBullmq, versionOf } from './peers.js';
import { cpuWindow, type CpuWindow, type Proc } from './proc-cpu.js';
import { details, figure, fmtInt, fmtRatio, machine, ratioOf, table, targets, type Group, type Row } from './report.js';
import { openCluster, Server, type BenchCluster } from './server.js';
import { COMPATIBILITY_DATE, bundleWorker, startWorkerd, workerdVersion } from './workerd.js';

const WARM_MS = Number(process.env.BENCH_WARM_MS) || 1_000;
const MEASURE_MS = Number(process.env.BENCH_MS) || 5_000;
const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS) || 300_000;
const IN_FLIGHT = 64;
const BATCH = 100;
const BATCHES_IN_FLIGHT = 8;
/** Queues the direct rows spread their jobs over (so a cluster's primaries all work). */
const QUEUES = 64;
const PRIMARIES = 3;
/** Commands per second the ceiling rows are sized for: about one measured window's worth. */
const CEILING_RATE = 80_000;
/** glide's coalescing cap (connectGlide's maxBatch), to try other settings. */
const MAX_BATCH = Number(process.env.BENCH_MAX_BATCH) || undefined;
/** After the load stops, the requests wrk abandoned mid-flight still finish on the server. */
const SETTLE_MS = 300;
const HTTP_QUEUE = 'bench';
const BODY = JSON.stringify(payloadOf(0));

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // from dist/bench/
const HERE = fileURLToPath(new URL('.', import.meta.url));
const BUNDLE = join(ROOT, 'dist', 'worker', 'default', 'worker.js');
const RESULTS_DEFAULT = join(ROOT, 'bench', 'results');
const README = join(ROOT, 'README.md');
const CEILING = 'ceiling';

interface RowSpec {
  key: string;
  /** Its label in the chart. */
  short: string;
  name: string;
  group: Group;
  peer?: string;
  ref?: string;
}

/** The table, in order. */
const ROWS: RowSpec[] = [
  { key: 'vb-dup', short: 'valkey-benchmark, duplicate path', group: 'server', name: 'server alone, duplicate path: valkey-benchmark EVALSHA, one existing id' },
  { key: CEILING, short: 'ceiling: unique ids (RESP generator)', group: 'server', name: 'server ceiling: EVALSHA @enqueue, unique ids (node RESP generator)' },
  { key: 'bull-add', short: 'BullMQ Queue.add', group: 'peer', name: 'BullMQ Queue.add (ioredis), 64 in flight' },
  { key: 'bull-bulk', short: 'BullMQ Queue.addBulk x100', group: 'peer', name: 'BullMQ Queue.addBulk x100 (ioredis), 8 in flight' },
  { key: 'single', short: 'enqueue, glide', group: 'glide', name: 'enqueue (glide), 64 in flight', peer: 'bull-add' },
  { key: 'batch', short: 'enqueueMany x100, glide', group: 'glide', name: 'enqueueMany x100 (glide), 8 in flight', peer: 'bull-bulk' },
  { key: 'cluster-single', short: 'enqueue, glide, cluster', group: 'cluster', name: `enqueue (glide), Valkey Cluster ${PRIMARIES} primaries`, peer: 'bull-add', ref: 'single' },
  { key: 'cluster-batch', short: 'enqueueMany x100, glide, cluster', group: 'cluster', name: `enqueueMany x100 (glide), Valkey Cluster ${PRIMARIES} primaries`, peer: 'bull-bulk', ref: 'batch' },
  { key: 'rest', short: 'enqueue, REST → gateway', group: 'rest', name: 'enqueue (REST connection → gateway), 64 in flight', peer: 'bull-add', ref: 'single' },
  { key: 'worker', short: 'HTTP: Worker → gateway → Valkey', group: 'http', name: 'HTTP: producer Worker (workerd) → gateway → Valkey', peer: 'hono-bullmq', ref: 'fetch-worker' },
  { key: 'noop-worker', short: 'HTTP floor: no-op Worker', group: 'floor', name: 'HTTP floor: no-op Hono Worker (workerd)' },
  { key: 'fetch-worker', short: 'HTTP floor: 1-fetch Worker', group: 'floor', name: 'HTTP floor: 1-fetch Hono Worker (workerd) → no-op upstream', ref: 'noop-worker' },
  { key: 'noop-node', short: 'HTTP floor: no-op Hono on Node', group: 'floor', name: 'HTTP floor: no-op Hono on Node' },
  { key: 'hono-bullmq', short: 'HTTP peer: Hono + BullMQ on Node', group: 'peer', name: 'HTTP peer: Hono on Node + BullMQ Queue.add', ref: 'noop-node' },
  { key: 'producer', short: 'HTTP: emq producer on Node', group: 'http', name: 'HTTP: emq producer (Hono on Node, glide) → Valkey', peer: 'hono-bullmq', ref: 'noop-node' },
];

const GROUPS: Record<string, string[]> = {
  server: ['vb-dup', CEILING],
  bullmq: ['bull-add', 'bull-bulk'],
  glide: ['single', 'batch'],
  cluster: ['cluster-single', 'cluster-batch'],
  http: ['worker', 'noop-worker', 'fetch-worker', 'noop-node', 'hono-bullmq', 'producer'],
};

function selection(): Set<string> | undefined {
  const asked = [...process.argv.slice(2), ...(process.env.BENCH_ONLY?.split(',') ?? [])].map((s) => s.trim()).filter(Boolean);
  if (asked.length === 0) return undefined;
  const keys = new Set<string>();
  for (const a of asked) {
    const expanded = GROUPS[a] ?? [a];
    for (const k of expanded) {
      if (!ROWS.some((r) => r.key === k)) throw new Error(`unknown row "${a}": rows are ${ROWS.map((r) => r.key).join(', ')}; groups ${Object.keys(GROUPS).join(', ')}`);
      keys.add(k);
    }
  }
  return keys;
}

/** Cores the rest of the machine used: all busy CPUs, less this process, the row's processes and an external load generator. */
function othersOf(cpu: CpuWindow, external = 0): number | undefined {
  if (cpu.machine === undefined) return undefined;
  const ours = cpu.self + external + cpu.procs.reduce((s, p) => s + (p.use?.cores ?? 0), 0);
  return Math.max(0, cpu.machine - ours);
}

/** Fills a row's CPU cells: `valkey` labels are the Valkey processes, the rest sit in between. */
function fillCpu(row: Row, cpu: CpuWindow, valkey: readonly Proc[], load: { label: string; cores: number | undefined }, external = 0): void {
  const isValkey = new Set(valkey.map((p) => p.label));
  row.valkey = cpu.procs.filter((p) => isValkey.has(p.label));
  row.between = cpu.procs.filter((p) => !isValkey.has(p.label));
  row.load = load;
  row.others = othersOf(cpu, external);
}

/** A target of the direct rows: where jobs go, which processes are Valkey, how to count them. */
interface Target {
  url: string;
  valkey: Proc[];
  count(queues: readonly string[]): Promise<number>;
  /** A word on how the jobs landed (the cluster: keys per primary). */
  spread?(): Promise<string>;
}

/** Glide round trips: each customCommand or exec is one; exec carries many commands. */
function countTrips(connection: GlideConnection): { calls: number; commands: number } {
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

const queuesOf = (prefix: string) => Array.from({ length: QUEUES }, (_, i) => `${prefix}-${i}`);

/** Steps of the direct rows: one enqueue, or one enqueueMany of BATCH, round robin over `queues`. */
function steps(connection: Connection, queues: readonly string[]) {
  let n = 0;
  let q = 0;
  const payload = () => JSON.stringify(payloadOf(n++));
  return {
    single: async () => {
      const id = mintId();
      const verdict = await enqueue(connection, queues[q++ % queues.length]!, id, payload());
      if (verdict !== 'enqueued') throw new Error(`fresh id ${id} answered ${verdict}`);
      return 1;
    },
    batch: async () => {
      const jobs = Array.from({ length: BATCH }, () => ({ id: mintId(), payload: payload() }));
      const results = await enqueueMany(connection, queues[q++ % queues.length]!, jobs);
      if (results.some((r) => r.verdict !== 'enqueued')) throw new Error('a fresh id in a batch answered duplicate');
      return results.length;
    },
  };
}

/** Latency, throughput and the count check of a driven row. */
function fillDriven(row: Row, measured: Driven, held: number, sent: number, what: string): void {
  row.opsPerSec = measured.ops / measured.seconds;
  row.p50Ms = quantile(measured.latencies, 0.5);
  row.p99Ms = quantile(measured.latencies, 0.99);
  if (held !== sent) row.problems.push(`${fmtInt(held)} jobs in ${what}, ${fmtInt(sent)} enqueued (warm-up included)`);
  else row.notes.push(`checked: ${fmtInt(held)} jobs in ${what}, as many as enqueued (warm-up included)`);
}

async function glideRow(row: Row, target: Target, mode: 'single' | 'batch'): Promise<void> {
  const connection = await connectGlide(MAX_BATCH ? { url: target.url, maxBatch: MAX_BATCH } : target.url);
  try {
    const queues = queuesOf(`bench-${row.key}`);
    const step = steps(connection, queues)[mode];
    const inFlight = mode === 'single' ? IN_FLIGHT : BATCHES_IN_FLIGHT;
    const warm = await drive(inFlight, WARM_MS, step);
    const trips = countTrips(connection);
    const { value: m, cpu } = await cpuWindow(target.valkey, () => drive(inFlight, MEASURE_MS, step, true));
    fillCpu(row, cpu, target.valkey, { label: 'bench', cores: cpu.self });
    fillDriven(row, m, await target.count(queues), warm.ops + m.ops, `the ${QUEUES} pending sets`);
    const perCall = trips.calls > 0 ? trips.commands / trips.calls : 0;
    row.notes.push(
      `${inFlight} calls in flight over ${QUEUES} queues, maxBatch ${MAX_BATCH ?? 'default (32)'}; ` +
        `${fmtInt(trips.calls / m.seconds)} glide calls/s carrying ${perCall.toFixed(1)} commands each; latency per call`,
    );
    if (target.spread) row.notes.push(await target.spread());
  } finally {
    await connection.close();
  }
}

async function main(): Promise<number> {
  const t0 = performance.now();
  const started = new Date();
  const only = selection();
  const runs = (key: string) => !only || only.has(key);
  // full runs save to bench/results/ (and README.md); BENCH_RESULTS=<dir> saves any run there instead
  const results = process.env.BENCH_RESULTS || RESULTS_DEFAULT;
  const save = process.env.BENCH_SAVE !== '0' && (!only || results !== RESULTS_DEFAULT);
  const tool = pickTool();
  const tmp = mkdtempSync(join(tmpdir(), 'emq-bench-'));
  const server = await Server.open();
  let cluster: BenchCluster | undefined;
  const rows: Row[] = [];
  let aborting = false;

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await stopAll(); // the children first: the gateway and the producers front the server
      await Promise.allSettled([server.close(), cluster?.close()]);
      rmSync(tmp, { recursive: true, force: true });
    })());
  const bail = (why: string) => {
    if (aborting) return;
    aborting = true;
    process.stderr.write(`bench: ${why}; stopping everything\n`);
    if (rows.length) process.stderr.write(`${table(rows, CEILING)}\n`);
    const forced = setTimeout(() => process.exit(2), 10_000);
    void stop().finally(() => {
      clearTimeout(forced);
      process.exit(2);
    });
  };
  setTimeout(() => bail(`over ${DEADLINE_MS / 1000} s`), DEADLINE_MS).unref();
  process.once('SIGINT', () => bail('interrupted'));
  process.once('SIGTERM', () => bail('terminated'));

  /** Runs one row: a clean server, the body, its processes stopped (a non-zero exit is a problem). */
  const row = async (key: string, body: (row: Row, cleanup: Array<() => Promise<void>>) => Promise<void>) => {
    const spec = ROWS.find((r) => r.key === key)!;
    if (!runs(key) || aborting) return;
    const n = ROWS.indexOf(spec) + 1;
    process.stderr.write(`bench: ${n}. ${spec.name}...\n`);
    const r: Row = { n, key, name: spec.name, short: spec.short, group: spec.group, between: [], notes: [], problems: [], ...(spec.peer ? { peer: spec.peer } : {}), ...(spec.ref ? { ref: spec.ref } : {}) };
    rows.push(r);
    const cleanup: Array<() => Promise<void>> = [];
    try {
      await server.reset();
      await body(r, cleanup);
    } catch (err) {
      if (!aborting) process.stderr.write(`bench: ${n}. failed: ${(err as Error).stack ?? String(err)}\n`);
      r.failed = (err as Error).message.split('\n')[0]!.slice(0, 400);
      delete r.opsPerSec;
    } finally {
      for (const c of cleanup.reverse()) await c().catch(() => undefined);
    }
  };
  /** Stops a child at the end of its row; a non-zero exit (or one forced) is a problem of that row. */
  const stopAtEnd = (r: Row, c: Child, mustBeClean = true) => async () => {
    const code = await c.stop();
    if (mustBeClean && code !== 0) r.problems.push(`${c.label} exited ${code} on SIGTERM: ${c.output().trim().slice(-300)}`);
  };

  const valkey: Proc[] = server.pid ? [{ label: 'valkey', pid: server.pid }] : [];
  /** The Valkey processes this run started, to check they are gone at the end. */
  const valkeyPids: number[] = server.owned && server.pid ? [server.pid] : [];
  const zcards = async (queues: readonly string[]) => {
    let sum = 0;
    for (const q of queues) sum += Number(await server.call('ZCARD', pendingKey(q)));
    return sum;
  };
  const single: Target = { url: server.url, valkey, count: zcards };

  // ---- HTTP -----------------------------------------------------------------------------
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const emqTokens = JSON.stringify([{ token, queues: ['*'] }]);
  const loadSpec = (url: string, ms: number): LoadSpec => ({
    url: `${url}/v1/queues/${HTTP_QUEUE}/jobs`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: BODY,
    connections: IN_FLIGHT,
    expectStatus: 201,
    ms,
  });
  /** Warm-up, then the measured window with every process's CPU sampled around it; the 201s, warm-up included. */
  const http = async (r: Row, url: string, procs: Proc[], withValkey: boolean): Promise<number> => {
    const warm = await runLoad(tool, loadSpec(url, WARM_MS), tmp);
    if (warm.ok === 0) throw new Error(`warm-up: no 201 in ${warm.requests} answers (${warm.errors.join(', ')}; first: ${warm.firstError})`);
    const all = withValkey ? [...procs, ...valkey] : procs;
    const { value: load, cpu } = await cpuWindow(all, () => runLoad(tool, loadSpec(url, MEASURE_MS), tmp));
    r.opsPerSec = load.ok / load.seconds;
    if (load.p50Ms !== undefined) r.p50Ms = load.p50Ms;
    if (load.p99Ms !== undefined) r.p99Ms = load.p99Ms;
    fillCpu(r, cpu, withValkey ? valkey : [], { label: tool === 'wrk' ? 'wrk' : 'node:http', cores: load.cores }, tool === 'wrk' ? (load.cores ?? 0) : 0);
    const errors = [...warm.errors, ...load.errors];
    if (errors.length > 0) r.problems.push(`answers other than 201: ${errors.join(', ')} (first: ${load.firstError ?? warm.firstError})`);
    return warm.ok + load.ok;
  };
  /** The jobs the row's 201s should have left in Valkey, against what is there. */
  const checkCount = async (r: Row, created: number, what: string, count: () => Promise<number>) => {
    await new Promise((res) => setTimeout(res, SETTLE_MS));
    const held = await count();
    // wrk abandons up to one request per connection when each run's time is up; the server
    // still finishes them, so Valkey may hold up to 2 x 64 more than wrk counted
    const slack = tool === 'wrk' ? 2 * IN_FLIGHT : 0;
    if (held >= created && held - created <= slack) {
      r.notes.push(`checked: ${what} holds ${fmtInt(held)} jobs; 201s counted ${fmtInt(created)} (warm-up included)${held > created ? `, ${held - created} answered after wrk stopped` : ''}`);
    } else {
      r.problems.push(`${what} holds ${fmtInt(held)}, ${fmtInt(created)} answered 201`);
    }
  };
  const pendingHttp = async () => Number(await server.call('ZCARD', pendingKey(HTTP_QUEUE)));

  const header: string[] = [];
  let version = '?';
  try {
    version = await server.version();
    const ceilingTotal = Math.max(20_000, Math.round((CEILING_RATE * MEASURE_MS) / 1000));
    let toolRps: number | undefined;
    const serverRow = (r: Row, f: ServerFigures, label: string) => {
      r.opsPerSec = f.opsPerSec;
      fillCpu(r, f.cpu, valkey, { label, cores: f.loadCores }, f.externalCores);
      r.notes.push(...f.notes);
      r.problems.push(...f.problems);
    };

    await row('vb-dup', async (r) => {
      const f = await toolDuplicate(server, ceilingTotal);
      if (!f) throw new Error('no valkey-benchmark (or redis-benchmark) on PATH: install valkey-tools');
      toolRps = f.opsPerSec;
      serverRow(r, f, 'valkey-benchmark');
    });
    await row(CEILING, async (r) => {
      const queues = queuesOf('bench-ceiling');
      serverRow(r, await generatorUnique(server, ceilingTotal, queues, () => zcards(queues), toolRps), 'bench');
    });

    const bull = (r: Row, batch: number, inFlight: number) => async () => {
      const name = `enqueue-${r.key}`;
      let cpu: CpuWindow | undefined;
      const run = await runBullmq(server.endpoint, name, batch, inFlight, WARM_MS, MEASURE_MS, async (work) => {
        const w = await cpuWindow(valkey, work);
        cpu = w.cpu;
        return w.value;
      });
      fillCpu(r, cpu!, valkey, { label: 'bench', cores: cpu!.self });
      fillDriven(r, run.measured, run.waiting, run.warm.ops + run.measured.ops, 'the wait list');
      r.notes.push(`BullMQ ${versionOf('bullmq')}, ioredis ${versionOf('ioredis')}; ${inFlight} calls in flight; latency per call`);
    };
    await row('bull-add', (r) => bull(r, 1, IN_FLIGHT)());
    await row('bull-bulk', (r) => bull(r, BATCH, BATCHES_IN_FLIGHT)());

    await row('single', (r) => glideRow(r, single, 'single'));
    await row('batch', (r) => glideRow(r, single, 'batch'));

    if ((runs('cluster-single') || runs('cluster-batch')) && !aborting) {
      process.stderr.write(`bench: starting a Valkey Cluster (${PRIMARIES} primaries)...\n`);
      let clusterTarget: Target | undefined;
      let clusterError: Error | undefined;
      try {
        cluster = await openCluster(PRIMARIES);
        const c = cluster;
        valkeyPids.push(...c.nodes.map((node) => node.pid));
        const clusterClient = c.connection.client as GlideClusterClient;
        clusterTarget = {
          url: c.url,
          valkey: c.nodes.map((node, i) => ({ label: `valkey ${i + 1}`, pid: node.pid })),
          count: async (queues) => {
            let sum = 0;
            for (const q of queues) {
              const o = await command(c.connection.wire, ['ZCARD', pendingKey(q)]);
              if (!o.ok) throw new Error(o.error);
              sum += Number(o.value);
            }
            return sum;
          },
          spread: async () => {
            const sizes: string[] = [];
            for (const node of c.nodes) {
              const n = await clusterClient.customCommand(['DBSIZE'], { route: { type: 'routeByAddress', host: '127.0.0.1', port: node.port } });
              sizes.push(`:${node.port} ${fmtInt(Number(n))}`);
            }
            return `keys per primary (job rows and pending sets): ${sizes.join(', ')}`;
          },
        };
        header.push(`cluster: ${PRIMARIES} primaries, no replicas, on loopback (scripts/cluster.ts), the same server binary`);
      } catch (err) {
        clusterError = err as Error;
      }
      for (const [key, mode] of [['cluster-single', 'single'], ['cluster-batch', 'batch']] as const) {
        await row(key, async (r) => {
          if (!clusterTarget) throw clusterError ?? new Error('no cluster');
          await glideRow(r, clusterTarget, mode);
        });
      }
      await cluster?.close();
      cluster = undefined;
    }

    await row('rest', async (r, cleanup) => {
      const gw = await startGateway(server.url);
      cleanup.push(stopAtEnd(r, gw));
      const connection = connectRest({ url: gw.url, token: gw.producer });
      cleanup.push(() => connection.close());
      const queues = queuesOf('bench-rest');
      const step = steps(connection, queues).single;
      const warm = await drive(IN_FLIGHT, WARM_MS, step);
      const procs = [{ label: 'gateway', pid: gw.pid }, ...valkey];
      const { value: m, cpu } = await cpuWindow(procs, () => drive(IN_FLIGHT, MEASURE_MS, step, true));
      fillCpu(r, cpu, valkey, { label: 'bench', cores: cpu.self });
      fillDriven(r, m, await zcards(queues), warm.ops + m.ops, `the ${QUEUES} pending sets`);
      r.notes.push(`connectRest (Node's fetch) → \`emq gateway\` ${gw.url} → Valkey; ${IN_FLIGHT} calls in flight over ${QUEUES} queues`);
    });

    if (GROUPS.http!.some(runs) && !aborting) {
      if (!existsSync(BUNDLE)) throw new Error(`no Worker bundle at ${BUNDLE}: run npm run build first`);
      const bundleStat = statSync(BUNDLE);
      header.push(
        `HTTP load: ${tool === 'wrk' ? `wrk -t2 -c${IN_FLIGHT} (a Lua script counts statuses)` : `node:http in 2 worker_threads, ${IN_FLIGHT} keep-alive connections`}; ` +
          `POST /v1/queues/${HTTP_QUEUE}/jobs, ${Buffer.byteLength(BODY)}-byte JSON body, Bearer token`,
        `${workerdVersion()} (bare \`workerd serve\`, compatibilityDate ${COMPATIBILITY_DATE}); producer bundle dist/worker/default/worker.js, ${(bundleStat.size / 1024).toFixed(1)} KiB`,
      );
    }
    const noopBundle = join(tmp, 'noop-worker.js');
    const fetchBundle = join(tmp, 'fetch-worker.js');
    if (runs('noop-worker') && !aborting) await bundleWorker(join(HERE, 'workers', 'noop-worker.js'), noopBundle);
    if (runs('fetch-worker') && !aborting) await bundleWorker(join(HERE, 'workers', 'fetch-worker.js'), fetchBundle);

    await row('worker', async (r, cleanup) => {
      const gw = await startGateway(server.url);
      cleanup.push(stopAtEnd(r, gw));
      const wd = await startWorkerd({
        label: 'producer',
        bundle: BUNDLE,
        dir: tmp,
        bindings: { EMQ_REST_URL: gw.url, EMQ_REST_TOKEN: gw.producer, EMQ_TOKENS: emqTokens, EMQ_MAX_PAYLOAD_BYTES: '1048576' },
      });
      cleanup.push(stopAtEnd(r, wd, false));
      const created = await http(r, wd.url, [{ label: 'workerd', pid: wd.pid }, { label: 'gateway', pid: gw.pid }], true);
      await checkCount(r, created, 'the pending set', pendingHttp);
    });
    await row('noop-worker', async (r, cleanup) => {
      const wd = await startWorkerd({ label: 'noop', bundle: noopBundle, dir: tmp, bindings: {} });
      cleanup.push(stopAtEnd(r, wd, false));
      await http(r, wd.url, [{ label: 'workerd', pid: wd.pid }], false);
    });
    await row('fetch-worker', async (r, cleanup) => {
      const tiny = await spawnServing('tiny upstream', [join(HERE, 'tiny-server.js')]);
      cleanup.push(stopAtEnd(r, tiny));
      const wd = await startWorkerd({ label: 'fetch', bundle: fetchBundle, dir: tmp, bindings: { UPSTREAM_URL: `${tiny.url}/`, UPSTREAM_TOKEN: token } });
      cleanup.push(stopAtEnd(r, wd, false));
      await http(r, wd.url, [{ label: 'workerd', pid: wd.pid }, { label: 'upstream', pid: tiny.pid }], false);
    });
    await row('noop-node', async (r, cleanup) => {
      const noop = await spawnServing('no-op Hono (Node)', [join(HERE, 'noop-server.js')]);
      cleanup.push(stopAtEnd(r, noop));
      await http(r, noop.url, [{ label: 'node', pid: noop.pid }], false);
    });
    await row('hono-bullmq', async (r, cleanup) => {
      const bullServer = await spawnServing('Hono+BullMQ', [join(HERE, 'bullmq-server.js')], { VALKEY_URL: server.url, BENCH_TOKEN: token });
      cleanup.push(stopAtEnd(r, bullServer));
      const created = await http(r, bullServer.url, [{ label: 'node', pid: bullServer.pid }], true);
      await checkCount(r, created, 'the BullMQ wait list', async () => Number(await server.call('LLEN', `${BULL_PREFIX}:${HTTP_QUEUE}:wait`)));
    });
    await row('producer', async (r, cleanup) => {
      const producer = await startProducer(server.url, emqTokens);
      cleanup.push(stopAtEnd(r, producer));
      const created = await http(r, producer.url, [{ label: 'node', pid: producer.pid }], true);
      await checkCount(r, created, 'the pending set', pendingHttp);
    });
  } finally {
    await stop();
  }
  if (aborting) return 2;
  // every process started is stopped: check, and say so
  const all = [...spawned(), ...valkeyPids.map((pid) => ({ label: 'valkey', pid }))];
  const left = all.filter((p) => isRunning(p.pid));
  const accounting = `processes started: ${all.length} (${countLabels(all)}); still running after the run: ${left.length === 0 ? 'none' : left.map((p) => `${p.label} ${p.pid}`).join(', ')}`;

  const trusted = (key: string) => {
    const r = figure(rows, key);
    return r && r.problems.length === 0 ? r.opsPerSec : undefined;
  };
  const verdict = targets([
    { what: 'enqueue (glide) / BullMQ Queue.add', ratio: ratioOf(trusted('single'), trusted('bull-add')), atLeast: 1.0 },
    { what: `enqueueMany x${BATCH} (glide) / server ceiling`, ratio: ratioOf(trusted('batch'), trusted(CEILING)), atLeast: 0.6 },
    { what: 'producer Worker / 1-fetch Worker floor', ratio: ratioOf(trusted('worker'), trusted('fetch-worker')), atLeast: 0.9 },
    { what: 'emq producer on Node / Hono + BullMQ', ratio: ratioOf(trusted('producer'), trusted('hono-bullmq')), atLeast: 1.3 },
  ]);
  const ratios = [
    ['cluster / single node, enqueue', 'cluster-single', 'single'],
    ['cluster / single node, enqueueMany', 'cluster-batch', 'batch'],
    ['enqueueMany / BullMQ addBulk', 'batch', 'bull-bulk'],
    ['producer Worker / no-op Worker', 'worker', 'noop-worker'],
    ['emq producer / no-op Hono on Node', 'producer', 'noop-node'],
  ]
    .map(([what, a, b]) => ({ what: what!, r: ratioOf(figure(rows, a)?.opsPerSec, figure(rows, b)?.opsPerSec) }))
    .filter((x) => x.r !== undefined)
    .map((x) => `${x.what}: ${fmtRatio(x.r!)}`);

  const seconds = (performance.now() - t0) / 1000;
  const commit = gitDescribe();
  const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z');
  const intro = [
    `${stamp}, ${commit}; whole run ${seconds.toFixed(0)} s (\`npm run bench\`)`,
    `machine: ${machine()}; other processes may share it (the "others" column)`,
    `server: ${version} (${server.owned ? 'private, started by the bench' : 'VALKEY_URL'}), one process for every single-node row`,
    ...header,
    `each row: warm-up ${WARM_MS / 1000} s, measured ${MEASURE_MS / 1000} s (the server rows: a fixed count, sized to about that); jobs of ~100 bytes`,
  ];
  const legend = [
    'ops/s: jobs enqueued per second (HTTP rows: requests answered 201 per second). vs ceiling: against #' + (ROWS.findIndex((r) => r.key === CEILING) + 1) + '.',
    'vs peer: against BullMQ doing the same (Queue.add, Queue.addBulk, or Hono + BullMQ over HTTP). vs ref: against the row named (an HTTP row\'s no-op floor, or the same load on the single node for the cluster rows).',
    'p50/p99: latency of one call (a batch of 100 is one call; valkey-benchmark and the RESP generator keep none), or of one HTTP request, under that row\'s load.',
    'CPU in cores busy over the measured window, from /proc: load = whoever sends (bench: this Node process, glide\'s threads included; wrk; valkey-benchmark); Valkey = the server (the cluster: each primary); in between = the processes on the way, [busiest thread]; others = the rest of the machine meanwhile.',
  ];
  const svgName = 'latest.svg';
  const md = (svg: string) =>
    [
      '# `npm run bench`: enqueue throughput, one run, one Valkey',
      '',
      ...intro.map((l) => `${l}  `),
      '',
      ...figureLines(svg, table(rows, CEILING), legend),
      '',
      '## Targets',
      '',
      ...targetLines(verdict, ratios),
      '',
      '## Per row',
      '',
      ...details(rows),
      '',
      accounting,
      '',
    ].join('\n');

  process.stdout.write(md(svgName));
  const title = 'EchoMQ enqueue: ops/s per row, one run, one Valkey';
  const svg = chart(rows, title, `${stamp} · ${commit} · ${machine()} · ${version}`, CEILING);
  if (save) {
    mkdirSync(results, { recursive: true });
    const dated = stamp.replace(/:/g, '').replace(/-/g, '').replace('T', '-').replace('Z', 'Z');
    writeFileSync(join(results, svgName), svg);
    writeFileSync(join(results, 'latest.md'), md(svgName));
    copyFileSync(join(results, svgName), join(results, `${dated}.svg`));
    writeFileSync(join(results, `${dated}.md`), md(`${dated}.svg`));
    const readme = results === RESULTS_DEFAULT && updateReadme(intro, table(rows, CEILING), legend, verdict, ratios);
    process.stderr.write(`bench: wrote ${results}/latest.md, latest.svg, ${dated}.md, ${dated}.svg${readme ? ', and README.md\'s Benchmarks block' : ''}\n`);
  }
  return rows.some((r) => r.failed) ? 1 : 0;
}

function countLabels(procs: ReadonlyArray<{ label: string }>): string {
  const counts = new Map<string, number>();
  for (const p of procs) counts.set(p.label, (counts.get(p.label) ?? 0) + 1);
  return [...counts].map(([label, n]) => (n > 1 ? `${label} x${n}` : label)).join(', ');
}

/** "commit abc1234" (+ "with local changes"), or "not a git checkout". */
function gitDescribe(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', timeout: 5_000 }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8', timeout: 5_000 }).trim();
    return `commit ${head}${dirty ? ' with local changes' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/** The chart, the table and its legend: the same in latest.md and README.md. */
function figureLines(svg: string, tableText: string, legend: string[]): string[] {
  return [`![ops/s per row](${svg})`, '', tableText, '', ...legend.map((l) => `${l}  `)];
}

/** PASS/FAIL per target, then the other ratios, as one code block. */
function targetLines(verdict: string[], ratios: string[]): string[] {
  return ['```', ...verdict, ...(ratios.length ? ['', ...ratios] : []), '```'];
}

const START = '<!-- bench:latest (written by npm run bench) -->';
const END = '<!-- /bench:latest -->';

/** Rewrites what lies between README.md's bench markers (none: nothing). True when written. */
function updateReadme(intro: string[], tableText: string, legend: string[], verdict: string[], ratios: string[]): boolean {
  if (!existsSync(README)) return false;
  const text = readFileSync(README, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return false;
  const block = [
    START,
    ...intro.map((l) => `${l}  `),
    '',
    ...figureLines('bench/results/latest.svg', tableText, legend),
    '',
    ...targetLines(verdict, ratios),
    '',
    'Per-row notes and checks: [bench/results/latest.md](bench/results/latest.md).',
    END,
  ].join('\n');
  writeFileSync(README, text.slice(0, a) + block + text.slice(b + END.length));
  return true;
}

// glide's client keeps the loop alive after close; exit explicitly.
main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    void stopAll().finally(() => process.exit(1));
  },
);
