// The server alone with @enqueue, 50 connections x 16 in flight. Row 1, valkey-benchmark: it
// writes a different number into each __rand_int__, so it cannot put one fresh id in KEYS[1] and
// ARGV[1]: it drives the duplicate path. Row 2, the ceiling: the RESP generator below (the tool's
// shape, commands built beforehand) with unique ids, then the duplicate command as calibration.
import { connect, type Socket } from 'node:net';
import { basename } from 'node:path';
import { which } from '../../scripts/valkey.js';
import { ID_ALPHABET } from '../../shared/ids.js';
import { enqueueScript } from '../../shared/scripts.js';
import { MEASURE_MS, fillCpu, payloadOf, queuesOf, type Bench } from '../common.js';
import { cpuWindow, runTool } from '../procs.js';
import { fmtInt, type Row } from '../report.js';
import type { Server } from '../server.js';

const CLIENTS = 50;
const PIPELINE = 16;
const PAYLOAD = JSON.stringify(payloadOf(0));
const CEILING_RATE = 80_000; // commands per second: the server rows send about a window's worth
/** The duplicate command both generators send: one fixed id, stored before the run. */
const DUP_QUEUE = 'bench-dup';
const DUP_ID = `JOB${'0'.repeat(11)}`;

const evalsha = (queue: string, id: string) => ['EVALSHA', enqueueScript.sha1, '2', `emq:{${queue}}:job:${id}`, `emq:{${queue}}:pending`, id, PAYLOAD];
const storeDuplicate = (server: Server) =>
  server.call('EVAL', enqueueScript.text, '2', `emq:{${DUP_QUEUE}}:job:${DUP_ID}`, `emq:{${DUP_QUEUE}}:pending`, DUP_ID, PAYLOAD);

export async function serverRows(bench: Bench): Promise<void> {
  const total = Math.max(20_000, Math.round((CEILING_RATE * MEASURE_MS) / 1000));
  let toolRps: number | undefined;
  await bench.row('vb-dup', async (r) => void (toolRps = await toolDuplicate(bench, r, total)));
  await bench.row('ceiling', (r) => generatorUnique(bench, r, total, toolRps));
}

/** The tool's run against the server; a non-zero exit throws. */
async function tool(path: string, server: Server, args: string[]) {
  const run = await runTool(basename(path), path, ['-h', server.endpoint.host, '-p', String(server.endpoint.port), ...args], 90_000);
  if (run.code !== 0) throw new Error(`${basename(path)} exited ${run.code}: ${(run.stderr || run.stdout).trim().slice(-500)}`);
  return run;
}

/** Requests per second from `--csv` output: the last row's field after the test name (which may hold `","`), counted from the right. */
function csvRps(out: string): number {
  const lines = out.trim().split('\n');
  const header = lines.find((l) => l.startsWith('"test"'))?.split('","') ?? [];
  const fields = lines.at(-1)?.split('","') ?? [];
  const rps = Number(fields.at(1 - header.length)?.replaceAll('"', ''));
  if (header[1] !== 'rps' || !Number.isFinite(rps)) throw new Error(`no rps in benchmark output: ${out.slice(0, 300)}`);
  return rps;
}

/** Marks the server's error counts (INFO errorstats); the returned check notes as a problem any error counted since. */
async function errorsSince(server: Server): Promise<(r: Row) => Promise<void>> {
  const before = await server.errorStats();
  return async (r) => {
    const errs = Object.entries(await server.errorStats())
      .filter(([k, n]) => n > (before[k] ?? 0))
      .map(([k, n]) => `${k} x${n - (before[k] ?? 0)}`);
    if (errs.length > 0) r.problems.push(`server counted errors: ${errs.join(', ')}`);
  };
}

