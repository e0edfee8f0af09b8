// A raw-RESP load generator in valkey-benchmark's shape (-c clients, -P pipeline, -n total),
// for commands valkey-benchmark cannot express: every command is built ahead of time, so a
// key and an argument can carry the same unique id. It counts replies and keeps the first error.
import { connect, type Socket } from 'node:net';

export interface LoadSpec {
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

export interface LoadResult {
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

export interface Chunk {
  bytes: Buffer;
  count: number;
}

/** All commands, encoded into chunks of `pipeline` commands, before any is sent. */
export function prepare(spec: LoadSpec): Chunk[] {
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
export async function load(spec: LoadSpec, work: readonly Chunk[] = prepare(spec)): Promise<LoadResult> {
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
