// One glide connection of the gateway's, shared by the requests of one scope, so their
// commands pipeline on it. Connected lazily and again after a failed connect, so the gateway
// starts (and answers 503) while Valkey is down, and recovers without a restart.
import type { Arg, Outcome } from '../../shared/connection.js';
import { connectGlide, type GlideConnection, type GlideOptions } from '../../shared/connections/glide.js';
import { NotReplicatedError } from '../../shared/connections/glide-wire.js';
import { ConnectionError } from '../../shared/errors.js';
import { type DoubleStyle, styleOf } from './doubles.js';
import { command, transaction } from './glide-commands.js';

/** How often a PING checks whether Valkey is back, after a failure. */
const PROBE_MS = 200;

/** Valkey cannot be reached now: answer 503 with Retry-After. */
export class Unavailable extends Error {}

export interface Lane {
  command(args: readonly Arg[]): Promise<Outcome>;
  transaction(commands: ReadonlyArray<readonly Arg[]>): Promise<Outcome[] | Outcome>;
  /** The connection's `{emq}:version` fence: undefined when a write may go now (see Backend.admit). */
  admit(): Promise<void> | undefined;
  /** Runs `use` on the connection, with this lane's 503 handling. */
  use<T>(use: (c: GlideConnection) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * How the server prints doubles (doubles.ts), read from INFO once per connection; a server that
 * refuses INFO is taken as current.
 */
async function serverStyle(c: GlideConnection): Promise<DoubleStyle> {
  try {
    const info = await c.wire.routed(['INFO', 'server'], 'info');
    return styleOf(Buffer.isBuffer(info) ? info.toString('utf8') : String(info));
  } catch {
    return 'shortest';
  }
}

/** Told when the lane finds Valkey unreachable (down) and when a probe finds it back (up); must not throw. */
export interface LaneEvents {
  down?(): void;
  up?(): void;
}

export function glideLane(options: GlideOptions, events: LaneEvents = {}): Lane {
  let connection: GlideConnection | undefined;
  let style: DoubleStyle = 'shortest';
  let connecting: Promise<GlideConnection> | undefined;
  let closed = false;

  const connected = (): Promise<GlideConnection> => {
    if (connection) return Promise.resolve(connection);
    connecting ??= connectGlide(options).then(
      async (c) => {
        style = await serverStyle(c);
        connecting = undefined;
        if (closed) void c.close();
        return (connection = c);
      },
      (err: unknown) => {
        connecting = undefined;
        throw err;
      },
    );
    return connecting;
  };

  // While Valkey is away, glide holds each call until its request timeout (5 s) and a fresh
  // connect waits out the connect timeout: after one such failure, answer 503 at once and
  // let one PING at a time find out when Valkey is back.
  let down: string | undefined;
  const probe = async () => {
    while (down !== undefined && !closed) {
      await new Promise((r) => setTimeout(r, PROBE_MS));
      try {
        const pong = await command((await connected()).wire, ['PING'], style);
        if (pong.ok && down !== undefined) {
          down = undefined;
          events.up?.();
        }
      } catch {
        // still away
      }
    }
  };

  const unavailable = (err: unknown): never => {
    if (!(err instanceof ConnectionError)) throw err;
    // a write too few replicas confirmed says nothing about the connection
    if (!(err instanceof NotReplicatedError) && down === undefined) {
      down = err.message;
      events.down?.();
      void probe();
    }
    throw new Unavailable(err.message);
  };

  const guard = <T>(use: (c: GlideConnection) => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new Unavailable('the gateway is shutting down'));
    if (down !== undefined) return Promise.reject(new Unavailable(down));
    let sent: Promise<T>;
    try {
      // once connected, straight on: no turns of the microtask queue spent awaiting the connection
      sent = connection ? use(connection) : connected().then(use);
    } catch (err) {
      sent = Promise.reject(err);
    }
    return sent.catch(unavailable);
  };

  return {
    command: (args) => guard((c) => command(c.wire, args, style)),
    transaction: (commands) => guard((c) => transaction(c.wire, commands, style)),
    admit() {
      // connected: the fence answers at once when it was read lately (no promise at all)
      if (connection && down === undefined && !closed) return connection.fence.admit()?.catch(unavailable);
      return guard((c) => c.fence.admit() ?? Promise.resolve());
    },
    use: guard,
    async close() {
      closed = true;
      await (connection ?? (await connecting?.catch(() => undefined)))?.close();
    },
  };
}
