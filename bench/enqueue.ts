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
//   HTTP           64 keep-alive connections (wrk), ~100-byte JSON jobs:
//                  10 path-style EVALSHA @enqueue → the gateway → Valkey, a fresh id each
//                  11 the same → webdis (the peer of the gateway) → Valkey
//                  POST /v1/queues/bench/jobs:
//                  12 the producer Worker bundle under bare `workerd serve` → gateway → Valkey
//                  13 no-op Hono Worker (workerd)   14 1-fetch Worker (workerd) → no-op upstream
//                  15 no-op Hono on Node            16 Hono on Node + BullMQ Queue.add
//                  17 `emq producer` (node:http over glide)
//   memory         bytes per job of a 200-byte payload in Valkey, EchoMQ against BullMQ, at
//                  two settings of hash-max-listpack-value (rows/memory.ts)
//
// Each row: a warm-up, then the measured window; CPU of every process involved from /proc,
// also as µs of CPU per op (per job; HTTP: per request answered). Rows run one at a time;
// each starts and stops its own processes. This file runs them and writes the page; the rows
// live in rows/ (server.ts, peer.ts, glide.ts, rest.ts, http.ts, memory.ts).
// Written to bench/results/latest.{md,svg} plus a dated copy, unless a subset ran.
//
// Env: BENCH_MS (measured window per row, ms; default 5000), BENCH_WARM_MS (default 1000),
// BENCH_ONLY=name,... (or names as arguments; rows by key or group, see ROWS and GROUPS; a
// subset is not saved), BENCH_LOAD=wrk|node (the HTTP load generator; default wrk when on
// PATH), BENCH_MAX_BATCH (glide's maxBatch), BENCH_SAVE=0 (print only), BENCH_RESULTS=<dir>
// (save any run there instead), BENCH_DEADLINE_MS (default 300000), VALKEY_URL (another
// server for the single-node rows; only the bench's keys are removed then). Every process
// started is stopped at the end, on failure, on SIGINT/SIGTERM and past the deadline.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../scripts/repo-root.js';
import { BATCH, MEASURE_MS, PRIMARIES, WARM_MS, type Bench } from './common.js';
import { accounting, stopAll } from './procs.js';
import { chart, cpuPerOp, figure, fmtRatio, machine, page, ratioOf, table, targets, type Group, type Row } from './report.js';
import { glideRows } from './rows/glide.js';
import { HTTP_ROWS, httpRows } from './rows/http.js';
import { memoryRows } from './rows/memory.js';
import { peerRows } from './rows/peer.js';
import { restRows } from './rows/rest.js';
import { serverRows } from './rows/server.js';
import { Server } from './server.js';

const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS) || 300_000;
const ROOT = repoRoot();
const RESULTS_DEFAULT = join(ROOT, 'bench', 'results');
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
  {
    key: 'vb-dup',
    short: 'valkey-benchmark, duplicate path',
    group: 'server',
    name: 'server alone, duplicate path: valkey-benchmark EVALSHA, one existing id',
  },
  { key: CEILING, short: 'ceiling: unique ids (RESP generator)', group: 'server', name: 'server ceiling: EVALSHA @enqueue, unique ids (node RESP generator)' },
  { key: 'bull-add', short: 'BullMQ Queue.add', group: 'peer', name: 'BullMQ Queue.add (ioredis), 64 in flight' },
  { key: 'bull-bulk', short: 'BullMQ Queue.addBulk x100', group: 'peer', name: 'BullMQ Queue.addBulk x100 (ioredis), 8 in flight' },
  { key: 'single', short: 'enqueue, glide', group: 'glide', name: 'enqueue (glide), 64 in flight', peer: 'bull-add' },
  { key: 'batch', short: 'enqueueMany x100, glide', group: 'glide', name: 'enqueueMany x100 (glide), 8 in flight', peer: 'bull-bulk' },
  {
    key: 'cluster-single',
    short: 'enqueue, glide, cluster',
    group: 'cluster',
    name: `enqueue (glide), Valkey Cluster ${PRIMARIES} primaries`,
    peer: 'bull-add',
    ref: 'single',
  },
  {
    key: 'cluster-batch',
    short: 'enqueueMany x100, glide, cluster',
    group: 'cluster',
    name: `enqueueMany x100 (glide), Valkey Cluster ${PRIMARIES} primaries`,
    peer: 'bull-bulk',
    ref: 'batch',
  },
  { key: 'rest', short: 'enqueue, REST → gateway', group: 'rest', name: 'enqueue (REST connection → gateway), 64 in flight', peer: 'bull-add', ref: 'single' },
  {
    key: 'gateway',
    short: 'HTTP: EVALSHA → gateway → Valkey',
    group: 'http',
    name: 'HTTP: path-style EVALSHA @enqueue → gateway → Valkey',
    peer: 'webdis',
  },
  { key: 'webdis', short: 'HTTP peer: EVALSHA → webdis', group: 'peer', name: 'HTTP peer: path-style EVALSHA @enqueue → webdis → Valkey' },
  {
    key: 'worker',
    short: 'HTTP: Worker → gateway → Valkey',
    group: 'http',
    name: 'HTTP: producer Worker (workerd) → gateway → Valkey',
    peer: 'hono-bullmq',
    ref: 'fetch-worker',
  },
  { key: 'noop-worker', short: 'HTTP floor: no-op Worker', group: 'floor', name: 'HTTP floor: no-op Hono Worker (workerd)' },
  {
    key: 'fetch-worker',
    short: 'HTTP floor: 1-fetch Worker',
    group: 'floor',
    name: 'HTTP floor: 1-fetch Hono Worker (workerd) → no-op upstream',
    ref: 'noop-worker',
  },
  { key: 'noop-node', short: 'HTTP floor: no-op Hono on Node', group: 'floor', name: 'HTTP floor: no-op Hono on Node' },
  { key: 'hono-bullmq', short: 'HTTP peer: Hono + BullMQ on Node', group: 'peer', name: 'HTTP peer: Hono on Node + BullMQ Queue.add', ref: 'noop-node' },
  {
    key: 'producer',
    short: 'HTTP: emq producer on Node',
    group: 'http',
    name: 'HTTP: emq producer (node:http, glide) → Valkey',
    peer: 'hono-bullmq',
    ref: 'noop-node',
  },
];

