// The printed result: the machine, one row per phase with its ratios, and the targets.
import { cpus, totalmem } from 'node:os';

export interface Row {
  name: string;
  opsPerSec?: number;
  clientCores?: number;
  serverCores?: number;
  /** Cores the HTTP process in between used (the gateway, or the no-op server), from /proc. */
  httpCores?: number;
  /** Request latency percentiles, in ms, where the phase kept them. */
  p50Ms?: number;
  p99Ms?: number;
  /** Why there is no figure, or what it rests on. */
  note?: string;
}

export interface Target {
  what: string;
  /** The ratio reached, undefined when a phase it needs did not run. */
  ratio: number | undefined;
  atLeast: number;
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ratio = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}x` : '-';
const cores = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(2));
const ms = (n: number | undefined) => (n === undefined ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1));

export function machine(server: string): string {
  const cpu = cpus();
  const model = cpu[0]?.model.trim() ?? '?';
  return [
    `machine: ${cpu.length} x ${model}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform}-${process.arch}`,
    `node ${process.version}; server ${server}`,
  ].join('\n');
}

export function table(rows: readonly Row[], bullmq: number | undefined, ceiling: number | undefined): string {
  // the HTTP columns only when a phase has an HTTP process or latencies, so subsets print as before
  const http = rows.some((r) => r.httpCores !== undefined);
  const latency = rows.some((r) => r.p50Ms !== undefined);
  const head = ['', 'ops/s', 'vs BullMQ add', 'vs ceiling', 'client CPU', 'server CPU',
    ...(http ? ['HTTP proc CPU'] : []), ...(latency ? ['p50 ms', 'p99 ms'] : [])];
  const body = rows.map((r) => [
    r.name,
    r.opsPerSec === undefined ? 'n/a' : int(r.opsPerSec),
    ratio(r.opsPerSec, bullmq),
    ratio(r.opsPerSec, ceiling),
    cores(r.clientCores),
    cores(r.serverCores),
    ...(http ? [cores(r.httpCores)] : []),
    ...(latency ? [ms(r.p50Ms), ms(r.p99Ms)] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const notes = rows.filter((r) => r.note).map((r) => `  ${r.name}: ${r.note}`);
  const legend = [
    '(CPU in cores busy during the measured window' +
      (http ? '; HTTP proc CPU: the gateway or no-op server process, from /proc/<pid>/stat' : '') + ')',
    ...(latency ? ['(latency: each request from send to last byte, under that row\'s load)'] : []),
  ];
  return [line(head), rule, ...body.map(line), ...legend, ...notes].join('\n');
}

/** Lines like `PASS  single enqueue >= 1.0x BullMQ Queue.add: 1.12x`; `ok` is false when any failed or could not run. */
export function targets(list: readonly Target[]): { text: string; ok: boolean } {
  let ok = true;
  const lines = list.map((t) => {
    const verdict = t.ratio === undefined ? 'N/A ' : t.ratio >= t.atLeast ? 'PASS' : 'FAIL';
    if (verdict !== 'PASS') ok = false;
    return `${verdict}  ${t.what} >= ${t.atLeast.toFixed(1)}x: ${t.ratio === undefined ? 'not measured' : `${t.ratio.toFixed(2)}x`}`;
  });
  return { text: ['targets:', ...lines].join('\n'), ok };
}
