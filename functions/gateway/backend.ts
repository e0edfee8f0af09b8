// The gateway's way to Valkey: one shared glide connection, so concurrent requests'
// commands pipeline on it. Connected lazily and again after a failed connect, so the
// gateway starts (and answers 503) while Valkey is down, and recovers without a restart.
import type { Arg, Outcome } from '../../shared/connection.js';
import { connectGlide, type GlideConnection, type GlideOptions } from '../../shared/connections/glide.js';
import { ConnectionError } from '../../shared/errors.js';

export interface Backend {
  command(args: readonly Arg[]): Promise<Outcome>;
  /** Outcomes in order, or one outcome when the server aborted the whole transaction. */
  transaction(commands: ReadonlyArray<readonly Arg[]>): Promise<Outcome[] | Outcome>;
  close(): Promise<void>;
}

/** Valkey cannot be reached now: answer 503 with Retry-After. */
export class Unavailable extends Error {}

export function glideBackend(options: GlideOptions): Backend {
  let connection: GlideConnection | undefined;
  let connecting: Promise<GlideConnection> | undefined;
  let closed = false;

  const connected = (): Promise<GlideConnection> => {
    if (connection) return Promise.resolve(connection);
    connecting ??= connectGlide(options).then(
      (c) => {
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

  const guard = async <T>(use: (c: GlideConnection) => Promise<T>): Promise<T> => {
    if (closed) throw new Unavailable('the gateway is shutting down');
    try {
      return await use(await connected());
    } catch (err) {
      if (err instanceof ConnectionError) throw new Unavailable(err.message);
      throw err;
    }
  };

  return {
    command: (args) => guard((c) => c.command(args)),
    transaction: (commands) => guard((c) => c.transaction(commands)),
    async close() {
      closed = true;
      await (connection ?? (await connecting?.catch(() => undefined)))?.close();
    },
  };
}
