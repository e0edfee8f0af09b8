// HTTP enqueue, five ways, one run, one table: 64 keep-alive connections in a closed loop,
// each sending POST /v1/queues/bench/jobs with a ~100-byte JSON body and a bearer token.
//   1. the producer Worker: dist/worker/default/worker.js (npm run build:worker) under bare
//      `workerd serve`, over its REST connection to the gateway (`emq gateway`, a separate
//      Node process) in front of a private Valkey
//   2. a no-op Hono Worker under the same workerd (reads the body, answers 201 JSON)
//   3. the no-op Worker plus one fetch per request to a tiny node:http server: the floor of
//      any REST-backed Worker
//   4. Hono on Node (@hono/node-server) with BullMQ's Queue.add per request (bullmq-server.ts)
//   5. the producer on Node over glide (`emq producer` with VALKEY_URL)
// Each row: 1 s warm-up, 5 s measured; requests/s, p50, p99, ratios; the CPU of every process
// involved (and of its busiest thread) and of the load generator, read from /proc; where the
// bottleneck is. Only one row's processes run at a time. Checks: every answer 201, and the
// jobs in Valkey match the 201s. Then the targets, PASS/FAIL:
//   worker enqueue >= 0.9x the one-fetch floor (1 / 3)
//   producer on Node over glide >= 1.3x Hono + BullMQ (5 / 4)
// Needs the build first: npx tsc -p tsconfig.build.json && npm run build:worker.
// Load generator: wrk when on PATH (apt-get install wrk), else node:http in 2 worker_threads;
// BENCH_LOAD=node|wrk chooses. VALKEY_URL points it at another server (only the bench's keys
// are removed then). BENCH_ONLY=1,3 runs a subset; BENCH_WARM_MS sets a longer warm-up. Every process it starts (Valkey, workerd,
// gateway, Node servers, wrk) is stopped at the end, on failure, on SIGINT/SIGTERM, and past
// the deadline.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pendingKey } from '../shared/index.js';
import { spawnServing, startGateway, stopAll, type Child } from './children.js';
import { killLoad, pickTool, runLoad, type LoadResult, type LoadSpec } from './http-gen.js';
import { payloadOf } from './payload.js';
import { BULL_PREFIX } from './peers.js';
import { between, machineCores, machineSample, sample, type CpuUse } from './proc-cpu.js';
import { machine, targets } from './report.js';
import { Server } from './server.js';
import { COMPATIBILITY_DATE, WORKERD, bundleWorker, startWorkerd, stopAllWorkerd, type WorkerdChild } from './workerd.js';

const IN_FLIGHT = 64;
const WARM_MS = Number(process.env.BENCH_WARM_MS) || 1_000;
const MEASURE_MS = 5_000;
const QUEUE = 'bench';
/** The whole run's bound: past it, everything is stopped and the bench exits 2. */
const DEADLINE_MS = 170_000;
/** After the load stops, the requests wrk abandoned mid-flight still finish on the server. */
const SETTLE_MS = 300;

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // from dist/bench/
const HERE = fileURLToPath(new URL('.', import.meta.url));
const BUNDLE = join(ROOT, 'dist', 'worker', 'default', 'worker.js');
const EMQ = join(ROOT, 'bin', 'emq.js');
const BODY = JSON.stringify(payloadOf(0));
const NCPU = cpus().length;

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const runs = (n: number) => !only || only.includes(String(n));

interface Proc {
  label: string;
  pid: number;
}

interface Row {
  n: number;
  name: string;
  load?: LoadResult;
  rps?: number;
  procs: Array<{ label: string; use: CpuUse | undefined }>;
  /** Cores the rest of the machine used meanwhile: all CPUs busy, less this row's processes and the bench's own. */
  others?: number;
  notes: string[];
  problems: string[];
  failed?: string;
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fmtCores = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(2));
const ratioOf = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);
const fmtRatio = (r: number | undefined) => (r === undefined ? '-' : `${r.toFixed(2)}x`);

