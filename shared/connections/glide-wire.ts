// GlideWire: the glide client under a connection, its commands coalesced per turn of the
// event loop into one glide batch (each glide call costs far more Node CPU than the bytes it
// sends), and the WAITs after writes. The gateway builds its own commands on it
// (functions/gateway/glide-commands.ts); GlideConnection (glide.ts), the seam, its scripts.
import { Batch, ClusterBatch, Decoder, type GlideClient, type GlideClusterClient, type GlideString } from '@valkey/valkey-glide';
import type { Arg, Outcome, WaitFor } from '../connection.js';
import { ConnectionError, NotReplicatedError } from '../errors.js';
import { isReplyError } from './glide-replies.js';

export type Client = GlideClient | GlideClusterClient;

/** How one reply is turned into what its caller gets: glide's value, or the RequestError of a server's error reply. */
export type Shape<T> = (reply: unknown) => T;

/** A caller waiting: for one command's reply (`args`), or for a pipeline's, all together (`list`: resolved with a reply each). */
interface Waiting {
  args?: GlideString[];
  list?: GlideString[][];
  shape: Shape<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export function toGlide(arg: Arg): GlideString {
  return typeof arg === 'string' ? arg : Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength);
}

/**
 * A pipeline's commands as glide takes them, text as its UTF-8 bytes (what glide makes of
 * text itself): the text a command repeats from the one before at the same place (a
 * pipeline's command name, SHA-1, key count, queue-wide keys) is encoded once, not per call.
 */
function glideArgsOf(list: readonly (readonly Arg[])[]): GlideString[][] {
  const out = new Array<GlideString[]>(list.length);
  let before: readonly Arg[] = [];
  let encoded: GlideString[] = [];
  for (let c = 0; c < list.length; c++) {
    const args = list[c]!;
    const bytes = new Array<GlideString>(args.length);
    for (let j = 0; j < args.length; j++) {
      const arg = args[j]!;
      bytes[j] = typeof arg !== 'string' ? toGlide(arg) : arg === before[j] ? encoded[j]! : Buffer.from(arg);
    }
    out[c] = bytes;
    before = args;
    encoded = bytes;
  }
  return out;
}

/**
 * How long a pipeline goes whole, as one glide batch: each glide call costs this process
 * roughly 100 µs of CPU (JS and glide's threads) whatever it carries, so an enqueueMany x100
 * cut in maxBatch parts paid that 4 times (npm run bench, enqueueMany x100: 128 beat 32,
 * 256 and 1,000 as maxBatch).
 */
const PIPELINE_PART = 128;

