// What the server alone can do with @enqueue (EVALSHA of lua/enqueue.lua), the client out of
// the way: 50 connections, 16 commands in flight on each. Row 1, valkey-benchmark: it writes a
// different random number into each __rand_int__ of a command (probed every run), so it cannot
// put one fresh id in KEYS[1] and ARGV[1]; it drives the duplicate path (one existing id, reply
// 0, nothing written), shown because it is what the standard tool measures. Row 2, the ceiling
// every row is divided by: resp-gen.ts sending unique ids over the glide rows' queues, then
// valkey-benchmark's duplicate command, so close figures show the generator is not the limit.
import { basename } from 'node:path';
import { which } from '../../scripts/valkey.js';
import { ID_ALPHABET } from '../../shared/ids.js';
import { enqueueScript } from '../../shared/scripts.js';
import { MEASURE_MS, fillCpu, payloadOf, queuesOf, type Bench } from '../common.js';
import { cpuWindow, runTool } from '../procs.js';
import { fmtInt, type Row } from '../report.js';
import type { Server } from '../server.js';
import { CLIENTS, PIPELINE, checkTally, load, prepare } from '../resp-gen.js';

const PAYLOAD = JSON.stringify(payloadOf(0));
/** Commands per second the server rows are sized for: about one measured window's worth. */
const CEILING_RATE = 80_000;
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

/** The tool's run, its connection arguments first; a non-zero exit throws. */
async function tool(path: string, server: Server, args: string[]) {
  const e = server.endpoint;
  const conn = ['-h', e.host, '-p', String(e.port)];
  if (e.password !== undefined) conn.push(...(e.username ? ['--user', e.username] : []), '-a', e.password);
  if (e.db !== 0) conn.push('--dbnum', String(e.db));
  const run = await runTool(basename(path), path, [...conn, ...args], 90_000);
  if (run.code !== 0) throw new Error(`${basename(path)} exited ${run.code}: ${(run.stderr || run.stdout).trim().slice(-500)}`);
  return run;
}

/** Requests per second from `--csv` output: the "rps" column of the last row, counted from the right (the test name may hold `","`). */
function csvRps(out: string): number {
  const rows = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('"'));
  const header = rows[0]?.split('","') ?? [];
  const fromRight = header.length - header.findIndex((c) => c.replaceAll('"', '') === 'rps');
  const rps = rows.length >= 2 && fromRight <= header.length ? Number(rows.at(-1)!.split('","').at(-fromRight)?.replaceAll('"', '')) : NaN;
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
  const consistent = await randIntIsConsistent(path, server);
  r.notes.push(
    `probe: ${basename(path)} writes ${consistent ? 'one number into every' : 'a different random number into each'} __rand_int__ of a command` +
      (consistent ? '' : ', so it cannot send KEYS[1] = emq:{q}:job:<ARGV[1]> with a fresh id: it drives the duplicate path only'),
  );
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

/** Row 2: the ceiling, unique ids over 64 queues, from the node RESP generator; then its calibration on the duplicate command, against `toolRps` when row 1 ran. */
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
    const dups = prepare(total, () => dup);
    const viaNode = await load(server, dups);
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
