// npm run bench: enqueue throughput, every way in (plan.ts; rows/*.ts, one at a time), on one private
// Valkey, judged by verdict.ts; a full run writes bench/results/latest.{md,svg}. Env: BENCH_MS (ms
// measured per row, 5000), BENCH_WARM_MS (1000), BENCH_ONLY=name,... or arguments (rows or groups;
// not saved), BENCH_SAVE=0, BENCH_DEADLINE_MS (300000), past which every process is stopped.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../scripts/repo-root.js';
import { chart } from './chart.js';
import { MEASURE_MS, WARM_MS, type Bench } from './common.js';
import { CEILING, MEMORY, ROWS, selection } from './plan.js';
import { accounting, outputOf, stopAll } from './procs.js';
import { machine, page, table, type Row } from './report.js';
import { glideRows } from './rows/glide.js';
import { httpRows } from './rows/http.js';
import { memoryRows } from './rows/memory.js';
import { peerRows } from './rows/peer.js';
import { restRows } from './rows/rest.js';
import { serverRows } from './rows/server.js';
import { Server } from './server.js';
import { verdict } from './verdict.js';

const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS) || 300_000;
const ROOT = repoRoot();
const RESULTS = join(ROOT, 'bench', 'results');

async function main(): Promise<number> {
  const t0 = performance.now();
  const started = new Date();
  const only = selection([...process.argv.slice(2), ...(process.env.BENCH_ONLY?.split(',') ?? [])]);
  const runs = (key: string) => !only || only.has(key);
  const save = process.env.BENCH_SAVE !== '0' && !only;
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
    valkey: [{ label: 'valkey', pid: server.pid }],
    header: [],
    tmp,
    runs,
    aborting: () => aborting,
    row: async (key, body) => {
      const n = ROWS.findIndex((s) => s.key === key) + 1;
      if (!runs(key) || aborting) return;
      process.stderr.write(`bench: ${n}. ${ROWS[n - 1]!.name}...\n`);
      const r: Row = { n, ...ROWS[n - 1]!, between: [], notes: [], problems: [] };
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

  const seconds = (performance.now() - t0) / 1000;
  const commit = gitDescribe();
  const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z');
  const ceiling = { key: CEILING, n: ROWS.findIndex((r) => r.key === CEILING) + 1 };
  const intro = [
    `${stamp}, ${commit}; whole run ${seconds.toFixed(0)} s (\`npm run bench\`)`,
    `machine: ${machine()}; other processes may share it (the "others" column)`,
    `server: ${version} (private, started by the bench), one process for every single-node row`,
    ...bench.header,
    `each row: warm-up ${WARM_MS / 1000} s, measured ${MEASURE_MS / 1000} s (the server rows: a fixed count, sized to about that); jobs of ~100 bytes`,
  ];
  const md = page({ intro, rows, ceiling, ...verdict(rows), ...(memory ? { memory } : {}), accounting: accounting() }, 'latest.svg');
  process.stdout.write(md);
  if (save) {
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(join(RESULTS, 'latest.svg'), chart(rows, `${stamp} · ${commit} · ${machine()} · ${version}`, CEILING));
    writeFileSync(join(RESULTS, 'latest.md'), md);
    process.stderr.write(`bench: wrote ${RESULTS}/latest.md, latest.svg\n`);
  }
  return rows.some((r) => r.failed) ? 1 : 0;
}

/** "commit abc1234" (+ "with local changes"), or "not a git checkout". */
function gitDescribe(): string {
  const git = (...args: string[]) => outputOf('git', ['-C', ROOT, ...args]);
  const head = git('rev-parse', '--short', 'HEAD');
  return head ? `commit ${head}${git('status', '--porcelain', '--untracked-files=no') ? ' with local changes' : ''}` : 'not a git checkout';
}

// glide's client keeps the loop alive after close; exit explicitly.
main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    void stopAll().finally(() => process.exit(1));
  },
);
