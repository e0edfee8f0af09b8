// What the server alone can do with @enqueue (EVALSHA of lua/enqueue.lua), the client out of
// the way: 50 connections, 16 commands in flight on each. Two rows, from two generators:
//
//   valkey-benchmark, duplicate path: the script's layout gate needs the same id in KEYS[1]
//     and ARGV[1], and valkey-benchmark writes a different random number into each
//     __rand_int__ of a command (probed on every run: see randIntIsConsistent), so it cannot
//     send a fresh id. What it can send is one fixed, existing id: the duplicate path (the
//     script finds the row and answers 0, writing nothing). Not the enqueue path, so not the
//     ceiling; shown because it is what the standard tool measures.
//   node RESP generator (resp-load.ts), unique ids: every command built beforehand with a
//     fresh id in both places, spread over the same queues as the glide rows. This is the
//     ceiling the other rows are divided by. The same generator also sends valkey-benchmark's
//     duplicate command, and the two figures are compared: close figures mean the node
//     generator is not what limits the ceiling.
import { basename, join } from 'node:path';
import { existsSync } from 'node:fs';
import { ID_ALPHABET } from '../shared/ids.js';
import { enqueueScript } from '../shared/scripts.js';
import { runTool } from './children.js';
import { payloadOf } from './payload.js';
import { cpuWindow, type CpuWindow, type Proc } from './proc-cpu.js';
import { fmtInt } from './report.js';
import { load, prepare, type LoadResult, type LoadSpec } from './resp-load.js';
import type { Server } from './server.js';

const CLIENTS = 50;
const PIPELINE = 16;
const PAYLOAD = JSON.stringify(payloadOf(0));
const TOOL_TIMEOUT_MS = 90_000;

export interface ServerFigures {
  opsPerSec: number;
  /** The generator's own CPU, in cores over the window. */
  loadCores: number | undefined;
  /** The generator's CPU when it is another process (not counted in cpu.self). */
  externalCores: number;
  cpu: CpuWindow;
  notes: string[];
  problems: string[];
}

/** valkey-benchmark, else redis-benchmark, from PATH or /usr/bin. */
export function benchmarkTool(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/bin', '/usr/local/bin'];
  for (const name of ['valkey-benchmark', 'redis-benchmark']) {
    const found = dirs.map((d) => join(d, name)).find((p) => existsSync(p));
    if (found) return found;
  }
  return undefined;
}

function connectArgs(server: Server): string[] {
  const e = server.endpoint;
  const args = ['-h', e.host, '-p', String(e.port)];
  if (e.password !== undefined) args.push(...(e.username ? ['--user', e.username] : []), '-a', e.password);
  if (e.db !== 0) args.push('--dbnum', String(e.db));
  return args;
}

async function tool(path: string, server: Server, args: string[]) {
  const run = await runTool(basename(path), path, [...connectArgs(server), ...args], TOOL_TIMEOUT_MS);
  if (run.code !== 0) throw new Error(`${basename(path)} exited ${run.code}: ${(run.stderr || run.stdout).trim().slice(-500)}`);
  return run;
}

/**
 * Requests per second from `--csv` output: the "rps" column of the last row, counted from
 * the right, because the test name (the command line) may itself hold `","`.
 */
export function csvRps(out: string): number {
  const rows = out.trim().split('\n').filter((l) => l.startsWith('"'));
  const header = rows[0]?.split('","') ?? [];
  const last = rows.at(-1)?.split('","') ?? [];
  const fromRight = header.length - header.findIndex((c) => c.replaceAll('"', '') === 'rps');
  const rps = rows.length >= 2 && fromRight <= header.length ? Number(last.at(-fromRight)?.replaceAll('"', '')) : NaN;
  if (!Number.isFinite(rps)) throw new Error(`no rps in benchmark output: ${out.slice(0, 300)}`);
  return rps;
}

