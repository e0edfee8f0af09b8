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

/** One script call: one round trip in steady state, two right after a script flush. */
export async function runScript(connection: Connection, script: Script, keys: readonly string[], args: readonly Arg[]): Promise<Outcome> {
  const command = evalsha(script, keys, args);
  const outcome = await connection.run(command);
  return isNoScript(outcome) ? connection.run(asEval(script, command)) : outcome;
}
