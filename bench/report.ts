// The result of a run as markdown (printed and saved; the chart is chart.ts'): the table, the
// CPU per op, the memory section, the targets and each row's notes.
import { cpus, totalmem } from 'node:os';
import type { ProcUse } from './procs.js';

/** What a row measures; the chart colours bars by it. */
export type Group = 'server' | 'peer' | 'glide' | 'cluster' | 'rest' | 'http' | 'floor';

/** A row: its spec (plan.ts) and figures. CPU: the load's sender (bench, wrk, valkey-benchmark), the Valkey processes, those in between, the rest of the machine. */
export interface Row {
  n: number;
  key: string;
  name: string;
  short: string;
  group: Group;
  opsPerSec?: number | undefined;
  p50Ms?: number | undefined;
  p99Ms?: number | undefined;
  load?: { label: string; cores: number | undefined };
  valkey?: ProcUse[];
  between: ProcUse[];
  others?: number | undefined;
  peer?: string | undefined;
  ref?: string | undefined;
  notes: string[];
  /** Checks that failed: the figure stands, marked not trusted. */
  problems: string[];
  failed?: string;
}

/** A bound on a ratio (or a figure in `unit`), met at or above `atLeast`, or at or below `atMost`; undefined when its rows did not run or are not trusted. */
export type Target = { what: string; ratio: number | undefined; atLeast?: number; atMost?: number; unit?: string };

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

/** A row's number and name, marked when not trusted. */
const named = (r: Row) => [String(r.n), r.name + (r.problems.length ? ' **(not trusted)**' : '')];

/** A markdown table, columns padded to their widest cell; those in `right` aligned right. */
export function mdTable(head: readonly string[], body: readonly string[][], right: ReadonlySet<number>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(head), rule, ...body.map(line)].join('\n');
}

/** The markdown table, one line per row. `ceilingKey` names the row every other is divided by. */
export function table(rows: readonly Row[], ceilingKey: string): string {
  const ceiling = figure(rows, ceilingKey);
  const head = '#|what|ops/s|vs ceiling|vs peer|vs ref|p50 ms|p99 ms|load CPU|Valkey CPU|in between: CPU [busiest thread]|others'.split('|');
  const right = new Set([2, 3, 4, 5, 6, 7, 9, 11]);
  const body = rows.map((r) => {
    if (r.opsPerSec === undefined || r.failed) return [...named(r), r.failed ? '**failed**' : 'n/a', ...Array<string>(9).fill('')];
    return [
      ...named(r),
      fmtInt(r.opsPerSec),
      ceiling && r.key !== ceilingKey ? fmtRatio(r.opsPerSec / ceiling.opsPerSec!) : '',
      versus(rows, r, r.peer),
      versus(rows, r, r.ref),
      fmtMs(r.p50Ms),
      fmtMs(r.p99Ms),
      r.load ? `${r.load.label} ${fmtCores(r.load.cores)}` : '',
      (r.valkey ?? []).map((p) => fmtCores(p.use?.cores)).join(' + '),
      r.between.map((p) => `${p.label} ${fmtCores(p.use?.cores)}${p.use ? ` [${fmtCores(p.use.topThread)}]` : ''}`).join(', '),
      r.others !== undefined ? fmtCores(r.others) : '',
    ];
  });
  return mdTable(head, body, right);
}

/** Lines like `PASS  single enqueue >= 1.0x BullMQ Queue.add: 1.12x`. */
export function targets(list: readonly Target[]): string[] {
  return list.map((t) => {
    const [op, bound] = t.atMost !== undefined ? ['<=', t.atMost] : ['>=', t.atLeast ?? 0];
    const met = t.ratio !== undefined && (op === '<=' ? t.ratio <= bound : t.ratio >= bound);
    const verdict = t.ratio === undefined ? 'N/A ' : met ? 'PASS' : 'FAIL';
    const fmt = (n: number) => (t.unit ? `${n.toFixed(0)} ${t.unit}` : `${n.toFixed(2)}x`);
    return `${verdict}  ${t.what} ${op} ${fmt(bound)}: ${t.ratio === undefined ? 'not measured' : fmt(t.ratio)}`;
  });
}

/** µs of CPU per op (a job, or an answered HTTP request) of `cores` at the row's rate. */
export const usPerOp = (row: Row, cores: number | undefined) =>
  cores === undefined || row.opsPerSec === undefined || row.opsPerSec <= 0 ? undefined : (cores / row.opsPerSec) * 1e6;

