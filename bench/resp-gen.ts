// The node RESP generator: valkey-benchmark's shape (-c clients, -P pipeline, -n total), for
// commands valkey-benchmark cannot express: every command is built ahead of time, so a key and
// an argument can carry the same unique id. It counts replies and keeps the first error.
import { connect, type Socket } from 'node:net';
import type { Server } from './server.js';

export const CLIENTS = 50;
export const PIPELINE = 16;

export interface Tally {
  seconds: number;
  /** CPU seconds this process spent while sending (building the commands excluded). */
  cpuSeconds: number;
  replies: number;
  /** Integer replies 1 (enqueued) and 0 (duplicate). */
  ones: number;
  zeros: number;
  errors: number;
  firstError?: string | undefined;
}

export function encode(args: readonly string[]): string {
  let out = `*${args.length}\r\n`;
  for (const a of args) out += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return out;
}

/** The first `total` commands, encoded into chunks of PIPELINE commands, before any is sent. */
export function prepare(total: number, command: (i: number) => readonly string[]): Array<{ bytes: Buffer; count: number }> {
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

/** Sends `work` over CLIENTS sockets, one chunk at a time per socket, after AUTH and SELECT when the URL asks for them. */
export async function load(server: Server, work: ReadonlyArray<{ bytes: Buffer; count: number }>): Promise<Tally> {
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
    const preamble: string[][] = [];
    if (e.password !== undefined) preamble.push(e.username ? ['AUTH', e.username, e.password] : ['AUTH', e.password]);
    if (e.db !== 0) preamble.push(['SELECT', String(e.db)]);
    if (preamble.length) {
      await Promise.all(clients.map((send) => send(preamble.map(encode).join(''), preamble.length)));
      if (t.errors > 0) throw new Error(`preamble refused: ${t.firstError}`);
      Object.assign(t, { replies: 0, ones: 0, zeros: 0, errors: 0, firstError: undefined });
    }
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
export function checkTally(t: Tally, problems: string[], want: 'ones' | 'zeros'): void {
  if (t.errors > 0) problems.push(`${t.errors} error replies, first: ${t.firstError}`);
  if (want === 'ones' && t.zeros > 0) problems.push(`${t.zeros} duplicates where every id was new`);
  if (want === 'zeros' && t.ones > 0) problems.push(`${t.ones} enqueued where every id existed`);
}
