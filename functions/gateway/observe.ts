// What the gateway relays, told to the request's record (and through it to the metrics):
// each project script's call and reply (its verdict, its queue from its first key), NOSCRIPT
// replies (each makes a producer send EVAL), and the size of each pipeline or transaction.
// The gateway does not retry or fall back itself: its producers do.
import type { Arg, Outcome } from '../../shared/connection.js';
import { errorCode } from '../../shared/observe.js';
import { allScripts, type Script } from '../../shared/scripts.js';
import type { RequestRecord } from '../http/request-record.js';

const bySha = new Map(allScripts.map((s) => [s.sha1, s]));
const byText = new Map(allScripts.map((s) => [s.text, s]));
const text = (a: Arg | undefined) => (typeof a === 'string' ? a : a === undefined ? '' : new TextDecoder().decode(a));

// the producer's requests name the same few scripts over and over: the last SHA-1 looked up is kept
let lastSha: string | undefined;
let lastScript: Script | undefined;
function scriptOfSha(sha: string): Script | undefined {
  if (sha !== lastSha) {
    lastScript = bySha.get(sha.toLowerCase());
    lastSha = sha;
  }
  return lastScript;
}

/** The project script an EVALSHA or EVAL names, with its first key and its arguments; undefined for any other command. */
function scriptCall(args: readonly Arg[]): { script: Script; keys: string[]; argv: readonly Arg[] } | undefined {
  const op = text(args[0]).toLowerCase();
  if (op !== 'evalsha' && op !== 'eval') return undefined;
  const script = op === 'evalsha' ? scriptOfSha(text(args[1])) : byText.get(text(args[1]));
  const count = Number(text(args[2]));
  if (!script || !Number.isSafeInteger(count) || count < 0) return undefined;
  // the arguments only where a verdict reads them (flow-child's mode): no copy per enqueue
  const argv = script.name === 'flow-child' ? args.slice(3 + count, 8 + count).map(text) : [];
  return { script, keys: args.slice(3, 3 + Math.min(count, 1)).map(text), argv };
}

/** The commands a request relayed and their outcomes (one outcome for an aborted transaction). */
export function noteOutcomes(
  record: RequestRecord | undefined,
  kind: 'single' | 'pipeline' | 'multi_exec',
  commands: ReadonlyArray<readonly Arg[]>,
  outcomes: readonly Outcome[] | Outcome,
): void {
  if (!record) return;
  if (kind !== 'single') record.pipeline(commands.length, kind);
  if (!Array.isArray(outcomes)) {
    const one = outcomes as Outcome;
    if (!one.ok) record.code = errorCode(one.error);
    return;
  }
  outcomes.forEach((outcome, i) => {
    const call = scriptCall(commands[i]!);
    if (call) {
      if (!outcome.ok && errorCode(outcome.error) === 'NOSCRIPT') record.noscript(call.script);
      record.script(call.script, outcome, call.keys, call.argv);
    }
    if (kind === 'single' && !outcome.ok) record.code = errorCode(outcome.error);
  });
}