/** The µs per op of the row's process `label` (the load's, those in between, then Valkey's), or of its busiest thread. */
export function cpuPerOp(rows: readonly Row[], key: string, label: string, thread = false): number | undefined {
  const row = rows.find((r) => r.key === key && r.opsPerSec !== undefined && !r.failed && r.problems.length === 0);
  if (!row) return undefined;
  if (row.load?.label === label) return usPerOp(row, row.load.cores);
  const p = [...row.between, ...(row.valkey ?? [])].find((x) => x.label === label);
  return p?.use ? usPerOp(row, thread ? p.use.topThread : p.use.cores) : undefined;
}

const fmtUs = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '?' : n < 10 ? n.toFixed(1) : n.toFixed(0));

/** The second table: per row, µs of CPU per op of every process measured ([its busiest thread]), and their sum. */
export function cpuTable(rows: readonly Row[]): string {
  const head = ['#', 'what', 'ops/s', 'load µs/op', 'Valkey µs/op', 'in between: µs/op [busiest thread]', 'all listed µs/op'];
  const right = new Set([2, 3, 4, 6]);
  const body = rows
    .filter((r) => r.opsPerSec !== undefined && !r.failed)
    .map((r) => {
      const load = usPerOp(r, r.load?.cores);
      const valkey = (r.valkey ?? []).map((p) => usPerOp(r, p.use?.cores));
      const between = r.between.map((p) => ({ p, all: usPerOp(r, p.use?.cores), top: usPerOp(r, p.use?.topThread) }));
      const parts = [load, ...valkey, ...between.map((b) => b.all)];
      const sum = parts.every((x) => x !== undefined) ? parts.reduce((a, b) => a! + b!, 0) : undefined;
      return [
        ...named(r),
        fmtInt(r.opsPerSec!),
        r.load ? `${r.load.label} ${fmtUs(load)}` : '',
        valkey.map(fmtUs).join(' + '),
        between.map((b) => `${b.p.label} ${fmtUs(b.all)} [${fmtUs(b.top)}]`).join(', '),
        fmtUs(sum),
      ];
    });
  return mdTable(head, body, right);
}

/** Each row's notes, problems and failure, under its number. */
export const details = (rows: readonly Row[]): string[] =>
  rows.flatMap((r) => {
    const lines = [...(r.failed ? [`FAILED: ${r.failed}`] : []), ...r.problems.map((p) => `NOT TRUSTED: ${p}`), ...r.notes];
    return lines.length ? [`- **#${r.n} ${r.name}**`, ...lines.map((l) => `  - ${l.replace(/\n/g, '\n    ')}`)] : [];
  });

/** The page's parts; `ceiling`: the row every other is divided by, and its number in the full table. */
export interface Page {
  intro: string[];
  rows: readonly Row[];
  ceiling: { key: string; n: number };
  verdict: string[];
  ratios: string[];
  memory?: string[];
  accounting: string;
}

/** The markdown page, its chart at `svg`. */
export function page(p: Page, svg: string): string {
  const legend = [
    `ops/s: jobs enqueued per second (HTTP rows: requests answered 201 per second). vs ceiling: against #${p.ceiling.n}.`,
    "vs peer: against BullMQ doing the same (Queue.add, Queue.addBulk, or Hono + BullMQ over HTTP). vs ref: against the row named (an HTTP row's no-op floor, the same load on the single node for the cluster rows, the fetch row for the REST rows).",
    "p50/p99: latency of one call (a batch of 100 is one call; valkey-benchmark and the RESP generator keep none), or of one HTTP request, under that row's load.",
    "CPU in cores busy over the measured window, from /proc: load = whoever sends (bench: this Node process, glide's threads included; wrk; valkey-benchmark); Valkey = the server (the cluster: each primary); in between = the processes on the way, [busiest thread]; others = the rest of the machine meanwhile.",
  ];
  const cpuLegend = [
    "The same CPU per op: each process's CPU time over the measured window divided by the ops (jobs; HTTP rows: requests answered 201, or 200 with the enqueued reply) in it, in µs.",
    "A workerd's busiest thread is its isolate; a Node server's, its JS thread (glide's I/O runs on threads of its own).",
  ];
  const para = (lines: readonly string[]) => lines.map((l) => `${l}  `).join('\n');
  const sections = [
    '# `npm run bench`: enqueue throughput, one run, one Valkey',
    para(p.intro),
    `![ops/s per row](${svg})`,
    table(p.rows, p.ceiling.key),
    para(legend),
    '## CPU per op',
    cpuTable(p.rows),
    para(cpuLegend),
    ...(p.memory?.length ? ['## Memory per job', p.memory.join('\n')] : []),
    '## Targets',
    ['```', ...p.verdict, ...(p.ratios.length ? ['', ...p.ratios] : []), '```'].join('\n'),
    '## Per row',
    details(p.rows).join('\n'),
    p.accounting,
  ];
  return `${sections.join('\n\n')}\n`;
}
