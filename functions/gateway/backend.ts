// The gateway's way to Valkey: one glide connection per scope. Producers (PING and this
// project's scripts only) share one, so their commands pipeline on it; the admin scope has
// its own, so nothing an admin sends (a script's error reply that is not UTF-8 makes glide
// drop its connection) can fail a producer's request in flight.
import type { Arg, Outcome, WaitFor } from '../../shared/connection.js';
import type { GlideConnection, GlideOptions } from '../../shared/connections/glide.js';
import { goesAlone, loneRunner, UNREADABLE } from './alone.js';
import { commandName } from './args.js';
import { CommandTable } from './commands.js';
import { command } from './glide-commands.js';
import { listingScan } from './scan.js';
import { scanOutcome } from '../../shared/connections/glide-scan.js';
import { glideLane, type Lane, type LaneEvents, Unavailable } from './lane.js';
import type { Scope } from './tokens.js';

export { Unavailable };

export interface Backend {
  command(scope: Scope, args: readonly Arg[]): Promise<Outcome>;
  /** Commands pipelined, in order: an outcome each. */
  pipeline(scope: Scope, commands: ReadonlyArray<readonly Arg[]>): Promise<Outcome[]>;
  /** Outcomes in order, or one outcome when the server aborted the whole transaction. */
  transaction(scope: Scope, commands: ReadonlyArray<readonly Arg[]>): Promise<Outcome[] | Outcome>;
  /**
   * The `{emq}:version` fence (shared/fence.ts), for the producer scope: undefined when its
   * calls may go now, else a promise that resolves when they may, or rejects with
   * WireMismatchError (or Unavailable when Valkey cannot be read).
   */
  admit(): Promise<void> | undefined;
  /** After the scope's writes to these keys answered: WAIT on each one's primary, on the scope's connection; the fewest replicas that confirmed. */
  replicas(scope: Scope, keys: readonly string[], wait: WaitFor): Promise<number>;
  /** The first command's name (ASCII, upper-cased) the server's command table lacks, or undefined (admin connection). */
  unknownCommand(commands: ReadonlyArray<readonly Arg[]>): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Each connection's availability, and the producer connection's fence state (the metrics' inputs). */
export interface BackendEvents {
  lane?(scope: Scope): LaneEvents;
  onFence?: GlideOptions['onFence'];
}

export function glideBackend(options: GlideOptions, events: BackendEvents = {}): Backend {
  // RESP2, as Upstash's clients expect: replies come as the server sends them to RESP2 clients
  const producer = glideLane({ ...options, resp2: true, onFence: events.onFence }, events.lane?.('producer'));
  // the admin scope is not fenced: it writes no jobs, and an operator may need it to fix the key
  const admin = glideLane({ ...options, resp2: true, fence: false }, events.lane?.('admin'));
  // an admin request whose reply glide may not read goes on a connection of its own (alone.ts)
  const alone = loneRunner({ ...options, resp2: true, fence: false });
  const shared = (scope: Scope, commands: ReadonlyArray<readonly Arg[]>) => scope !== 'admin' || !goesAlone(commands);
  const piped = (scope: Scope, commands: ReadonlyArray<readonly Arg[]>) => Promise.all(commands.map((args) => run(scope, laneOf(scope), args)));
  const laneOf = (scope: Scope) => (scope === 'admin' ? admin : producer);
  // a producer's SCAN (the policy let only the listing's through) walks a cluster's primaries here
  const run = (scope: Scope, lane: Lane, args: readonly Arg[]): Promise<Outcome> => {
    const scan = scope !== 'admin' && commandName(args) === 'SCAN' ? listingScan(args) : undefined;
    return scan ? lane.use((c) => scanOutcome(c.wire, ...scan)) : lane.command(args);
  };
  // one table per connection: learned on the connection it describes
  const tables = new WeakMap<GlideConnection, CommandTable>();
  const tableOf = (c: GlideConnection) => {
    let table = tables.get(c);
    if (!table) tables.set(c, (table = new CommandTable(() => command(c.wire, ['COMMAND', 'LIST']))));
    return table;
  };
  return {
    command: (scope, args) =>
      shared(scope, [args])
        ? run(scope, laneOf(scope), args)
        : alone(
            (l) => l.command(args),
            () => UNREADABLE,
          ),
    pipeline: (scope, commands) =>
      shared(scope, commands)
        ? piped(scope, commands)
        : alone(
            // each command's own outcome: those read before the connection dropped keep theirs
            (l) =>
              Promise.all(commands.map((args) => l.command(args).catch((err: unknown) => (err instanceof Unavailable ? UNREADABLE : Promise.reject(err))))),
            () => commands.map(() => UNREADABLE),
          ),
    transaction: (scope, commands) =>
      shared(scope, commands)
        ? laneOf(scope).transaction(commands)
        : alone(
            (l) => l.transaction(commands),
            () => UNREADABLE,
          ),
    admit: () => producer.admit(),
    replicas: (scope, keys, wait) => laneOf(scope).use(async (c) => Math.min(...(await Promise.all(keys.map((k) => c.wire.replicas(k, wait)))))),
    unknownCommand: (commands) => admin.use((c) => tableOf(c).unknown(commands.map(commandName))),
    async close() {
      await Promise.all([producer.close(), admin.close()]);
    },
  };
}
