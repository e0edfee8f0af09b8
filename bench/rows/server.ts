// What the server alone can do with @enqueue (EVALSHA of lua/enqueue.lua), the client out of
// the way: 50 connections, 16 commands in flight on each. Two rows, from two generators:
//
//   valkey-benchmark, duplicate path: the script's layout gate needs the same id in KEYS[1]
//     and ARGV[1], and valkey-benchmark writes a different random number into each
//     __rand_int__ of a command (probed on every run: see randIntIsConsistent), so it cannot
//     send a fresh id. What it can send is one fixed, existing id: the duplicate path (the
//     script finds the row and answers 0, writing nothing). Not the enqueue path, so not the
//     ceiling; shown because it is what the standard tool measures.
//   node RESP generator (below), unique ids: every command built beforehand with a
//     fresh id in both places, spread over the same queues as the glide rows. This is the
//     ceiling the other rows are divided by. The same generator also sends valkey-benchmark's
//     duplicate command, and the two figures are compared: close figures mean the node
//     generator is not what limits the ceiling.
import { connect, type Socket } from 'node:net';
import { basename } from 'node:path';
import { which } from '../../scripts/valkey.js';
import { ID_ALPHABET } from '../../shared/ids.js';
import { enqueueScript } from '../../shared/scripts.js';
import { MEASURE_MS, fillCpu, payloadOf, queuesOf, type Bench } from '../common.js';
import { cpuWindow, runTool, type CpuWindow, type Proc } from '../procs.js';
import { fmtInt, type Row } from '../report.js';
import type { Server } from '../server.js';

const CLIENTS = 50;
const PIPELINE = 16;
const PAYLOAD = JSON.stringify(payloadOf(0));
const TOOL_TIMEOUT_MS = 90_000;
/** Commands per second the server rows are sized for: about one measured window's worth. */
const CEILING_RATE = 80_000;

interface ServerFigures {
  opsPerSec: number;
  /** The generator's own CPU, in cores over the window. */
  loadCores: number | undefined;
  /** The generator's CPU when it is another process (not counted in cpu.self). */
  externalCores: number;
  cpu: CpuWindow;
  notes: string[];
  problems: string[];
}

