// The glide connection: @valkey/valkey-glide over TCP. Node only; the core never imports it.
// Commands issued in the same turn of the event loop are coalesced into one glide batch,
// because each glide call costs far more Node CPU than the bytes it sends.
import {
  Batch,
  CircuitBreakerError,
  ClusterBatch,
  ConfigurationError,
  ConnectionError as GlideConnectionError,
  Decoder,
  ProtocolVersion,
  GlideClient,
  GlideClusterClient,
  Logger,
  RequestError,
  TimeoutError,
  type GlideString,
} from '@valkey/valkey-glide';
import type { Arg, Connection, Outcome, Reply, ScriptCommand } from '../connection.js';
import { ConnectionError } from '../errors.js';
import { DEFAULT_WIRE_VERSION, Fence, WIRE_VERSION_KEY, isWireVersion, type FenceState } from '../fence.js';
import { parseValkeyUrl, redactUrl } from './valkey-url.js';

export interface GlideOptions {
  /** redis://, rediss://, valkey:// or valkeys:// with optional user, password, db and ?cluster=true. */
  url: string;
  /** Talk to a Valkey Cluster (also set by `?cluster=true` in the URL). */
  cluster?: boolean;
  /** How long one command or batch may take, in ms. */
  requestTimeoutMs?: number;
  /** How long a TCP/TLS connect may take, in ms. */
  connectTimeoutMs?: number;
  /**
   * Largest number of separate calls coalesced into one glide batch. Smaller batches keep
   * several in flight, so encoding the next overlaps the server running the last
   * (measured with npm run bench: 32 beat both 8 and 1,000, and 128 for single enqueues).
   * One pipeline (enqueueMany) goes whole up to PIPELINE_PART commands even when longer.
   */
  maxBatch?: number;
  /**
   * After each script call, WAIT until this many replicas have the write (also `?wait=N`).
   * Replication is asynchronous: without it, a write a primary acknowledged just before it
   * died can be missing on the replica that takes over.
   */
  waitReplicas?: number;
  /** How long one WAIT may block, in ms (also `?wait_timeout_ms=T`); default 1000. */
  waitTimeoutMs?: number;
  /**
   * The EchoMQ wire version this process speaks (EMQ_WIRE_VERSION), default echomq:3.0.0.
   * run() and pipeline() refuse with WireMismatchError while `{emq}:version` holds another
   * value (see shared/fence.ts); the key is read, never written.
   */
  wireVersion?: string;
  /**
   * Read the fence at connect and every 500 ms (default true). false for a connection that
   * never writes jobs through run()/pipeline() (the gateway's admin connection): no periodic
   * GET; run() and pipeline() would still read the key before they write.
   */
  fence?: boolean;
  /**
   * Speak RESP2 (default RESP3). The gateway does: its clients expect RESP2's replies, and a
   * server speaking RESP3 sends doubles, maps and sets that glide would hand on typed.
   */
  resp2?: boolean;
  /** Told of each change of the fence's state (the metrics' fence gauge). */
  onFence?: ((state: FenceState) => void) | undefined;
  /** Told of each transport failure (the metrics' availability: a reconnect may follow). */
  onLost?: (() => void) | undefined;
  /** Told of each fence read Valkey answered (every 500 ms while fenced): it is reachable. */
  onReached?: (() => void) | undefined;
}

type Client = GlideClient | GlideClusterClient;

/** How one reply is turned into what its caller gets: glide's value, or the RequestError of a server's error reply. */
type Shape<T> = (reply: unknown) => T;

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

function argsOf(command: ScriptCommand): GlideString[] {
  const head = command.op === 'evalsha' ? ['EVALSHA', command.sha1] : ['EVAL', command.script];
  return [...head, String(command.keys.length), ...command.keys, ...command.args.map(toGlide)];
}

// Client-side failures glide reports as a plain RequestError, not a subclass (seen when a
// cluster primary is killed: "BrokenPipe: Cluster: Failed to receive command response…").
const CLIENT_SIDE = /^(?:BrokenPipe|IoError|IO error|FatalSendError|FatalReceiveError|ClusterConnectionNotFound|ConnectionNotFoundForRoute|Disconnected)\b/;

/** A server's error reply, as opposed to a transport failure (glide uses subclasses for most of those). */
export function isReplyError(err: unknown): err is RequestError {
  return (
    err instanceof RequestError &&
    !(err instanceof TimeoutError) &&
    !(err instanceof GlideConnectionError) &&
    !(err instanceof CircuitBreakerError) &&
    !(err instanceof ConfigurationError) &&
    !CLIENT_SIDE.test(err.message)
  );
}