/** Whether the tool writes one number into every __rand_int__ of a command (HSET k n n). */
export async function randIntIsConsistent(path: string, server: Server): Promise<boolean> {
  const key = 'emq:{bench-probe}:rand';
  await server.call('DEL', key);
  await tool(path, server, ['-c', '1', '-n', '8', '-r', '1000000000', 'HSET', key, '__rand_int__', '__rand_int__']);
  const fields = (await server.call('HKEYS', key)) as string[];
  const values = fields.length > 0 ? ((await server.call('HMGET', key, ...fields)) as string[]) : [];
  await server.call('DEL', key);
  if (fields.length === 0) throw new Error('probe wrote nothing: is the benchmark tool reaching the server?');
  return fields.every((f, i) => f === values[i]);
}

function evalsha(queue: string, id: string): string[] {
  return ['EVALSHA', enqueueScript.sha1, '2', `emq:{${queue}}:job:${id}`, `emq:{${queue}}:pending`, id, PAYLOAD];
}

/** The duplicate command both generators send: one fixed id, stored before the run. */
const DUP_QUEUE = 'bench-dup';
const DUP_ID = `JOB${'0'.repeat(11)}`;

async function storeDuplicate(server: Server): Promise<void> {
  const dup = evalsha(DUP_QUEUE, DUP_ID);
  await server.call('EVAL', enqueueScript.text, '2', dup[3]!, dup[4]!, DUP_ID, PAYLOAD);
}

function errorDelta(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.entries(after)
    .filter(([k, n]) => n > (before[k] ?? 0))
    .map(([k, n]) => `${k} x${n - (before[k] ?? 0)}`);
}

function valkeyOf(server: Server): Proc[] {
  return server.pid ? [{ label: 'valkey', pid: server.pid }] : [];
}

/** Row: valkey-benchmark on the duplicate path. Undefined when no benchmark tool is installed. */
export async function toolDuplicate(server: Server, total: number): Promise<ServerFigures | undefined> {
  const path = benchmarkTool();
  if (!path) return undefined;
  const notes: string[] = [];
  const problems: string[] = [];
  const consistent = await randIntIsConsistent(path, server);
  notes.push(
    `probe: ${basename(path)} writes ${consistent ? 'one number into every' : 'a different random number into each'} __rand_int__ of a command` +
      (consistent ? '' : ', so it cannot send KEYS[1] = emq:{q}:job:<ARGV[1]> with a fresh id: it drives the duplicate path only'),
  );
  await storeDuplicate(server);
  const args = ['-c', String(CLIENTS), '-P', String(PIPELINE), '--csv', ...evalsha(DUP_QUEUE, DUP_ID)];
  await tool(path, server, ['-n', String(Math.round(total / 10)), ...args]); // warm-up
  const errors0 = await server.errorStats();
  const { value: run, cpu } = await cpuWindow(valkeyOf(server), () => tool(path, server, ['-n', String(total), ...args]));
  const rps = csvRps(run.stdout);
  const loadCores = run.cpuSeconds !== undefined ? run.cpuSeconds / cpu.seconds : undefined;
  notes.push(`${basename(path)} -c ${CLIENTS} -P ${PIPELINE} -n ${fmtInt(total)} EVALSHA <sha> 2 <row> <pending> <id> <~100-byte payload>; every reply 0 (duplicate)`);
  const errs = errorDelta(errors0, await server.errorStats());
  if (errs.length > 0) problems.push(`server counted errors: ${errs.join(', ')}`);
  const pending = Number(await server.call('ZCARD', `emq:{${DUP_QUEUE}}:pending`));
  if (pending !== 1) problems.push(`the duplicate path wrote: pending set holds ${pending}, not 1`);
  return { opsPerSec: rps, loadCores, externalCores: loadCores ?? 0, cpu, notes, problems };
}

