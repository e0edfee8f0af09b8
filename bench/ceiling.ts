// The server ceiling: how many @enqueue calls per second the server itself can run, with
// the client out of the way (-c 50 -P 16: 50 connections, 16 commands in flight on each).
//
// valkey-benchmark would be the natural tool, but the script's layout gate needs the same
// id in KEYS[1] and ARGV[1], and valkey-benchmark (8.0, and redis-benchmark 7) writes a fresh
// random number into each __rand_int__ of a command. The bench probes that; when the numbers
// differ, it runs the same shape from resp-load.ts instead, every command built beforehand,
// and calibrates that generator against valkey-benchmark on a command both can send.
// (valkey-benchmark stops at the first error reply, so a layout mismatch fails loudly.)
// The generator's ids ascend, as minted ids do, so the pending set grows at its tail.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { enqueueScript } from '../shared/scripts.js';
import { measured, type Measured } from './drive.js';
import { payloadOf } from './payload.js';
import { load, type LoadResult } from './resp-load.js';
import type { Server } from './server.js';

const CLIENTS = 50;
const PIPELINE = 16;
const TOTAL = 400_000;
const WARMUP = 40_000;
const QUEUE = 'bench';
const PENDING = `emq:{${QUEUE}}:pending`;
const PAYLOAD = JSON.stringify(payloadOf(0));