const GROUPS: Record<string, string[]> = {
  server: ['vb-dup', CEILING],
  bullmq: ['bull-add', 'bull-bulk'],
  glide: ['single', 'batch'],
  cluster: ['cluster-single', 'cluster-batch'],
  http: HTTP_ROWS,
};

/** Not a row: the memory section (rows/memory.ts). */
const MEMORY = 'memory';

function selection(): Set<string> | undefined {
  const asked = [...process.argv.slice(2), ...(process.env.BENCH_ONLY?.split(',') ?? [])].map((s) => s.trim()).filter(Boolean);
  if (asked.length === 0) return undefined;
  const keys = new Set<string>();
  for (const a of asked) {
    if (a === MEMORY) {
      keys.add(a);
      continue;
    }
    const expanded = GROUPS[a] ?? [a];
    for (const k of expanded) {
      if (!ROWS.some((r) => r.key === k))
        throw new Error(`unknown row "${a}": rows are ${ROWS.map((r) => r.key).join(', ')}; groups ${Object.keys(GROUPS).join(', ')}; and ${MEMORY}`);
      keys.add(k);
    }
  }
  return keys;
}

async function main(): Promise<number> {
  const t0 = performance.now();
  const started = new Date();
  const only = selection();
  const runs = (key: string) => !only || only.has(key);
  // full runs save to bench/results/; BENCH_RESULTS=<dir> saves any run there instead
  const results = process.env.BENCH_RESULTS || RESULTS_DEFAULT;
  const save = process.env.BENCH_SAVE !== '0' && (!only || results !== RESULTS_DEFAULT);
  const tmp = mkdtempSync(join(tmpdir(), 'emq-bench-'));
  const server = await Server.open();
  const rows: Row[] = [];
  let aborting = false;

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await stopAll(); // the children first: the gateway and the producers front the server
      await server.close().catch(() => undefined);
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

  const bench: Bench = {
    server,
    valkey: server.pid ? [{ label: 'valkey', pid: server.pid }] : [],
    header: [],
    tmp,
    runs,
    aborting: () => aborting,
    row: async (key, body) => {
      const spec = ROWS.find((r) => r.key === key)!;
      if (!runs(key) || aborting) return;
      const n = ROWS.indexOf(spec) + 1;
      process.stderr.write(`bench: ${n}. ${spec.name}...\n`);
      const r: Row = {
        n,
        key,
        name: spec.name,
        short: spec.short,
        group: spec.group,
        between: [],
        notes: [],
        problems: [],
        ...(spec.peer ? { peer: spec.peer } : {}),
        ...(spec.ref ? { ref: spec.ref } : {}),
      };
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
    },
    stopAtEnd:
      (r, c, mustBeClean = true) =>
      async () => {
        const code = await c.stop();
        if (mustBeClean && code !== 0) r.problems.push(`${c.label} exited ${code} on SIGTERM: ${c.output().trim().slice(-300)}`);
      },
    zcards: async (queues) => {
      let sum = 0;
      for (const q of queues) sum += await server.pending(q);
      return sum;
    },
  };

  let version = '?';
  let memory: string[] | undefined;
  try {
    version = await server.version();
    for (const group of [serverRows, peerRows, glideRows, restRows, httpRows]) await group(bench);
    if (runs(MEMORY) && !aborting) {
      process.stderr.write('bench: memory per job...\n');
      memory = await memoryRows(bench).catch((err: unknown) => [`failed: ${(err as Error).message}`]);
    }
  } finally {
    await stop();
  }
  if (aborting) return 2;

  const trusted = (key: string) => {
    const r = figure(rows, key);
    return r && r.problems.length === 0 ? r.opsPerSec : undefined;
  };
  const verdict = targets([
    { what: 'throughput: enqueue (glide) / BullMQ Queue.add', ratio: ratioOf(trusted('single'), trusted('bull-add')), atLeast: 1.5 },
    { what: `throughput: enqueueMany x${BATCH} (glide) / server ceiling`, ratio: ratioOf(trusted('batch'), trusted(CEILING)), atLeast: 0.8 },
    {
      what: 'CPU per request: gateway / webdis (path-style EVALSHA)',
      ratio: ratioOf(cpuPerOp(rows, 'gateway', 'gateway'), cpuPerOp(rows, 'webdis', 'webdis')),
      atMost: 2.5,
    },
    {
      what: "CPU per request: producer Worker's isolate / the 1-fetch Worker's",
      ratio: ratioOf(cpuPerOp(rows, 'worker', 'workerd', true), cpuPerOp(rows, 'fetch-worker', 'workerd', true)),
      atMost: 1.25,
    },
    {
      what: "CPU per request: emq producer's Node process / Hono + BullMQ's",
      ratio: ratioOf(cpuPerOp(rows, 'producer', 'node'), cpuPerOp(rows, 'hono-bullmq', 'node')),
      atMost: 1.0,
    },
  ]);
  const ratios = [
    ['throughput: producer Worker / 1-fetch Worker floor', 'worker', 'fetch-worker'],
    ['throughput: emq producer on Node / Hono + BullMQ', 'producer', 'hono-bullmq'],
    ['throughput: gateway / webdis (path-style EVALSHA)', 'gateway', 'webdis'],
    ['cluster / single node, enqueue', 'cluster-single', 'single'],
    ['cluster / single node, enqueueMany', 'cluster-batch', 'batch'],
    ['enqueueMany / BullMQ addBulk', 'batch', 'bull-bulk'],
    ['producer Worker / no-op Worker', 'worker', 'noop-worker'],
    ['emq producer / no-op Hono on Node', 'producer', 'noop-node'],
  ]
    .map(([what, a, b]) => ({ what: what!, r: ratioOf(figure(rows, a)?.opsPerSec, figure(rows, b)?.opsPerSec) }))
    .filter((x) => x.r !== undefined)
    .map((x) => `${x.what}: ${fmtRatio(x.r!)}`);
  // latency under the same load (64 connections): the Worker path against its floor
  const worker = figure(rows, 'worker');
  const floor = figure(rows, 'fetch-worker');
  if (worker?.p99Ms !== undefined && floor?.p99Ms !== undefined) {
    ratios.push(
      `p99: producer Worker ${worker.p99Ms.toFixed(1)} ms, 1-fetch Worker floor ${floor.p99Ms.toFixed(1)} ms (${fmtRatio(worker.p99Ms / floor.p99Ms)}); p50 ${worker.p50Ms?.toFixed(1)} and ${floor.p50Ms?.toFixed(1)} ms`,
    );
  }

  const seconds = (performance.now() - t0) / 1000;
  const commit = gitDescribe();
  const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z');
  const intro = [
    `${stamp}, ${commit}; whole run ${seconds.toFixed(0)} s (\`npm run bench\`)`,
    `machine: ${machine()}; other processes may share it (the "others" column)`,
    `server: ${version} (${server.owned ? 'private, started by the bench' : 'VALKEY_URL'}), one process for every single-node row`,
    ...bench.header,
    `each row: warm-up ${WARM_MS / 1000} s, measured ${MEASURE_MS / 1000} s (the server rows: a fixed count, sized to about that); jobs of ~100 bytes`,
  ];
  const md = (svg: string) =>
    page(
      {
        intro,
        rows,
        ceiling: { key: CEILING, n: ROWS.findIndex((r) => r.key === CEILING) + 1 },
        verdict,
        ratios,
        ...(memory ? { memory } : {}),
        accounting: accounting(),
      },
      svg,
    );
  process.stdout.write(md('latest.svg'));
  if (save) {
    const svg = chart(rows, 'EchoMQ enqueue: ops/s per row, one run, one Valkey', `${stamp} · ${commit} · ${machine()} · ${version}`, CEILING);
    const dated = stamp.replace(/[-:]/g, '').replace('T', '-');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'latest.svg'), svg);
    writeFileSync(join(results, 'latest.md'), md('latest.svg'));
    writeFileSync(join(results, `${dated}.svg`), svg);
    writeFileSync(join(results, `${dated}.md`), md(`${dated}.svg`));
    process.stderr.write(`bench: wrote ${results}/latest.md, latest.svg, ${dated}.md, ${dated}.svg\n`);
  }
  return rows.some((r) => r.failed) ? 1 : 0;
}

/** "commit abc1234" (+ "with local changes"), or "not a git checkout". */
function gitDescribe(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', timeout: 5_000 }).trim();
    return `commit ${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' with local changes' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

// glide's client keeps the loop alive after close; exit explicitly.
main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    void stopAll().finally(() => process.exit(1));
  },
);