/** Rows 1 and 2, on the single node. */
export async function serverRows(bench: Bench): Promise<void> {
  const { server, valkey } = bench;
  const total = Math.max(20_000, Math.round((CEILING_RATE * MEASURE_MS) / 1000));
  let toolRps: number | undefined;
  const fill = (r: Row, f: ServerFigures, label: string) => {
    r.opsPerSec = f.opsPerSec;
    fillCpu(r, f.cpu, valkey, { label, cores: f.loadCores }, f.externalCores);
    r.notes.push(...f.notes);
    r.problems.push(...f.problems);
  };
  await bench.row('vb-dup', async (r) => {
    const f = await toolDuplicate(server, total);
    if (!f) throw new Error('no valkey-benchmark (or redis-benchmark) on PATH: install valkey-tools');
    toolRps = f.opsPerSec;
    fill(r, f, 'valkey-benchmark');
  });
  await bench.row('ceiling', async (r) => {
    const queues = queuesOf('bench-ceiling');
    fill(r, await generatorUnique(server, total, queues, () => bench.zcards(queues), toolRps), 'bench');
  });
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
function csvRps(out: string): number {
  const rows = out.trim().split('\n').filter((l) => l.startsWith('"'));
  const header = rows[0]?.split('","') ?? [];
  const last = rows.at(-1)?.split('","') ?? [];
  const fromRight = header.length - header.findIndex((c) => c.replaceAll('"', '') === 'rps');
  const rps = rows.length >= 2 && fromRight <= header.length ? Number(last.at(-fromRight)?.replaceAll('"', '')) : NaN;
  if (!Number.isFinite(rps)) throw new Error(`no rps in benchmark output: ${out.slice(0, 300)}`);
  return rps;
}

/** Whether the tool writes one number into every __rand_int__ of a command (HSET k n n). */
async function randIntIsConsistent(path: string, server: Server): Promise<boolean> {
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
async function toolDuplicate(server: Server, total: number): Promise<ServerFigures | undefined> {
  const path = which('valkey-benchmark') ?? which('redis-benchmark');
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
async function generatorUnique(
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

// ---- the node RESP generator: valkey-benchmark's shape (-c clients, -P pipeline, -n total),
// for commands valkey-benchmark cannot express: every command is built ahead of time, so a
// key and an argument can carry the same unique id. It counts replies and keeps the first error.

interface LoadSpec {
  host: string;
  port: number;
  clients: number;
  pipeline: number;
  total: number;
  /** The i-th command's arguments. */
  command: (i: number) => readonly string[];
  /** Sent on each socket before the clock starts (AUTH, SELECT). */
  preamble?: ReadonlyArray<readonly string[]>;
}

interface LoadResult {
  seconds: number;
  /** CPU seconds this process spent while sending (building the commands excluded). */
  cpuSeconds: number;
  replies: number;
  /** Integer replies 1 (enqueued) and 0 (duplicate). */
  ones: number;
  zeros: number;
  errors: number;
  firstError?: string;
}

function encode(args: readonly string[]): string {
  let out = `*${args.length}\r\n`;
  for (const a of args) out += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return out;
}

interface Chunk {
  bytes: Buffer;
  count: number;
}

/** All commands, encoded into chunks of `pipeline` commands, before any is sent. */
function prepare(spec: LoadSpec): Chunk[] {
  const out: Chunk[] = [];
  for (let first = 0; first < spec.total; first += spec.pipeline) {
    const count = Math.min(spec.pipeline, spec.total - first);
    let text = '';
    for (let i = first; i < first + count; i++) text += encode(spec.command(i));
    out.push({ bytes: Buffer.from(text), count });
  }
  return out;
}

/** One socket's reply reader: single-line replies only (integers, simple strings, errors). */
class Client {
  private rest = '';
  private want = 0;
  private done: (() => void) | undefined;
  private failed: ((err: Error) => void) | undefined;

  constructor(
    readonly socket: Socket,
    private readonly tally: LoadResult,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => this.read(data));
    socket.on('error', (err) => this.failed?.(err));
    socket.on('close', () => this.failed?.(new Error('connection closed mid-run')));
  }

  /** Writes `bytes` and resolves once `count` replies have arrived. */
  send(bytes: Buffer | string, count: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.want = count;
      this.done = resolve;
      this.failed = reject;
      this.socket.write(bytes);
    });
  }

  private read(data: Buffer): void {
    const text = this.rest + data.toString('latin1');
    let from = 0;
    for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', from)) {
      const line = text.slice(from, nl - 1);
      from = nl + 1;
      const t = this.tally;
      t.replies++;
      if (line === ':1') t.ones++;
      else if (line === ':0') t.zeros++;
      else if (line.startsWith('-')) {
        t.errors++;
        t.firstError ??= line.slice(1);
      } else if (!line.startsWith('+')) {
        this.failed?.(new Error(`unexpected reply ${JSON.stringify(line.slice(0, 80))}: this reader takes single-line replies only`));
        this.socket.destroy();
        return;
      }
      if (--this.want === 0) {
        const done = this.done!;
        this.done = this.failed = undefined;
        done();
      }
    }
    this.rest = text.slice(from);
  }
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Sends `spec.total` commands over `spec.clients` sockets, `spec.pipeline` at a time per socket. */
async function load(spec: LoadSpec, work: readonly Chunk[] = prepare(spec)): Promise<LoadResult> {
  const tally: LoadResult = { seconds: 0, cpuSeconds: 0, replies: 0, ones: 0, zeros: 0, errors: 0 };
  const sockets = await Promise.all(Array.from({ length: spec.clients }, () => open(spec.host, spec.port)));
  const clients = sockets.map((s) => new Client(s, tally));
  try {
    if (spec.preamble?.length) {
      const hello = spec.preamble.map(encode).join('');
      const before = { ...tally };
      await Promise.all(clients.map((c) => c.send(hello, spec.preamble!.length)));
      if (tally.errors > before.errors) throw new Error(`preamble refused: ${tally.firstError}`);
      Object.assign(tally, { replies: 0, ones: 0, zeros: 0, errors: 0, firstError: undefined });
      delete tally.firstError;
    }
    let next = 0;
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    await Promise.all(
      clients.map(async (c) => {
        for (let k = next++; k < work.length; k = next++) await c.send(work[k]!.bytes, work[k]!.count);
      }),
    );
    tally.seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    tally.cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return tally;
  } finally {
    for (const s of sockets) s.destroy();
  }
}