export interface Ceiling extends Partial<Measured> {
  opsPerSec: number;
  /** How the load was sent. */
  method: string;
  /** Facts worth printing: the probe's answer, the checks passed, the calibration. */
  notes: string[];
  /** Checks that failed: the figure is not to be trusted. */
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

async function runTool(tool: string, server: Server, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(tool, [...connectArgs(server), ...args], {
    timeout: 60_000,
    maxBuffer: 16 << 20,
  });
  return stdout;
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
export async function randIntIsConsistent(tool: string, server: Server): Promise<boolean> {
  const key = 'emq:{bench-probe}:rand';
  await server.call('DEL', key);
  await runTool(tool, server, ['-c', '1', '-n', '8', '-r', '1000000000', 'HSET', key, '__rand_int__', '__rand_int__']);
  const fields = (await server.call('HKEYS', key)) as string[];
  const values = fields.length > 0 ? ((await server.call('HMGET', key, ...fields)) as string[]) : [];
  await server.call('DEL', key);
  if (fields.length === 0) throw new Error('probe wrote nothing: is the benchmark tool reaching the server?');
  return fields.every((f, i) => f === values[i]);
}

function evalsha(row: string, pending: string, id: string): string[] {
  return ['EVALSHA', enqueueScript.sha1, '2', row, pending, id, PAYLOAD];
}

/** The i-th unique job: `JOB` + i in 26 digits, a valid id, so KEYS[1] and ARGV[1] agree. */
function uniqueJob(i: number): string[] {
  const id = `JOB${String(i).padStart(26, '0')}`;
  return evalsha(`emq:{${QUEUE}}:job:${id}`, PENDING, id);
}

function generate(server: Server, total: number, command: (i: number) => readonly string[]): Promise<LoadResult> {
  const e = server.endpoint;
  const preamble: string[][] = [];
  if (e.password !== undefined) preamble.push(e.username ? ['AUTH', e.username, e.password] : ['AUTH', e.password]);
  if (e.db !== 0) preamble.push(['SELECT', String(e.db)]);
  return load({ host: e.host, port: e.port, clients: CLIENTS, pipeline: PIPELINE, total, command, preamble });
}

function errorDelta(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.entries(after)
    .filter(([k, n]) => n > (before[k] ?? 0))
    .map(([k, n]) => `${k} x${n - (before[k] ?? 0)}`);
}

/** Runs the ceiling phase: probe, load, checks, calibration. Leaves the server dirty. */
export async function measureCeiling(server: Server): Promise<Ceiling> {
  const tool = benchmarkTool();
  const notes: string[] = [];
  const problems: string[] = [];
  const force = process.env.BENCH_CEILING; // 'tool' or 'generator', to override the probe
  let useTool = false;
  if (tool) {
    const consistent = await randIntIsConsistent(tool, server);
    notes.push(
      `${basename(tool)} writes ${consistent ? 'one number into every' : 'a different random number into each'} __rand_int__ of a command` +
        (consistent ? '' : ': it cannot keep KEYS[1] = emq:{q}:job:<ARGV[1]>'),
    );
    useTool = force ? force === 'tool' : consistent;
  } else {
    notes.push('no valkey-benchmark or redis-benchmark found');
  }

  await server.reset();
  const errors0 = await server.errorStats();
  let result: Ceiling;
  let expected: number;
  if (useTool) {
    const rand = 'JOB0000000000000000__rand_int__';
    const args = ['-c', String(CLIENTS), '-P', String(PIPELINE), '-r', '100000000', '--csv',
      ...evalsha(`emq:{${QUEUE}}:job:${rand}`, PENDING, rand)];
    await runTool(tool!, server, ['-n', String(WARMUP), ...args]);
    let rps = 0;
    const m = await measured(() => server.cpuSeconds(), async () => {
      rps = csvRps(await runTool(tool!, server, ['-n', String(TOTAL), ...args]));
      return { ops: TOTAL, seconds: TOTAL / rps };
    });
    const { clientCores: _client, ...rest } = m; // the tool's CPU is not this process's
    result = { ...rest, opsPerSec: rps, method: `${basename(tool!)} -c ${CLIENTS} -P ${PIPELINE} -n ${TOTAL} -r 1e8`, notes, problems };
    expected = WARMUP + TOTAL; // less the few random collisions, which answer 0
  } else {
    const warm = await generate(server, WARMUP, (i) => uniqueJob(TOTAL + i));
    let tally: LoadResult | undefined;
    const m = await measured(() => server.cpuSeconds(), async () => {
      tally = await generate(server, TOTAL, uniqueJob);
      return { ops: tally.replies, seconds: tally.seconds };
    });
    const clientCores = tally!.cpuSeconds / tally!.seconds; // the send window only, not the building
    result = { ...m, clientCores, opsPerSec: TOTAL / m.seconds, method: `node RESP generator -c ${CLIENTS} -P ${PIPELINE} -n ${TOTAL}, unique ids`, notes, problems };
    for (const t of [warm, tally!]) {
      if (t.errors > 0) problems.push(`${t.errors} error replies, first: ${t.firstError}`);
      if (t.zeros > 0) problems.push(`${t.zeros} duplicates where every id was new`);
    }
    expected = WARMUP + TOTAL;
  }

  const pending = Number(await server.call('ZCARD', PENDING));
  const errs = errorDelta(errors0, await server.errorStats());
  if (errs.length > 0) problems.push(`server counted errors: ${errs.join(', ')}`);
  if (pending < expected * 0.99) problems.push(`pending set holds ${pending}, expected about ${expected}`);
  else notes.push(`checked: pending set holds ${pending} of ${expected} jobs sent, no error replies`);

  if (tool) {
    try {
      notes.push(await calibrate(tool, server));
    } catch (err) {
      notes.push(`calibration failed: ${(err as Error).message}`);
    }
  }
  return result;
}

/**
 * Both generators on one command each can send: @enqueue of a fixed, existing id (the
 * duplicate path). Close figures mean the node generator is not what limits the ceiling.
 */
async function calibrate(tool: string, server: Server): Promise<string> {
  await server.reset();
  const id = `JOB${'0'.repeat(26)}`;
  const dup = evalsha(`emq:{${QUEUE}-dup}:job:${id}`, `emq:{${QUEUE}-dup}:pending`, id);
  await server.call('EVAL', enqueueScript.text, '2', dup[3]!, dup[4]!, id, PAYLOAD);
  const viaTool = csvRps(await runTool(tool, server, ['-c', String(CLIENTS), '-P', String(PIPELINE), '-n', String(TOTAL), '--csv', ...dup]));
  const viaNode = await generate(server, TOTAL, () => dup);
  const nodeRps = TOTAL / viaNode.seconds;
  const bad = viaNode.errors > 0 || viaNode.ones > 0 ? ` (unexpected replies: ${viaNode.errors} errors, ${viaNode.ones} enqueued)` : '';
  return (
    `calibration, duplicate path (same id every time): ${basename(tool)} ${fmt(viaTool)}/s, ` +
    `node generator ${fmt(nodeRps)}/s${bad}`
  );
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
