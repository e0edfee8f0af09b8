// Admin requests whose reply glide may be unable to read, each on a connection of its own
// while it runs. glide drops a connection on an error or status reply that is not UTF-8, failing
// every request in flight on it; Valkey echoes arguments in its errors (CONFIG SET's parameter,
// ACL SETUSER's rule, FUNCTION LOAD's text, cut at 128 bytes, which can split a UTF-8
// character), and a script or function can answer any bytes it reads. So an admin request
// with a byte that is not ASCII in any argument, or running server-side code, is sent alone:
// if its reply cannot be read, only it fails. The producer scope runs only this project's
// scripts, whose errors are printable ASCII (lua/lib/wire.lua shown()), and never goes alone.
import type { Arg, Outcome } from '../../shared/connection.js';
import type { GlideOptions } from '../../shared/connections/glide.js';
import { nameOf } from './args.js';
import { glideLane, type Lane, Unavailable } from './lane.js';

/** Commands that run code on the server, whose replies carry whatever that code makes of the data. */
const SERVER_CODE = new Set(['EVAL', 'EVALSHA', 'EVAL_RO', 'EVALSHA_RO', 'FCALL', 'FCALL_RO']);

/** Connections open for lone requests; more requests wait their turn. */
const MOST_ALONE = 8;

const notAscii = (arg: Arg): boolean => {
  if (typeof arg === 'string') {
    for (let i = 0; i < arg.length; i++) if (arg.charCodeAt(i) > 0x7f) return true;
    return false;
  }
  for (let i = 0; i < arg.length; i++) if (arg[i]! > 0x7f) return true;
  return false;
};

/** True when the request goes on a connection of its own (admin scope). */
export function goesAlone(commands: ReadonlyArray<readonly Arg[]>): boolean {
  return commands.some((args) => SERVER_CODE.has(nameOf(args[0])) || args.some(notAscii));
}

/** The outcome of a command whose request's connection dropped after it was sent. */
export const UNREADABLE: Outcome = {
  ok: false,
  error:
    'ERR a reply to this request could not be read (an error or status reply that is not UTF-8); it was sent on a connection of its own, so no other request failed. The command may have run',
};

/**
 * Runs requests each on a connection no other request uses while it runs: at most MOST_ALONE
 * open, kept for the next lone request (a connection per EVAL would cost a connect and a
 * HELLO each), and closed when a reply could not be read on it (glide dropped it).
 */
export function loneRunner(options: GlideOptions): <T>(run: (lane: Lane) => Promise<T>, unreadable: () => T) => Promise<T> {
  const idle: Lane[] = [];
  const waiting: Array<() => void> = [];
  // lanes whose connection dropped (a reply it could not read): never lent again
  const dropped = new WeakSet<Lane>();
  let open = 0;
  const take = async (): Promise<Lane> => {
    for (;;) {
      const lane = idle.pop();
      if (lane) return lane;
      if (open < MOST_ALONE) {
        open++;
        const lane: Lane = glideLane(options, { down: () => dropped.add(lane) });
        return lane;
      }
      await new Promise<void>((r) => waiting.push(r));
    }
  };
  const give = (lane: Lane, keep: boolean) => {
    if (keep && !dropped.has(lane)) idle.push(lane);
    else {
      open--;
      void lane.close();
    }
    waiting.shift()?.();
  };
  return async (run, unreadable) => {
    const lane = await take();
    let keep = false;
    try {
      // connected first: a server that cannot be reached is a 503, as on the shared connection
      await lane.use(async () => undefined);
      try {
        const result = await run(lane);
        keep = true;
        return result;
      } catch (err) {
        if (err instanceof Unavailable) return unreadable();
        throw err;
      }
    } finally {
      give(lane, keep);
    }
  };
}