/** A key's hash tag (what picks its slot): the writes of one queue share one WAIT. */
function slotTag(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

export { NotReplicatedError };

/** The shortfall of a WAIT, as the error its caller gets. */
export function notReplicated(got: number, { replicas, timeoutMs }: WaitFor): NotReplicatedError {
  return new NotReplicatedError(
    `valkey: the write reached ${got} of ${replicas} replicas within ${timeoutMs} ms; it is on the primary but could be lost in a failover: send it again with the same id`,
    got,
    replicas,
  );
}

export type { WaitFor };

/**
 * The glide client under a connection, as the gateway (Node only) builds its own commands
 * on it (functions/gateway/glide-commands.ts): the same coalesced batches and WAITs as the
 * connection's scripts, none of the seam's fence.
 */
export class GlideWire {
  private queue: Waiting[] = [];
  private scheduled = false;
  private closed = false;
  /** Writes answered in this turn of the event loop, by slot tag and wait, waiting for one WAIT each. */
  private waitGroups = new Map<string, { key: string; waitFor: WaitFor; waiters: Array<{ resolve: (got: number) => void; reject: (e: Error) => void }> }>();
  private waitScheduled = false;

  constructor(
    readonly client: Client,
    readonly cluster: boolean,
    private readonly maxBatch: number,
    /** Replicas to WAIT for after each write (?wait=N), or undefined. */
    readonly waitFor: WaitFor | undefined,
    /** Called with each transport failure (the connection's fence reads the key again). */
    private readonly onLost: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** One command, coalesced with the others of this turn into one glide batch; its reply as `shape` makes it. */
  send<T>(args: readonly Arg[], shape: Shape<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ConnectionError('connection is closed'));
    return new Promise<T>((resolve, reject) => {
      this.wait({ args: args.map(toGlide), shape, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * Several commands answered together, a reply each as `shape` makes it, in order: one
   * promise for all (a pipeline's commands are awaited together anyway), kept whole in one
   * glide batch; a list longer than PIPELINE_PART (or maxBatch, if larger) goes in parts.
   */
  sendAll<T>(list: readonly (readonly Arg[])[], shape: Shape<T>): Promise<T[]> {
    if (this.closed) return Promise.reject(new ConnectionError('connection is closed'));
    const part = Math.max(this.maxBatch, PIPELINE_PART);
    if (list.length > part) {
      const parts: Promise<T[]>[] = [];
      for (let i = 0; i < list.length; i += part) parts.push(this.sendAll(list.slice(i, i + part), shape));
      return Promise.all(parts).then((replies) => replies.flat());
    }
    return new Promise<T[]>((resolve, reject) => {
      this.wait({ list: glideArgsOf(list), shape, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private wait(waiting: Waiting): void {
    this.queue.push(waiting);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** One command to the primary that owns `key`'s slot (any node's connection when standalone), not batched. */
  routed(args: string[], key: string): Promise<unknown> {
    return this.cluster
      ? (this.client as GlideClusterClient).customCommand(args, { route: { type: 'primarySlotKey', key } })
      : (this.client as GlideClient).customCommand(args);
  }

  /** A transport failure as the ConnectionError callers get; the connection may come back as a new one. */
  lost(err: unknown): ConnectionError {
    this.onLost();
    return new ConnectionError(`valkey: ${(err as Error).message}`, { cause: err });
  }

  /**
   * The outcome once enough replicas have the write to `key` (this connection's ?wait=N, or
   * `waitFor`: one request's); a shortfall is a NotReplicatedError (a ConnectionError).
   */
  async replicated(sent: Promise<Outcome>, key: string | undefined, waitFor = this.waitFor): Promise<Outcome> {
    const outcome = await sent;
    if (!waitFor || !outcome.ok || key === undefined) return outcome;
    const got = await this.replicas(key, waitFor);
    if (got < waitFor.replicas) throw notReplicated(got, waitFor);
    return outcome;
  }

  /**
   * WAIT on the primary of `key`'s slot, once the writes to it answered: how many replicas have
   * every write this connection made there. Ask only after the write's reply arrived, so the
   * WAIT follows it on the node's connection and covers it; the asks of one turn for one slot
   * and one wait share a WAIT. (Reusing a WAIT sent before the reply arrived would not cover it.)
   */
  replicas(key: string, waitFor: WaitFor): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const tag = `${waitFor.replicas} ${waitFor.timeoutMs} ${slotTag(key)}`;
      let group = this.waitGroups.get(tag);
      if (!group) this.waitGroups.set(tag, (group = { key, waitFor, waiters: [] }));
      group.waiters.push({ resolve, reject });
      if (!this.waitScheduled) {
        this.waitScheduled = true;
        setImmediate(() => this.sendWaits());
      }
    });
  }

  private sendWaits(): void {
    this.waitScheduled = false;
    const groups = this.waitGroups;
    this.waitGroups = new Map();
    for (const { key, waitFor, waiters } of groups.values()) {
      this.replicaWait(key, waitFor).then(
        (got) => waiters.forEach((w) => w.resolve(got)),
        (err: Error) => waiters.forEach((w) => w.reject(err)),
      );
    }
  }

  // WAIT counts the replicas that have every write this connection made so far; glide keeps
  // one connection per node, so it covers the writes just answered on the key's node.
  private async replicaWait(key: string, { replicas, timeoutMs }: WaitFor): Promise<number> {
    try {
      return Number(await this.routed(['WAIT', String(replicas), String(timeoutMs)], key));
    } catch (err) {
      throw this.lost(err);
    }
  }

  /** Runs a glide batch (atomic: MULTI/EXEC) with byte replies. */
  exec(batch: Batch | ClusterBatch) {
    return this.cluster
      ? (this.client as GlideClusterClient).exec(batch as ClusterBatch, false, { decoder: Decoder.Bytes })
      : (this.client as GlideClient).exec(batch as Batch, false, { decoder: Decoder.Bytes });
  }

  close(): void {
    this.closed = true;
    this.client.close();
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.queue;
    this.queue = [];
    // whole callers in each glide batch, up to maxBatch commands: a pipeline cut in two would wait for both batches
    let group: Waiting[] = [];
    let size = 0;
    for (const w of all) {
      const n = w.list ? w.list.length : 1;
      if (size > 0 && size + n > this.maxBatch) {
        void this.sendGroup(group, size);
        group = [];
        size = 0;
      }
      group.push(w);
      size += n;
    }
    if (size > 0) void this.sendGroup(group, size);
  }

  /** Sends `group`'s `size` commands: one alone as a plain command, more as one glide batch. */
  private async sendGroup(group: Waiting[], size: number): Promise<void> {
    try {
      if (size === 1) {
        const only = group[0]!;
        const settle = (reply: unknown) => only.resolve(only.list ? [only.shape(reply)] : only.shape(reply));
        try {
          settle(await this.client.customCommand(only.list ? only.list[0]! : only.args!, { decoder: Decoder.Bytes }));
        } catch (err) {
          if (!isReplyError(err)) throw err;
          settle(err);
        }
        return;
      }
      const batch = this.cluster ? new ClusterBatch(false) : new Batch(false);
      for (const w of group) {
        if (w.list) for (const args of w.list) batch.customCommand(args);
        else batch.customCommand(w.args!);
      }
      const replies = await this.exec(batch);
      if (!replies || replies.length !== size) {
        throw new Error(`batch of ${size} answered ${replies?.length ?? 'nothing'}`);
      }
      // a batch carries transport failures in place, like replies: those reject
      const failed = (reply: unknown) => reply instanceof Error && !isReplyError(reply);
      let at = 0;
      for (const w of group) {
        if (!w.list) {
          const reply = replies[at++];
          if (failed(reply)) w.reject(this.lost(reply));
          else w.resolve(w.shape(reply));
          continue;
        }
        const shaped = new Array<unknown>(w.list.length);
        let error: Error | undefined;
        for (let k = 0; k < shaped.length; k++) {
          const reply = replies[at++];
          if (failed(reply)) error ??= this.lost(reply);
          else shaped[k] = w.shape(reply);
        }
        if (error) w.reject(error);
        else w.resolve(shaped);
      }
    } catch (err) {
      const error = this.lost(err);
      for (const w of group) w.reject(error);
    }
  }
}
