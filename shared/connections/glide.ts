// The glide connection: the Connection seam over @valkey/valkey-glide (TCP), its scripts
// fenced and WAITed for when asked, on a GlideWire (glide-wire.ts: coalesced batches). Node
// only; the core never imports it.
import { Decoder, ProtocolVersion, GlideClient, GlideClusterClient, Logger, type GlideString } from '@valkey/valkey-glide';
import type { Connection, Outcome, RequestScope, ScanStep, ScriptCommand, WaitFor } from '../connection.js';
import type { Observer } from '../observe.js';
import { ConnectionError } from '../errors.js';
import { DEFAULT_WIRE_VERSION, Fence, WIRE_VERSION_KEY, isWireVersion, type FenceState } from '../fence.js';
import { scanStepOf } from '../queue-list.js';
import { isReplyError, scriptOutcome } from './glide-replies.js';
import { scanOutcome } from './glide-scan.js';
import { GlideWire, toGlide, type Client } from './glide-wire.js';
import { parseValkeyUrl, redactUrl } from './valkey-url.js';

// beyond the seam, for the gateway and for tests: the wire, its WAIT failure, glide's wording undone
export { isReplyError, serverWording } from './glide-replies.js';
export { GlideWire, NotReplicatedError, toGlide } from './glide-wire.js';
export type { WaitFor } from '../connection.js';

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

function argsOf(command: ScriptCommand): GlideString[] {
  const head = command.op === 'evalsha' ? ['EVALSHA', command.sha1] : ['EVAL', command.script];
  return [...head, String(command.keys.length), ...command.keys, ...command.args.map(toGlide)];
}

/** The Connection seam over glide: scripts only, fenced, WAITed for when asked. */
export class GlideConnection implements Connection {
  /** The `{emq}:version` fence: run() and pipeline() (the project's writes and reads) wait for it. */
  readonly fence: Fence;
  /** Node only, beyond the seam: the glide client and batches under this connection (the gateway's commands). */
  readonly wire: GlideWire;
  /** Told of one request's script calls (a withRequest view's); none on the connection itself. */
  readonly observer: Observer | undefined = undefined;
  /** One request's WAIT after each write (a withRequest view's), else the connection's ?wait=N. */
  private readonly requestWait: WaitFor | undefined = undefined;

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

  /**
   * This connection for one request: its calls told to `observer`, and with `wait`, each write
   * WAITed for on the primary that took it (a shortfall: NotReplicatedError). Closing the view
   * closes nothing.
   */
  withRequest({ observer, wait }: RequestScope): GlideConnection {
    const view = Object.create(this) as GlideConnection;
    const mutable = view as unknown as { observer: Observer | undefined; requestWait: WaitFor | undefined; close: () => Promise<void> };
    mutable.observer = observer;
    mutable.requestWait = wait;
    mutable.close = async () => {};
    return view;
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
    if (this.requestWait || this.wire.waitFor || commands.length === 0) return Promise.all(commands.map((c) => this.run(c)));
    const held = this.fence.admit();
    const list = commands.map(argsOf);
    return held ? held.then(() => this.wire.sendAll(list, scriptOutcome)) : this.wire.sendAll(list, scriptOutcome);
  }

  /** One step of a SCAN walk (every primary of a cluster in turn: glide-scan.ts), after the fence. */
  async scan(cursor: string, match: string, count: number): Promise<ScanStep> {
    if (this.wire.isClosed) throw new ConnectionError('connection is closed');
    await this.fence.admit();
    return scanStepOf(await scanOutcome(this.wire, cursor, match, count));
  }

  async close(): Promise<void> {
    this.fence.stop();
    this.wire.close();
  }

  private script(command: ScriptCommand): Promise<Outcome> {
    const sent = this.wire.send(argsOf(command), scriptOutcome);
    const waitFor = this.requestWait ?? this.wire.waitFor;
    return waitFor ? this.wire.replicated(sent, command.keys[0], waitFor) : sent;
  }

  /** GET {emq}:version from the primary that owns its slot (in a cluster, routed by the key). */
  private async readVersion(): Promise<Outcome> {
    if (this.wire.isClosed) throw new ConnectionError('connection is closed');
    try {
      const outcome = scriptOutcome(await this.wire.routed(['GET', WIRE_VERSION_KEY], WIRE_VERSION_KEY));
      this.events.onReached?.();
      return outcome;
    } catch (err) {
      if (isReplyError(err)) {
        this.events.onReached?.();
        return scriptOutcome(err);
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