// glide rewords error replies. Replies with a known code arrive as "An error was signalled
// by the server: - <Kind>: <rest>" (NoScriptError for NOSCRIPT, ResponseError for ERR...);
// any other reply as "<first word>: <rest>" ("-EMQKIND job..." → "EMQKIND: job..."). Callers
// (NOSCRIPT and TRYAGAIN are recognized by their first word), and the gateway's clients,
// expect the server's own words, so the rewording is undone.
// (One case cannot be: a one-word reply such as "-OOPS" arrives as "ResponseError: OOPS",
// just like "-ERR OOPS".)
const GLIDE_KINDS: Record<string, string> = {
  ResponseError: 'ERR',
  NoScriptError: 'NOSCRIPT',
  ExecAbortError: 'EXECABORT',
  BusyLoadingError: 'LOADING',
  TryAgain: 'TRYAGAIN',
  ClusterDown: 'CLUSTERDOWN',
  CrossSlot: 'CROSSSLOT',
  MasterDown: 'MASTERDOWN',
  ReadOnly: 'READONLY',
  NotBusy: 'NOTBUSY',
  Moved: 'MOVED',
  Ask: 'ASK',
};

/** The error reply as the server worded it. */
export function serverWording(message: string): string {
  const known = /^An error was signalled by the server: - ([A-Za-z]+): ([^]*)$/.exec(message);
  if (known) return `${GLIDE_KINDS[known[1]!] ?? known[1]} ${known[2]}`;
  const other = /^(\S*): ([^]*)$/.exec(message);
  return other ? `${other[1]} ${other[2]}` : message;
}

/**
 * A script's (or GET's) reply as an outcome. Script replies are RESP2's shapes already
 * (Lua tables arrive as arrays, true as 1, false as null), so the value is kept as it is.
 */
function outcomeOf(value: unknown): Outcome {
  if (isReplyError(value)) return { ok: false, error: serverWording(value.message) };
  return { ok: true, value: value as Reply };
}

/** A write fewer replicas than asked for confirmed in time: retry it with the same id. */
export class NotReplicatedError extends ConnectionError {}

export interface WaitFor {
  replicas: number;
  timeoutMs: number;
}

/**
 * The glide client under a connection, as the gateway (Node only) builds its own commands
 * on it (functions/gateway/glide-commands.ts): the same coalesced batches and WAITs as the
 * connection's scripts, none of the seam's fence.
 */
export class GlideWire {
  private queue: Waiting[] = [];
  private scheduled = false;
  private closed = false;
  /** Writes answered in this turn of the event loop, by slot tag, waiting for one WAIT each. */
  private waitGroups = new Map<string, { key: string; waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> }>();
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

  /** The outcome once enough replicas have the write to `key` (when asked to wait); a shortfall is a ConnectionError. */
  async replicated(sent: Promise<Outcome>, key: string | undefined): Promise<Outcome> {
    const outcome = await sent;
    if (!this.waitFor || !outcome.ok || key === undefined) return outcome;
    // The WAIT is sent after this reply arrived, so it follows the write on the node's
    // connection and covers it; the writes answered in the same turn share it. (Reusing a
    // WAIT sent before the reply arrived would not cover the write.)
    await new Promise<void>((resolve, reject) => {
      const tag = slotTag(key);
      let group = this.waitGroups.get(tag);
      if (!group) this.waitGroups.set(tag, (group = { key, waiters: [] }));
      group.waiters.push({ resolve, reject });
      if (!this.waitScheduled) {
        this.waitScheduled = true;
        setImmediate(() => this.sendWaits());
      }
    });
    return outcome;
  }

  private sendWaits(): void {
    this.waitScheduled = false;
    const groups = this.waitGroups;
    this.waitGroups = new Map();
    for (const { key, waiters } of groups.values()) {
      this.replicaWait(key).then(
        () => waiters.forEach((w) => w.resolve()),
        (err: Error) => waiters.forEach((w) => w.reject(err)),
      );
    }
  }