/** Row 1: valkey-benchmark on the duplicate path; its rps, for the calibration of row 2. */
async function toolDuplicate({ server, valkey }: Bench, r: Row, total: number): Promise<number> {
  const path = which('valkey-benchmark') ?? which('redis-benchmark');
  if (!path) throw new Error('no valkey-benchmark (or redis-benchmark) on PATH: install valkey-tools');
  await storeDuplicate(server);
  const args = ['-c', String(CLIENTS), '-P', String(PIPELINE), '--csv', ...evalsha(DUP_QUEUE, DUP_ID)];
  await tool(path, server, ['-n', String(Math.round(total / 10)), ...args]); // warm-up
  const errors = await errorsSince(server);
  const { value: run, cpu } = await cpuWindow(valkey, () => tool(path, server, ['-n', String(total), ...args]));
  r.opsPerSec = csvRps(run.stdout);
  const cores = run.cpuSeconds !== undefined ? run.cpuSeconds / cpu.seconds : undefined;
  fillCpu(r, cpu, valkey, { label: 'valkey-benchmark', cores }, cores ?? 0);
  r.notes.push(
    `${basename(path)} -c ${CLIENTS} -P ${PIPELINE} -n ${fmtInt(total)} EVALSHA <sha> 2 <row> <pending> <id> <~100-byte payload>; every reply 0 (duplicate)`,
  );
  await errors(r);
  const pending = await server.pending(DUP_QUEUE);
  if (pending !== 1) r.problems.push(`the duplicate path wrote: pending set holds ${pending}, not 1`);
  return r.opsPerSec;
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

/** Row 2: the ceiling, unique ids over 64 queues, from the RESP generator; then its calibration on the duplicate command, against `toolRps` when row 1 ran. */
async function generatorUnique(bench: Bench, r: Row, total: number, toolRps: number | undefined): Promise<void> {
  const { server, valkey } = bench;
  const queues = queuesOf('bench-ceiling');
  const warmTotal = Math.round(total / 10);
  const unique = uniqueJob(queues);
  const warm = prepare(warmTotal, (i) => unique(total + i));
  checkTally(await load(server, warm), r.problems, 'ones');
  const work = prepare(total, unique); // every command built before the clock starts
  const errors = await errorsSince(server);
  const { value: tally, cpu } = await cpuWindow(valkey, () => load(server, work));
  checkTally(tally, r.problems, 'ones');
  r.opsPerSec = tally.replies / tally.seconds;
  fillCpu(r, cpu, valkey, { label: 'bench', cores: tally.cpuSeconds / tally.seconds }); // the send window only, not the building
  r.notes.push(
    `node RESP generator -c ${CLIENTS} -P ${PIPELINE} -n ${fmtInt(total)}, one connection each, commands built beforehand, ${queues.length} queues; every reply 1 (enqueued)`,
  );
  await errors(r);
  const pending = await bench.zcards(queues);
  if (pending !== warmTotal + total) r.problems.push(`pending sets hold ${pending}, ${warmTotal + total} sent`);
  else r.notes.push(`checked: the pending sets hold all ${fmtInt(pending)} jobs sent (warm-up included), no error replies`);
  try {
    await storeDuplicate(server);
    const dup = evalsha(DUP_QUEUE, DUP_ID);
    const viaNode = await load(
      server,
      prepare(total, () => dup),
    );
    const calibration: string[] = [];
    checkTally(viaNode, calibration, 'zeros');
    const nodeRps = viaNode.replies / viaNode.seconds;
    r.notes.push(
      `calibration on the duplicate path (one fixed id): node generator ${fmtInt(nodeRps)}/s` +
        (toolRps !== undefined ? ` vs valkey-benchmark ${fmtInt(toolRps)}/s (${(nodeRps / toolRps).toFixed(2)}x)` : '') +
        (calibration.length ? `; ${calibration.join('; ')}` : ''),
    );
  } catch (err) {
    r.notes.push(`calibration failed: ${(err as Error).message}`);
  }
}

// ---- the RESP generator ---------------------------------------------------------------

/** Replies counted (`ones`: 1, enqueued; `zeros`: 0, duplicate); CPU seconds spent sending (not building). */
type Tally = { seconds: number; cpuSeconds: number; replies: number; ones: number; zeros: number; errors: number; firstError?: string | undefined };

function encode(args: readonly string[]): string {
  let out = `*${args.length}\r\n`;
  for (const a of args) out += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return out;
}

/** The first `total` commands, encoded into chunks of PIPELINE commands, before any is sent. */
function prepare(total: number, command: (i: number) => readonly string[]): Array<{ bytes: Buffer; count: number }> {
  const out: Array<{ bytes: Buffer; count: number }> = [];
  for (let first = 0; first < total; first += PIPELINE) {
    const count = Math.min(PIPELINE, total - first);
    let text = '';
    for (let i = first; i < first + count; i++) text += encode(command(i));
    out.push({ bytes: Buffer.from(text), count });
  }
  return out;
}

/** One socket: writes a chunk and resolves once as many replies came; single-line replies only (integers, simple strings, errors). */
function client(socket: Socket, t: Tally) {
  let rest = '';
  let want = 0;
  let done: (() => void) | undefined;
  let failed: ((err: Error) => void) | undefined;
  socket.setNoDelay(true);
  socket.on('error', (err) => failed?.(err));
  socket.on('close', () => failed?.(new Error('connection closed mid-run')));
  socket.on('data', (data: Buffer) => {
    const text = rest + data.toString('latin1');
    let from = 0;
    for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', from)) {
      const line = text.slice(from, nl - 1);
      from = nl + 1;
      t.replies++;
      if (line === ':1') t.ones++;
      else if (line === ':0') t.zeros++;
      else if (line.startsWith('-')) {
        t.errors++;
        t.firstError ??= line.slice(1);
      } else if (!line.startsWith('+')) {
        failed?.(new Error(`unexpected reply ${JSON.stringify(line.slice(0, 80))}: this reader takes single-line replies only`));
        return void socket.destroy();
      }
      if (--want === 0) {
        const resolve = done!;
        done = failed = undefined;
        resolve();
      }
    }
    rest = text.slice(from);
  });
  return (bytes: Buffer | string, count: number) =>
    new Promise<void>((resolve, reject) => {
      [want, done, failed] = [count, resolve, reject];
      socket.write(bytes);
    });
}

/** Sends `work` over CLIENTS sockets, one chunk at a time per socket. */
async function load(server: Server, work: ReadonlyArray<{ bytes: Buffer; count: number }>): Promise<Tally> {
  const e = server.endpoint;
  const t: Tally = { seconds: 0, cpuSeconds: 0, replies: 0, ones: 0, zeros: 0, errors: 0 };
  const open = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: e.host, port: e.port });
      socket.once('connect', () => (socket.off('error', reject), resolve(socket)));
      socket.once('error', reject);
    });
  const sockets = await Promise.all(Array.from({ length: CLIENTS }, open));
  const clients = sockets.map((s) => client(s, t));
  try {
    let next = 0;
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    await Promise.all(
      clients.map(async (send) => {
        for (let k = next++; k < work.length; k = next++) await send(work[k]!.bytes, work[k]!.count);
      }),
    );
    t.seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    t.cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return t;
  } finally {
    for (const s of sockets) s.destroy();
  }
}

/** Notes as problems the tally's error replies, and replies other than `want`. */
function checkTally(t: Tally, problems: string[], want: 'ones' | 'zeros'): void {
  if (t.errors > 0) problems.push(`${t.errors} error replies, first: ${t.firstError}`);
  if (want === 'ones' && t.zeros > 0) problems.push(`${t.zeros} duplicates where every id was new`);
  if (want === 'zeros' && t.ones > 0) problems.push(`${t.ones} enqueued where every id existed`);
}