function workerdVersion(): string {
  try {
    return execFileSync(WORKERD, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return 'workerd ?';
  }
}

/** The process's command name from /proc, or undefined. */
function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Running, not a zombie: state from /proc/<pid>/stat. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Where the row is limited, from the CPU figures (cores busy over the measured window). */
function bottleneck(row: Row): string {
  const procs = row.procs.filter((p): p is { label: string; use: CpuUse } => p.use !== undefined);
  const gen = row.load?.cores;
  const total = procs.reduce((s, p) => s + p.use.cores, 0) + (gen ?? 0);
  const hot = procs.filter((p) => p.use.topThread >= 0.85).sort((a, b) => b.use.topThread - a.use.topThread);
  const busiest = [...procs, ...(gen !== undefined ? [{ label: 'load gen', use: { cores: gen } as CpuUse }] : [])]
    .sort((a, b) => b.use.cores - a.use.cores)[0];
  const parts: string[] = [];
  if (hot[0]) parts.push(`${hot[0].label} thread "${hot[0].use.topThreadName}" saturated (${hot[0].use.topThread.toFixed(2)})`);
  const others = row.others ?? 0;
  if (total + others >= 0.85 * NCPU) {
    parts.push(`all ${NCPU} cores busy (${(total + others).toFixed(2)})${hot[0] || !busiest ? '' : `, most: ${busiest.label} ${busiest.use.cores.toFixed(2)}`}`);
  }
  if (parts.length === 0) parts.push(`no CPU limit (${total.toFixed(2)} of ${NCPU} cores): waits/round trips`);
  if (others >= 0.25) parts.push(`other processes took ${others.toFixed(2)}`);
  return parts.join('; ');
}

function render(rows: readonly Row[]): string {
  const r = (n: number) => rows.find((x) => x.n === n)?.rps;
  const head = ['', 'req/s', 'p50 ms', 'p99 ms', 'vs no-op W', 'vs 1-fetch W', 'vs Hono+BullMQ',
    'load gen', 'server-side cores: process [busiest thread]', 'total', 'others', 'srv µs/req', 'bottleneck'];
  const body = rows.map((row) => {
    const procs = row.procs.map((p) => `${p.label} ${fmtCores(p.use?.cores)}[${fmtCores(p.use?.topThread)}]`).join(' ');
    const server = row.procs.reduce((s, p) => s + (p.use?.cores ?? 0), 0);
    const total = server + (row.load?.cores ?? 0);
    return [
      `${row.n}. ${row.name}`,
      row.rps === undefined ? 'n/a' : fmtInt(row.rps),
      fmtMs(row.load?.p50Ms),
      fmtMs(row.load?.p99Ms),
      fmtRatio(ratioOf(row.rps, r(2))),
      fmtRatio(ratioOf(row.rps, r(3))),
      fmtRatio(ratioOf(row.rps, r(4))),
      fmtCores(row.load?.cores),
      row.rps === undefined ? '-' : procs,
      row.rps === undefined ? '-' : total.toFixed(2),
      fmtCores(row.others),
      row.rps ? Math.round((server / row.rps) * 1e6).toString() : '-',
      row.rps === undefined ? (row.failed ? 'FAILED' : '-') : bottleneck(row),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const left = new Set([0, 8, 12]);
  const line = (cells: string[]) => cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

async function main(): Promise<number> {
  const t0 = performance.now();
  const tool = pickTool();
  if (!existsSync(BUNDLE)) throw new Error(`no Worker bundle at ${BUNDLE}: run npm run build:worker first`);
  const tmp = mkdtempSync(join(tmpdir(), 'emq-http-enqueue-'));
  const server = await Server.open();

  // Valkey: its pid (ours, or a local one) for /proc, and killed on any exit when ours
  let valkey: Proc | undefined;
  try {
    const pid = Number((await server.info('server')).get('process_id'));
    if (pid > 0 && /valkey|redis/.test(commOf(pid) ?? '')) valkey = { label: 'valkey', pid };
    if (valkey && server.owned) {
      const vpid = valkey.pid;
      process.on('exit', () => {
        try {
          if (/valkey|redis/.test(commOf(vpid) ?? '')) process.kill(vpid, 'SIGKILL');
        } catch {
          // stopped already
        }
      });
    }
  } catch {
    // no CPU figure for the server
  }

  let stopping: Promise<void> | undefined;
  let aborting = false;
  const stop = () =>
    (stopping ??= (async () => {
      killLoad();
      await Promise.allSettled([stopAllWorkerd(), stopAll()]);
      await server.close();
      rmSync(tmp, { recursive: true, force: true });
    })());
  const bail = (why: string) => {
    aborting = true;
    process.stderr.write(`bench: ${why}; stopping everything\n`);
    const forced = setTimeout(() => process.exit(2), 8_000);
    void stop().finally(() => {
      clearTimeout(forced);
      process.exit(2);
    });
  };
  setTimeout(() => bail(`over ${DEADLINE_MS / 1000} s`), DEADLINE_MS).unref();
  process.once('SIGINT', () => bail('interrupted'));
  process.once('SIGTERM', () => bail('terminated'));

  const token = `bench-${randomBytes(16).toString('hex')}`;
  const emqTokens = JSON.stringify([{ token, queues: ['*'] }]);
  const spec = (url: string): Omit<LoadSpec, 'ms'> => ({
    url: `${url}/v1/queues/${QUEUE}/jobs`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: BODY,
    connections: IN_FLIGHT,
    expectStatus: 201,
  });

  const rows: Row[] = [];
  const header: string[] = [];
  /** Every long-running process started, to check at the end that none is left. */
  const spawned: Proc[] = [];
  let version = '?';

  /** Warm-up, then the measured window with every process's CPU sampled around it. */
  const measure = async (row: Row, url: string, procs: Proc[]): Promise<number> => {
    const s = spec(url);
    const warm = await runLoad(tool, { ...s, ms: WARM_MS }, tmp);
    if (warm.ok === 0) throw new Error(`warm-up: no 201 in ${warm.requests} answers (${warm.errors.join(', ')}; first: ${warm.firstError})`);
    const all = valkey ? [...procs, valkey] : procs;
    const m0 = machineSample();
    const own0 = process.cpuUsage();
    const before = all.map((p) => sample(p.pid));
    const load = await runLoad(tool, { ...s, ms: MEASURE_MS }, tmp);
    const after = all.map((p) => sample(p.pid));
    const own = process.cpuUsage(own0);
    const m1 = machineSample();
    row.load = load;
    row.rps = load.ok / load.seconds;
    row.procs = all.map((p, i) => ({ label: p.label, use: between(before[i], after[i]) }));
    const machine = machineCores(m0, m1);
    if (machine !== undefined && m0 && m1) {
      const secs = (m1.at - m0.at) / 1000;
      // the node generator's CPU is this process's; wrk's is its own
      const bench = tool === 'wrk' ? (own.user + own.system) / 1e6 / secs : 0;
      const ours = row.procs.reduce((x, p) => x + (p.use?.cores ?? 0), 0) + (load.cores ?? 0) + bench;
      row.others = Math.max(0, machine - ours);
    }
    const errors = [...warm.errors, ...load.errors];
    if (errors.length > 0) row.problems.push(`answers other than 201: ${errors.join(', ')} (first: ${load.firstError ?? warm.firstError})`);
    return warm.ok + load.ok;
  };

  /** The jobs the row's 201s should have left in Valkey, against what is there. */
  const checkCount = async (row: Row, created: number, what: string, count: () => Promise<number>) => {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const held = await count();
    // wrk abandons up to one request per connection when each run's time is up; the server
    // still finishes them, so Valkey may hold up to 2 x 64 more than wrk counted
    const slack = tool === 'wrk' ? 2 * IN_FLIGHT : 0;
    const ok = held >= created && held - created <= slack;
    row.notes.push(`${what} holds ${fmtInt(held)}; 201s counted ${fmtInt(created)} (warm-up included)${slack ? `, ${held - created} answered after wrk stopped` : ''}: ${ok ? 'ok' : 'MISMATCH'}`);
    if (!ok) row.problems.push(`${what} holds ${held}, ${created} answered 201`);
  };

  const row = async (n: number, name: string, body: (row: Row, cleanup: Array<() => Promise<unknown>>) => Promise<void>) => {
    if (!runs(n) || aborting) return;
    process.stderr.write(`bench: ${n}. ${name}...\n`);
    const r: Row = { n, name, procs: [], notes: [], problems: [] };
    rows.push(r);
    const cleanup: Array<() => Promise<unknown>> = [];
    try {
      await server.reset();
      await body(r, cleanup);
    } catch (err) {
      r.failed = (err as Error).stack ?? String(err);
      delete r.rps;
    } finally {
      for (const c of cleanup.reverse()) await c().catch(() => undefined);
    }
  };

  /** Stops a child at the end of its row; a non-zero exit is a problem of that row. */
  const stopAtEnd = (r: Row, c: Child | WorkerdChild, mustBeClean: boolean) => async () => {
    const code = await c.stop();
    if (mustBeClean && code !== 0) r.problems.push(`${c.label} exited ${code} on SIGTERM: ${c.stderr().trim().slice(-300)}`);
  };

  const zcard = async () => Number(await server.call('ZCARD', pendingKey(QUEUE)));

  try {
    version = await server.version();
    const bundleStat = statSync(BUNDLE);
    header.push(
      `load: ${tool === 'wrk' ? `wrk -t2 -c${IN_FLIGHT} (Lua counts statuses)` : `node:http, 2 worker_threads, ${IN_FLIGHT} keep-alive connections`}; ` +
        `POST /v1/queues/${QUEUE}/jobs, ${Buffer.byteLength(BODY)}-byte JSON body, Bearer token; warm-up ${WARM_MS / 1000} s, measured ${MEASURE_MS / 1000} s per row`,
      `${workerdVersion()} (bare \`workerd serve\`, compatibilityDate ${COMPATIBILITY_DATE}, globalOutbound: network allow public/private/local)`,
      `producer bundle: dist/worker/default/worker.js, ${(bundleStat.size / 1024).toFixed(1)} KiB, built ${bundleStat.mtime.toISOString()}`,
    );

    const noopBundle = join(tmp, 'noop-worker.js');
    const fetchBundle = join(tmp, 'fetch-worker.js');
    if (runs(2) || runs(3)) {
      await bundleWorker(join(HERE, 'workers', 'noop-worker.js'), noopBundle);
      await bundleWorker(join(HERE, 'workers', 'fetch-worker.js'), fetchBundle);
    }

    await row(1, 'producer Worker (workerd) → gateway → Valkey', async (r, cleanup) => {
      const gw = await startGateway(server.url);
      spawned.push({ label: 'gateway', pid: gw.pid });
      cleanup.push(stopAtEnd(r, gw, true));
      const wd = await startWorkerd({
        label: 'producer',
        bundle: BUNDLE,
        dir: tmp,
        bindings: { EMQ_REST_URL: gw.url, EMQ_REST_TOKEN: gw.producer, EMQ_TOKENS: emqTokens, EMQ_MAX_PAYLOAD_BYTES: '1048576' },
      });
      spawned.push({ label: 'workerd (producer)', pid: wd.pid });
      cleanup.push(stopAtEnd(r, wd, false));
      const created = await measure(r, wd.url, [{ label: 'workerd', pid: wd.pid }, { label: 'gateway', pid: gw.pid }]);
      await checkCount(r, created, 'pending set', zcard);
    });

    await row(2, 'no-op Hono Worker (workerd)', async (r, cleanup) => {
      const wd = await startWorkerd({ label: 'noop', bundle: noopBundle, dir: tmp, bindings: {} });
      spawned.push({ label: 'workerd (no-op)', pid: wd.pid });
      cleanup.push(stopAtEnd(r, wd, false));
      await measure(r, wd.url, [{ label: 'workerd', pid: wd.pid }]);
      r.procs = r.procs.filter((p) => p.label !== 'valkey'); // not involved
    });

    await row(3, '1-fetch Hono Worker (workerd) → node:http no-op', async (r, cleanup) => {
      const tiny = await spawnServing('tiny upstream', [join(HERE, 'tiny-server.js')]);
      spawned.push({ label: 'tiny upstream', pid: tiny.pid });
      cleanup.push(stopAtEnd(r, tiny, true));
      const wd = await startWorkerd({ label: 'fetch', bundle: fetchBundle, dir: tmp, bindings: { UPSTREAM_URL: `${tiny.url}/`, UPSTREAM_TOKEN: token } });
      spawned.push({ label: 'workerd (1-fetch)', pid: wd.pid });
      cleanup.push(stopAtEnd(r, wd, false));
      await measure(r, wd.url, [{ label: 'workerd', pid: wd.pid }, { label: 'upstream', pid: tiny.pid }]);
      r.procs = r.procs.filter((p) => p.label !== 'valkey');
    });

    await row(4, 'Hono (Node) + BullMQ Queue.add', async (r, cleanup) => {
      const bull = await spawnServing('Hono+BullMQ', [join(HERE, 'bullmq-server.js')], { VALKEY_URL: server.url, BENCH_TOKEN: token });
      spawned.push({ label: 'Hono+BullMQ', pid: bull.pid });
      cleanup.push(stopAtEnd(r, bull, true));
      const created = await measure(r, bull.url, [{ label: 'node', pid: bull.pid }]);
      await checkCount(r, created, `BullMQ wait list`, async () => Number(await server.call('LLEN', `${BULL_PREFIX}:${QUEUE}:wait`)));
    });

    await row(5, 'producer on Node (emq producer, glide)', async (r, cleanup) => {
      const producer = await spawnServing('producer', [EMQ, 'producer'], { VALKEY_URL: server.url, PORT: '0', HOST: '127.0.0.1', EMQ_TOKENS: emqTokens });
      spawned.push({ label: 'producer (node)', pid: producer.pid });
      cleanup.push(stopAtEnd(r, producer, true));
      const created = await measure(r, producer.url, [{ label: 'node', pid: producer.pid }]);
      await checkCount(r, created, 'pending set', zcard);
    });
  } finally {
    await stop();
  }
  if (valkey && server.owned) spawned.push(valkey);
  const left = spawned.filter((p) => isRunning(p.pid));

  const rps = (n: number) => rows.find((r) => r.n === n && r.problems.length === 0)?.rps;
  const verdict = targets([
    { what: 'worker enqueue (1) / one-fetch worker floor (3)', ratio: ratioOf(rps(1), rps(3)), atLeast: 0.9 },
    { what: 'producer on Node over glide (5) / Hono + BullMQ (4)', ratio: ratioOf(rps(5), rps(4)), atLeast: 1.3 },
  ]);
  const details: string[] = [];
  for (const r of rows) {
    const lines: string[] = [];
    if (r.failed) lines.push(`FAILED: ${r.failed}`);
    for (const p of r.problems) lines.push(`NOT TRUSTED: ${p}`);
    if (r.rps !== undefined && r.load) {
      const per = r.procs.map((p) => `${p.label} ${p.use ? Math.round((p.use.cores / r.rps!) * 1e6) : '?'}`);
      const gen = r.load.cores !== undefined ? `, load gen ${Math.round((r.load.cores / r.rps) * 1e6)}` : '';
      const busiest = r.procs.map((p) => (p.use ? `${p.label} "${p.use.topThreadName}"` : '')).filter(Boolean).join(', ');
      lines.push(`CPU µs per request: ${per.join(', ')}${gen}; busiest threads: ${busiest}`);
      lines.push(`${fmtInt(r.load.requests)} answers in ${r.load.seconds.toFixed(2)} s, ${fmtInt(r.load.ok)} of them 201`);
    }
    lines.push(...r.notes);
    details.push(`${r.n}. ${r.name}`, ...lines.map((l) => `   ${l}`));
  }
  const out = [
    '',
    machine(`${version} (${server.owned ? 'private, started by the bench' : 'VALKEY_URL'})`),
    ...header,
    '',
    render(rows),
    '(cores: CPU busy over the measured window, from /proc; [x]: that process\'s busiest thread; total: server-side + load gen;',
    ' others: the rest of the machine meanwhile (all CPUs busy, less the row\'s processes and the bench); srv µs/req: server-side CPU per answered request; latency: send to last byte, under that row\'s load)',
    '',
    ...details,
    '',
    verdict.text,
    `processes started: ${spawned.length} (${spawned.map((p) => `${p.label} ${p.pid}`).join(', ')}); still running: ${left.length === 0 ? 'none' : left.map((p) => `${p.label} ${p.pid}`).join(', ')}`,
    `(whole run ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  return rows.some((r) => r.failed) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