  // WAIT counts the replicas that have every write this connection made so far; glide keeps
  // one connection per node, so it covers the writes just answered on the key's node.
  private async replicaWait(key: string): Promise<void> {
    const { replicas, timeoutMs } = this.waitFor!;
    let got: number;
    try {
      got = Number(await this.routed(['WAIT', String(replicas), String(timeoutMs)], key));
    } catch (err) {
      throw this.lost(err);
    }
    if (got < replicas) {
      throw new NotReplicatedError(
        `valkey: the write reached ${got} of ${replicas} replicas within ${timeoutMs} ms; it is on the primary but could be lost in a failover: send it again with the same id`,
      );
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

/** The Connection seam over glide: scripts only, fenced, WAITed for when asked. */
export class GlideConnection implements Connection {
  /** The `{emq}:version` fence: run() and pipeline() (the project's writes and reads) wait for it. */
  readonly fence: Fence;
  /** Node only, beyond the seam: the glide client and batches under this connection (the gateway's commands). */
  readonly wire: GlideWire;

  constructor(
    client: Client,
    cluster: boolean,
    maxBatch: number,
    waitFor?: WaitFor,
    wireVersion = DEFAULT_WIRE_VERSION,
    private readonly events: Pick<GlideOptions, 'onFence' | 'onLost' | 'onReached'> = {},
  ) {
    this.fence = new Fence({ expected: wireVersion, read: () => this.readVersion(), onState: events.onFence });
    this.wire = new GlideWire(client, cluster, maxBatch, waitFor, () => {
      this.fence.invalidate();
      events.onLost?.();
    });
  }

  /** The underlying glide client, for commands beyond the seam (admin, tests). */
  get client(): Client {
    return this.wire.client;
  }

  run(command: ScriptCommand): Promise<Outcome> {
    const held = this.fence.admit();
    return held ? held.then(() => this.script(command)) : this.script(command);
  }

  pipeline(commands: readonly ScriptCommand[]): Promise<Outcome[]> {
    // a WAIT follows each write's own reply: that goes call by call
    if (this.wire.waitFor || commands.length === 0) return Promise.all(commands.map((c) => this.run(c)));
    const held = this.fence.admit();
    const list = commands.map(argsOf);
    return held ? held.then(() => this.wire.sendAll(list, outcomeOf)) : this.wire.sendAll(list, outcomeOf);
  }

  async close(): Promise<void> {
    this.fence.stop();
    this.wire.close();
  }

  private script(command: ScriptCommand): Promise<Outcome> {
    const sent = this.wire.send(argsOf(command), outcomeOf);
    return this.wire.waitFor ? this.wire.replicated(sent, command.keys[0]) : sent;
  }

  /** GET {emq}:version from the primary that owns its slot (in a cluster, routed by the key). */
  private async readVersion(): Promise<Outcome> {
    if (this.wire.isClosed) throw new ConnectionError('connection is closed');
    try {
      const outcome = outcomeOf(await this.wire.routed(['GET', WIRE_VERSION_KEY], WIRE_VERSION_KEY));
      this.events.onReached?.();
      return outcome;
    } catch (err) {
      if (isReplyError(err)) {
        this.events.onReached?.();
        return outcomeOf(err);
      }
      throw this.wire.lost(err);
    }
  }
}

let loggerSet = false;

/** Connects to the server (or cluster) a Valkey URL names. Fails with ConnectionError within the connect timeout. */
export async function connectGlide(options: GlideOptions | string): Promise<GlideConnection> {
  const {
    url,
    cluster: clusterOpt,
    requestTimeoutMs = 5_000,
    connectTimeoutMs = 2_000,
    maxBatch = 32,
    wireVersion,
    fence = true,
    resp2 = false,
    onFence,
    onLost,
    onReached,
    ...rest
  } = typeof options === 'string' ? { url: options } : options;
  const endpoint = parseValkeyUrl(url);
  const cluster = clusterOpt ?? endpoint.cluster;
  const waitFor = { replicas: rest.waitReplicas ?? endpoint.waitReplicas, timeoutMs: rest.waitTimeoutMs ?? endpoint.waitTimeoutMs };
  if (waitFor.replicas > 0 && waitFor.timeoutMs >= requestTimeoutMs) {
    throw new TypeError(`wait_timeout_ms (${waitFor.timeoutMs}) must be shorter than the request timeout (${requestTimeoutMs} ms)`);
  }
  if (wireVersion !== undefined && !isWireVersion(wireVersion)) {
    throw new TypeError('wireVersion must look like echomq:MAJOR.MINOR.PATCH');
  }
  if (!loggerSet) {
    // glide logs every error reply (NOSCRIPT included) at WARN by default; errors reach callers as values.
    Logger.init('off');
    loggerSet = true;
  }
  const common = {
    addresses: endpoint.seeds,
    useTLS: endpoint.tls,
    requestTimeout: requestTimeoutMs,
    defaultDecoder: Decoder.Bytes,
    clientName: 'emq',
    protocol: resp2 ? ProtocolVersion.RESP2 : ProtocolVersion.RESP3,
    advancedConfiguration: { connectionTimeout: connectTimeoutMs },
    ...(endpoint.password !== undefined ? { credentials: { password: endpoint.password, ...(endpoint.username ? { username: endpoint.username } : {}) } } : {}),
  };
  let connection: GlideConnection;
  try {
    const client = cluster
      ? // topology checked every few seconds, so a failover is noticed quickly (glide's default is 60 s)
        await GlideClusterClient.createClient({ ...common, periodicChecks: { duration_in_sec: 2 } })
      : await GlideClient.createClient({ ...common, databaseId: endpoint.db });
    connection = new GlideConnection(client, cluster, maxBatch, waitFor.replicas > 0 ? waitFor : undefined, wireVersion, { onFence, onLost, onReached });
  } catch (err) {
    let why = (err as Error).message.replace(/\s+/g, ' ').trim();
    if (endpoint.password) why = why.replaceAll(endpoint.password, '***');
    throw new ConnectionError(`cannot connect to ${redactUrl(url)}: ${why}`, { cause: err });
  }
  if (!fence) return connection;
  // the fence's first read; a mismatch (or a failed read) is kept: the writes refuse or wait
  await connection.fence.check().catch(() => {});
  connection.fence.start();
  return connection;
}