function spec(server: Server, total: number, command: (i: number) => readonly string[]): LoadSpec {
  const e = server.endpoint;
  const preamble: string[][] = [];
  if (e.password !== undefined) preamble.push(e.username ? ['AUTH', e.username, e.password] : ['AUTH', e.password]);
  if (e.db !== 0) preamble.push(['SELECT', String(e.db)]);
  return { host: e.host, port: e.port, clients: CLIENTS, pipeline: PIPELINE, total, command, preamble };
}

/** The i-th unique job: `JOB` + i in 11 base62 digits, a branded id (ids ascend, as minted ones do), queue i mod `queues`. */
function uniqueJob(queues: readonly string[]) {
  const id = (i: number) => {
    let digits = '';
    for (let n = i; n > 0; n = Math.floor(n / 62)) digits = ID_ALPHABET[n % 62]! + digits;
    return `JOB${digits.padStart(11, '0')}`;
  };
  return (i: number) => evalsha(queues[i % queues.length]!, id(i));
}

function checkTally(t: LoadResult, problems: string[], want: 'ones' | 'zeros'): void {
  if (t.errors > 0) problems.push(`${t.errors} error replies, first: ${t.firstError}`);
  if (want === 'ones' && t.zeros > 0) problems.push(`${t.zeros} duplicates where every id was new`);
  if (want === 'zeros' && t.ones > 0) problems.push(`${t.ones} enqueued where every id existed`);
}

/**
 * Row: the ceiling, unique ids over `queues`, from the node RESP generator; then the same
 * generator on valkey-benchmark's duplicate command, against `toolRps` when it ran.
 */
export async function generatorUnique(
  server: Server,
  total: number,
  queues: readonly string[],
  countPending: () => Promise<number>,
  toolRps: number | undefined,
): Promise<ServerFigures> {
  const notes: string[] = [];
  const problems: string[] = [];
  const warmTotal = Math.round(total / 10);
  const unique = uniqueJob(queues);
  checkTally(await load(spec(server, warmTotal, (i) => unique(total + i))), problems, 'ones');
  const errors0 = await server.errorStats();
  const s = spec(server, total, unique);
  const work = prepare(s); // every command built before the clock starts
  const { value: tally, cpu } = await cpuWindow(valkeyOf(server), () => load(s, work));
  checkTally(tally, problems, 'ones');
  const opsPerSec = tally.replies / tally.seconds;
  notes.push(`node RESP generator -c ${CLIENTS} -P ${PIPELINE} -n ${fmtInt(total)}, one connection each, commands built beforehand, ${queues.length} queues; every reply 1 (enqueued)`);
  const errs = errorDelta(errors0, await server.errorStats());
  if (errs.length > 0) problems.push(`server counted errors: ${errs.join(', ')}`);
  const pending = await countPending();
  if (pending !== warmTotal + total) problems.push(`pending sets hold ${pending}, ${warmTotal + total} sent`);
  else notes.push(`checked: the pending sets hold all ${fmtInt(pending)} jobs sent (warm-up included), no error replies`);

  try {
    await storeDuplicate(server);
    const dup = evalsha(DUP_QUEUE, DUP_ID);
    const viaNode = await load(spec(server, total, () => dup));
    const calibration: string[] = [];
    checkTally(viaNode, calibration, 'zeros');
    const nodeRps = viaNode.replies / viaNode.seconds;
    notes.push(
      `calibration on the duplicate path (one fixed id): node generator ${fmtInt(nodeRps)}/s` +
        (toolRps !== undefined ? ` vs valkey-benchmark ${fmtInt(toolRps)}/s (${(nodeRps / toolRps).toFixed(2)}x)` : '') +
        (calibration.length ? `; ${calibration.join('; ')}` : ''),
    );
  } catch (err) {
    notes.push(`calibration failed: ${(err as Error).message}`);
  }
  const loadCores = tally.cpuSeconds / tally.seconds; // the send window only, not the building
  return { opsPerSec, loadCores, externalCores: 0, cpu, notes, problems };
}
