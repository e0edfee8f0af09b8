// What the rows share: the settings, the run (Bench), the job, the closed-loop driver, the figures.
import { join } from 'node:path';
import type { Connection } from '../shared/connection.js';
import { enqueue, enqueueMany, mintId } from '../shared/index.js';
import { type Child, type CpuWindow, type Proc, cpuWindow } from './procs.js';
import { fmtInt, type Row } from './report.js';
import type { Server } from './server.js';

export const WARM_MS = Number(process.env.BENCH_WARM_MS) || 1_000;
export const MEASURE_MS = Number(process.env.BENCH_MS) || 5_000;
export const IN_FLIGHT = 64;
export const BATCH = 100;
export const BATCHES_IN_FLIGHT = 8;
/** Queues the direct rows spread their jobs over (so a cluster's primaries all work). */
export const QUEUES = 64;
export const PRIMARIES = 3;

/** The run, as the rows see it: the server (`valkey`: its process, when on this machine), the page's header lines, a scratch directory. */
export interface Bench {
  server: Server;
  valkey: Proc[];
  header: string[];
  tmp: string;
  runs(key: string): boolean;
  aborting(): boolean;
  /** Runs one row (unless not selected): a clean server, `body`, then `cleanup` in reverse; a throw fails the row. */
  row(key: string, body: (row: Row, cleanup: Array<() => Promise<void>>) => Promise<void>): Promise<void>;
  /** Stops a child at the end of its row; a non-zero exit (or one forced) is a problem of that row. */
  stopAtEnd(row: Row, child: Pick<Child, 'label' | 'stop' | 'output'>, mustBeClean?: boolean): () => Promise<void>;
  /** Jobs in the pending sets of `queues` on the single node. */
  zcards(queues: readonly string[]): Promise<number>;
}

let logs = 0;
/** A file for a server's stdout (its request logs), as a service manager keeps them: a pipe would wake its reader every line. */
export function logFile(tmp: string, label: string): string {
  return join(tmp, `${label.replace(/[^a-z0-9-]+/gi, '-')}-${++logs}.log`);
}

/** The job every row enqueues: a small JSON document, about 100 bytes once serialized. */
export function payloadOf(n: number) {
  return { n, event: 'order.created', customer: 'cus_8f3a2b1c', amount: 4200, currency: 'EUR', ref: 'inv-000042' };
}

export const queuesOf = (prefix: string) => Array.from({ length: QUEUES }, (_, i) => `${prefix}-${i}`);

/** Units done (jobs: a batch of 100 counts 100); each call's latency in ms, sorted, when asked for. */
export type Driven = { ops: number; seconds: number; latencies: number[] };

/** Closed-loop load: `concurrency` workers, each awaiting `step()` (its units done) until `ms` has passed; the first failure stops all. */
export async function drive(concurrency: number, ms: number, step: () => Promise<number>, keepLatencies = false): Promise<Driven> {
  const start = performance.now();
  const end = start + ms;
  const latencies: number[] = [];
  let ops = 0;
  let stopped = false;
  const worker = async () => {
    try {
      while (!stopped && performance.now() < end) {
        const t = performance.now();
        const done = await step(); // not `ops += await step()`: that reads ops before the await
        if (keepLatencies) latencies.push(performance.now() - t);
        ops += done;
      }
    } catch (err) {
      stopped = true;
      throw err;
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: concurrency }, worker));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  latencies.sort((a, b) => a - b);
  return { ops, seconds: (performance.now() - start) / 1000, latencies };
}

/** The q-quantile (0..1) of sorted values, nearest rank; undefined when empty. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  return sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Steps of the direct rows: one enqueue, or one enqueueMany of BATCH, round robin over `queues`; each checks every verdict. */
export function steps(connection: Connection, queues: readonly string[]) {
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

/** Fills a row's CPU cells: `valkey` are the Valkey processes, the rest sit in between; others = the machine less all of them. */
export function fillCpu(row: Row, cpu: CpuWindow, valkey: readonly Proc[], load: { label: string; cores: number | undefined }, external = 0): void {
  const isValkey = new Set(valkey.map((p) => p.label));
  row.valkey = cpu.procs.filter((p) => isValkey.has(p.label));
  row.between = cpu.procs.filter((p) => !isValkey.has(p.label));
  row.load = load;
  const ours = cpu.self + external + cpu.procs.reduce((s, p) => s + (p.use?.cores ?? 0), 0);
  row.others = cpu.machine === undefined ? undefined : Math.max(0, cpu.machine - ours);
}

/** CPU sampled: `valkey`'s and `between`'s; `count`: the jobs held after, in `where` (64 pending sets); `measuring`: called before the window. */
export interface DrivenRow {
  inFlight: number;
  step: () => Promise<number>;
  valkey: readonly Proc[];
  between?: readonly Proc[];
  count: () => Promise<number>;
  where?: string;
  measuring?: () => void;
}

/** A closed-loop row: a warm-up, the measured window with every CPU sampled, then throughput, latency and the count check. */
export async function drivenRow(row: Row, d: DrivenRow): Promise<Driven> {
  const warm = await drive(d.inFlight, WARM_MS, d.step);
  d.measuring?.();
  const { value: m, cpu } = await cpuWindow([...(d.between ?? []), ...d.valkey], () => drive(d.inFlight, MEASURE_MS, d.step, true));
  fillCpu(row, cpu, d.valkey, { label: 'bench', cores: cpu.self });
  row.opsPerSec = m.ops / m.seconds;
  row.p50Ms = quantile(m.latencies, 0.5);
  row.p99Ms = quantile(m.latencies, 0.99);
  const [held, sent, where] = [await d.count(), warm.ops + m.ops, d.where ?? `the ${QUEUES} pending sets`];
  if (held !== sent) row.problems.push(`${fmtInt(held)} jobs in ${where}, ${fmtInt(sent)} enqueued (warm-up included)`);
  else row.notes.push(`checked: ${fmtInt(held)} jobs in ${where}, as many as enqueued (warm-up included)`);
  return m;
}
