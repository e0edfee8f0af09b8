// How every script is sent: EVALSHA of its SHA-1; only after NOSCRIPT, the same call as
// EVAL (which caches the script again). Never a separate SCRIPT LOAD.
import type { Arg, Connection, Outcome, ScriptCommand } from './connection.js';
import { errorPrefix } from './errors.js';
import type { Script } from './scripts.js';

export function evalsha(script: Script, keys: readonly string[], args: readonly Arg[]): ScriptCommand {
  return { op: 'evalsha', sha1: script.sha1, keys, args };
}

export function asEval(script: Script, command: ScriptCommand): ScriptCommand {
  return { op: 'eval', script: script.text, keys: command.keys, args: command.args };
}

export function isNoScript(outcome: Outcome): boolean {
  return !outcome.ok && errorPrefix(outcome.error) === 'NOSCRIPT';
}

/**
 * Replies a Valkey Cluster gives while it moves a slot or fails over. Every project script
 * is idempotent (keyed by the job id, or read-only), so sending the same call again is safe.
 */
// (ASK and MOVED too: glide follows them for single commands, but an ASK inside a batch
// came back as a reply during a live migration: seen here)
const TRANSIENT = new Set(['TRYAGAIN', 'CLUSTERDOWN', 'MASTERDOWN', 'LOADING', 'ASK', 'MOVED']);
export const TRANSIENT_RETRIES = 14;

export function isTransient(outcome: Outcome): boolean {
  return !outcome.ok && TRANSIENT.has(errorPrefix(outcome.error));
}

/** 10 ms doubling, jittered, at most 500 ms a wait: 2.3 to 4.6 s over all the retries. */
export const transientDelay = (attempt: number) =>
  new Promise((r) => setTimeout(r, Math.min(500, 10 * 2 ** attempt) * (0.5 + Math.random() / 2)));

/**
 * One script call: one round trip in steady state, two right after a script flush; during
 * a slot migration (TRYAGAIN) or a failover, the same call again, bounded, with backoff.
 */
export async function runScript(connection: Connection, script: Script, keys: readonly string[], args: readonly Arg[]): Promise<Outcome> {
  const command = evalsha(script, keys, args);
  for (let attempt = 0; ; attempt++) {
    let outcome = await connection.run(command);
    if (isNoScript(outcome)) outcome = await connection.run(asEval(script, command));
    if (!isTransient(outcome) || attempt >= TRANSIENT_RETRIES) return outcome;
    await transientDelay(attempt);
  }
}
