// How every script is sent, alone or in a pipeline: EVALSHA of its SHA-1; only after NOSCRIPT,
// the same call as EVAL (which caches the script again). Never a separate SCRIPT LOAD. Calls a
// cluster answers as transient (a slot on the move, a failover) are sent again, bounded, with
// backoff. This file is the one place that says so: a single call is a pipeline of one.
import type { Arg, Connection, Outcome, ScriptCommand } from './connection.js';
import { errorPrefix } from './errors.js';
import { backoff, mayRetry, type RetryPolicy } from './retry.js';
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

export function isTransient(outcome: Outcome): boolean {
  return !outcome.ok && TRANSIENT.has(errorPrefix(outcome.error));
}

/** 14 retries, 10 ms doubling, at most 500 ms a wait, jittered down to half: 2.3 to 4.6 s over all the retries. */
export const TRANSIENT_RETRY: RetryPolicy = { retries: 14, baseMs: 10, capMs: 500, jitter: [0.5, 1] };

export interface DispatchOptions {
  /** 'run': each call with Connection.run (a single call); 'pipeline' (default): each round as one pipeline. */
  via?: 'run' | 'pipeline';
  /**
   * Each script's first call as EVAL, so none of the calls can answer NOSCRIPT: for calls
   * whose order matters across scripts (one job id under two scripts), which a NOSCRIPT
   * would break, since the calls of other scripts after it have run by then.
   */
  ordered?: boolean;
}

/**
 * Sends calls of one or more scripts (`scripts`: every script a call may name) and answers
 * an outcome per call, in order: one round trip in steady state; right after a script flush,
 * the NOSCRIPT ones again, the first call of each script as EVAL (which loads it for the
 * EVALSHAs after it); during a slot migration or a failover, the transient ones again as
 * EVAL (the node now serving the slot may lack the script), at most TRANSIENT_RETRY.retries
 * times, with its backoff.
 */
export async function dispatch(
  connection: Connection,
  scripts: Script | readonly Script[],
  commands: readonly ScriptCommand[],
  { via = 'pipeline', ordered = false }: DispatchOptions = {},
): Promise<Outcome[]> {
  const observer = connection.observer;
  const send = (calls: readonly ScriptCommand[]): Promise<Outcome[]> => {
    // a single call (every job enqueued on its own) skips Promise.all's extra promises
    if (via === 'run') return calls.length === 1 ? connection.run(calls[0]!).then((o) => [o]) : Promise.all(calls.map((c) => connection.run(c)));
    observer?.pipeline?.(calls.length, 'dispatch');
    return connection.pipeline(calls);
  };
  const list: readonly Script[] = Array.isArray(scripts) ? scripts : [scripts as Script];
  const withText = evalOf(list);
  const outcomes = await send(ordered ? loadingFirst(commands, withText) : commands);

  const flushed = indexes(outcomes, isNoScript);
  if (flushed.length > 0) {
    // One EVAL per script loads it; the EVALSHAs of that script after it in the pipeline find it.
    const loaded = new Set<string>();
    const retry = flushed.map((i) => {
      const command = commands[i]!;
      const key = command.op === 'evalsha' ? command.sha1 : '';
      if (loaded.has(key)) return command;
      loaded.add(key);
      const script = observer?.noscript && scriptOf(list, command);
      if (script) observer!.noscript!(script);
      return withText(command);
    });
    const again = await send(retry);
    // Only a second flush racing this one (or a cluster node the EVAL did not reach) lands here: send the text with each.
    const still = indexes(again, isNoScript);
    if (still.length > 0) {
      for (const k of still) {
        const script = observer?.noscript && scriptOf(list, retry[k]!);
        if (script) observer!.noscript!(script);
      }
      const texts = await send(still.map((k) => withText(retry[k]!)));
      still.forEach((k, j) => (again[k] = texts[j]!));
    }
    flushed.forEach((i, k) => (outcomes[i] = again[k]!));
  }

  // a slot migration or failover answers some calls TRYAGAIN/CLUSTERDOWN: the same calls again
  for (let attempt = 0; ; attempt++) {
    const again = indexes(outcomes, isTransient);
    if (again.length === 0 || !mayRetry(TRANSIENT_RETRY, attempt)) break;
    if (observer?.transient) for (const i of again) observer.transient(errorPrefix((outcomes[i] as { error: string }).error));
    await backoff(TRANSIENT_RETRY, attempt);
    const retried = await send(again.map((i) => withText(commands[i]!)));
    again.forEach((i, k) => (outcomes[i] = retried[k]!));
  }
  if (observer?.script) {
    commands.forEach((c, i) => {
      const script = scriptOf(list, c);
      if (script) observer.script!(script, outcomes[i]!, c.keys, c.args);
    });
  }
  return outcomes;
}

/** The calls with each script's first one as EVAL (which loads it for the EVALSHAs after it). */
function loadingFirst(commands: readonly ScriptCommand[], withText: (command: ScriptCommand) => ScriptCommand): ScriptCommand[] {
  const seen = new Set<string>();
  return commands.map((c) => {
    const key = c.op === 'evalsha' ? c.sha1 : c.script;
    if (seen.has(key)) return c;
    seen.add(key);
    return withText(c);
  });
}

/** The script a call names, found among `list` by SHA-1 or text, for the observer. */
function scriptOf(list: readonly Script[], command: ScriptCommand): Script | undefined {
  return list.find((s) => (command.op === 'evalsha' ? s.sha1 === command.sha1 : s.text === command.script));
}

/** A call as EVAL, its text found among `scripts` by SHA-1 (a call of a script not given is a bug: thrown). */
function evalOf(list: readonly Script[]): (command: ScriptCommand) => ScriptCommand {
  return (command) => {
    if (command.op === 'eval') return command;
    const script = list.find((s) => s.sha1 === command.sha1);
    if (!script) throw new Error(`dispatch: no script text given for SHA-1 ${command.sha1}`);
    return asEval(script, command);
  };
}

function indexes(outcomes: readonly Outcome[], which: (o: Outcome) => boolean): number[] {
  const out: number[] = [];
  outcomes.forEach((o, i) => which(o) && out.push(i));
  return out;
}

/** One script call: dispatch() of one, sent with Connection.run. */
export async function runScript(connection: Connection, script: Script, keys: readonly string[], args: readonly Arg[]): Promise<Outcome> {
  const [outcome] = await dispatch(connection, script, [evalsha(script, keys, args)], { via: 'run' });
  return outcome!;
}
