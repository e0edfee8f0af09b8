// The result of a run: one markdown table (rows, ratios, latency, CPU), the notes under it,
// the targets, and the bar chart (chart.ts). The same text is printed and saved.
import { cpus, totalmem } from 'node:os';
import type { ProcUse } from './proc-cpu.js';

/** What a row measures; the chart colours bars by it. */
export type Group = 'server' | 'peer' | 'glide' | 'cluster' | 'rest' | 'http' | 'floor';

export interface Row {
  n: number;
  /** Its BENCH_ONLY name. */
  key: string;
  name: string;
  /** Its label in the chart. */
  short: string;
  group: Group;
  opsPerSec?: number | undefined;
  p50Ms?: number | undefined;
  p99Ms?: number | undefined;
  /** The side sending the load: this process ("bench"), wrk, valkey-benchmark. */
  load?: { label: string; cores: number | undefined };
  /** The Valkey processes (one, or each primary of the cluster). */
  valkey?: ProcUse[];
  /** The processes between the load and Valkey, or serving it (gateway, workerd, Node servers). */
  between: ProcUse[];
  /** Cores the rest of the machine used meanwhile. */
  others?: number | undefined;
  /** The key of the row it is compared with as a peer (BullMQ), and as a reference (its floor, or the single node). */
  peer?: string;
  ref?: string;
  notes: string[];
  /** Checks that failed: the figure stands, marked not trusted. */
  problems: string[];
  failed?: string;
}

export interface Target {
  what: string;
  /** The ratio reached, undefined when a row it needs did not run or is not trusted. */
  ratio: number | undefined;
  atLeast: number;
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fmtCores = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '?' : n.toFixed(2));
/** 2.34x, 0.56x; below 0.1, two significant digits (0.0042x) so small ratios do not read 0.00x. */
export const fmtRatio = (r: number) => `${r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}x`;
export const ratioOf = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model.trim() ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform}-${process.arch}, node ${process.version}`;
}

/** The figure of a row, when it has one. */
export function figure(rows: readonly Row[], key: string | undefined): Row | undefined {
  return key === undefined ? undefined : rows.find((r) => r.key === key && r.opsPerSec !== undefined && !r.failed);
}

function versus(rows: readonly Row[], row: Row, key: string | undefined): string {
  const other = figure(rows, key);
  const r = ratioOf(row.opsPerSec, other?.opsPerSec);
  return r === undefined ? '' : `${fmtRatio(r)} #${other!.n}`;
}

function procCell(p: ProcUse): string {
  if (!p.use) return `${p.label} ?`;
  return `${p.label} ${fmtCores(p.use.cores)} [${fmtCores(p.use.topThread)}]`;
}

/** The markdown table, one line per row. `ceilingKey` names the row every other is divided by. */
export function table(rows: readonly Row[], ceilingKey: string): string {
  const ceiling = figure(rows, ceilingKey);
  const head = ['#', 'what', 'ops/s', 'vs ceiling', 'vs peer', 'vs ref', 'p50 ms', 'p99 ms', 'load CPU', 'Valkey CPU', 'in between: CPU [busiest thread]', 'others'];
  const right = new Set([2, 3, 4, 5, 6, 7, 9, 11]);
  const body = rows.map((r) => {
    const ok = r.opsPerSec !== undefined && !r.failed;
    const valkey = r.valkey?.length ? r.valkey.map((p) => fmtCores(p.use?.cores)).join(' + ') : '';
    return [
      String(r.n),
      r.name + (r.problems.length ? ' **(not trusted)**' : ''),
      r.failed ? '**failed**' : ok ? fmtInt(r.opsPerSec!) : 'n/a',
      ok && ceiling && r.key !== ceilingKey ? fmtRatio(r.opsPerSec! / ceiling.opsPerSec!) : '',
      ok ? versus(rows, r, r.peer) : '',
      ok ? versus(rows, r, r.ref) : '',
      ok ? fmtMs(r.p50Ms) : '',
      ok ? fmtMs(r.p99Ms) : '',
      ok && r.load ? `${r.load.label} ${fmtCores(r.load.cores)}` : '',
      ok ? valkey : '',
      ok ? r.between.map(procCell).join(', ') : '',
      ok && r.others !== undefined ? fmtCores(r.others) : '',
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(head), rule, ...body.map(line)].join('\n');
}

/** Lines like `PASS  single enqueue >= 1.0x BullMQ Queue.add: 1.12x`. */
export function targets(list: readonly Target[]): string[] {
  return list.map((t) => {
    const verdict = t.ratio === undefined ? 'N/A ' : t.ratio >= t.atLeast ? 'PASS' : 'FAIL';
    return `${verdict}  ${t.what} >= ${t.atLeast.toFixed(1)}x: ${t.ratio === undefined ? 'not measured' : `${t.ratio.toFixed(2)}x`}`;
  });
}

/** Each row's notes, problems and failure, under its number. */
export function details(rows: readonly Row[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const lines = [
      ...(r.failed ? [`FAILED: ${r.failed}`] : []),
      ...r.problems.map((p) => `NOT TRUSTED: ${p}`),
      ...r.notes,
    ];
    if (lines.length === 0) continue;
    out.push(`- **#${r.n} ${r.name}**`, ...lines.map((l) => `  - ${l.replace(/\n/g, '\n    ')}`));
  }
  return out;
}
