// What the core tells an observer: every script call's final outcome, each NOSCRIPT fallback,
// each transient retry, each pipeline sent, each REST request sent again. Runtime-agnostic:
// the Node servers turn these into prom-client counters, the Worker into Analytics Engine
// data points, and both into the request's log line. An observer rides on a Connection
// (`observed()`), so each request can have its own without changing any function's signature.
// Observers must not throw and must be cheap: they run on the hot path.
import type { Arg, Connection, Outcome, RequestScope, ScriptCommand } from './connection.js';
import { InvalidArgumentError, errorPrefix } from './errors.js';
import type { Script } from './scripts.js';

export interface Observer {
  /** A script call's final outcome, after dispatch's NOSCRIPT and transient rounds. */
  script?(script: Script, outcome: Outcome, keys: readonly string[], args?: readonly Arg[]): void;
  /** A call answered NOSCRIPT was sent again as EVAL. */
  noscript?(script: Script): void;
  /** A call answered transiently (TRYAGAIN, MOVED, ASK...) is sent again; `reply` is the error's first word. */
  transient?(reply: string): void;
  /** A pipeline of `size` commands was sent: by dispatch (kind 'dispatch', script calls), or relayed by the gateway. */
  pipeline?(size: number, kind?: string): void;
  /** The REST connection sends a request again: `reason` is 'transport' or the status (502, 503, 504). */
  retry?(reason: string): void;
}

/**
 * `connection` for one request: the transport's own `withRequest` where it has one (REST:
 * headers and retries), else a view whose calls dispatch reports to `scope.observer`.
 * Closing the view does not close `connection`. A `scope.wait` needs `withRequest` (a view
 * cannot WAIT for replicas): without it, InvalidArgumentError, before anything is sent.
 */
export function scoped(connection: Connection, scope: RequestScope): Connection {
  if (connection.withRequest) return connection.withRequest(scope);
  if (scope.wait) throw new InvalidArgumentError('this connection cannot WAIT for replicas: it has no withRequest');
  const view: Connection = {
    observer: scope.observer,
    run: (c: ScriptCommand) => connection.run(c),
    pipeline: (cs: readonly ScriptCommand[]) => connection.pipeline(cs),
    close: async () => {},
  };
  if (connection.check) view.check = (cs) => connection.check!(cs);
  if (connection.scan) view.scan = (cursor, match, count) => connection.scan!(cursor, match, count);
  return view;
}

/** The error codes a verdict names; any other error reply's first word is counted as OTHER (labels stay bounded). */
const CODES = new Set(
  'EMQKIND EMQLAYOUT EMQCONFLICT WRONGTYPE NOSCRIPT TRYAGAIN CLUSTERDOWN MASTERDOWN LOADING MOVED ASK ERR NOPERM OOM BUSY READONLY'.split(' '),
);
/** The script's own refusals: the caller's input, nothing written. */
const REFUSALS = new Set(['EMQKIND', 'EMQLAYOUT', 'EMQCONFLICT', 'WRONGTYPE']);

export type VerdictLabel =
  | 'enqueued'
  | 'scheduled'
  | 'duplicate'
  | 'taken'
  | 'found'
  | 'missing'
  | 'held'
  | 'resumed'
  | 'clear'
  | 'there'
  | 'removed'
  | 'promoted'
  | 'rescheduled'
  | 'set'
  | 'declined'
  | 'keys'
  | 'registered'
  | 'exists'
  | 'cancelled'
  | 'absent'
  | 'refused'
  | 'error'
  | 'unexpected';

/** An error reply's first word, from a bounded set (OTHER for the rest). */
export function errorCode(message: string): string {
  const prefix = errorPrefix(message);
  return CODES.has(prefix) ? prefix : 'OTHER';
}

const flag = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);

/** A reply's label from its flag: `labels[flag]`, else unexpected (a reply the script's header does not list). */
function labelled(f: unknown, labels: Readonly<Record<number, VerdictLabel>>): VerdictLabel {
  return (typeof f === 'number' && labels[f]) || 'unexpected';
}

/**
 * What a script's reply stands for, as a bounded label (each script's replies: its header in lua/):
 * - enqueue, genqueue, schedule: 1 enqueued (scheduled), 0 duplicate; the -once twins the
 *   same from [1 | 0, id], and [2, id] `taken` (the id named another minter's job: minted again)
 * - job-state: found, or missing (nil)
 * - flow: N (1 to 1000 children) enqueued, 0 duplicate
 * - flow-parent: 1 held, [2, ids...] resumed (held by an earlier send of the flow), 0 duplicate
 * - flow-child: 1 clear in check mode (it would land), enqueued in land mode (it landed), 0
 *   there (there already, or it ran); the mode is its fifth argument (`args`), so without
 *   them a 1 is clear
 * - job-remove, job-promote, job-reschedule (the control verbs): [1, ...] removed, promoted,
 *   rescheduled; [0, reason] declined (nothing written: absent, claimed, not scheduled...);
 *   [2, ...] keys (the row names a lane or a parent: sent again with their keys)
 * - queue-pause, group-set: set (1, or the group after the change); group-read, queue-info: found
 * - repeat-register, repeat-cancel (the library's texts): 1 registered, 0 exists; 1 cancelled,
 *   0 absent; repeat-read and repeat-move: found, or missing (nil: no record); repeat-page: found
 * - an error reply: `refused` with the script's refusal code, else `error` with its first word
 * - `unexpected` for a reply the script does not give.
 */
export function verdictOf(script: Script, outcome: Outcome, args?: readonly Arg[]): { verdict: VerdictLabel; code?: string } {
  if (!outcome.ok) {
    const code = errorCode(outcome.error);
    return { verdict: REFUSALS.has(code) ? 'refused' : 'error', code };
  }
  const value = outcome.value;
  const head = Array.isArray(value) ? flag(value[0]) : undefined;
  switch (script.name) {
    case 'job-state':
      return { verdict: value === null ? 'missing' : Array.isArray(value) ? 'found' : 'unexpected' };
    case 'enqueue':
    case 'genqueue':
      return { verdict: labelled(flag(value), { 1: 'enqueued', 0: 'duplicate' }) };
    case 'schedule':
      return { verdict: labelled(flag(value), { 1: 'scheduled', 0: 'duplicate' }) };
    case 'enqueue-once':
    case 'genqueue-once':
      return { verdict: labelled(head, { 1: 'enqueued', 0: 'duplicate', 2: 'taken' }) };
    case 'schedule-once':
      return { verdict: labelled(head, { 1: 'scheduled', 0: 'duplicate', 2: 'taken' }) };
    case 'flow': {
      const n = flag(value);
      return { verdict: n === 0 ? 'duplicate' : Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 1000 ? 'enqueued' : 'unexpected' };
    }
    case 'flow-parent':
      return { verdict: head === 2 ? 'resumed' : labelled(flag(value), { 1: 'held', 0: 'duplicate' }) };
    case 'flow-child':
      return { verdict: labelled(flag(value), { 1: args?.[4] === 'land' ? 'enqueued' : 'clear', 0: 'there' }) };
    case 'job-remove':
      return { verdict: labelled(head, { 1: 'removed', 0: 'declined', 2: 'keys' }) };
    case 'job-promote':
      return { verdict: labelled(head, { 1: 'promoted', 0: 'declined', 2: 'keys' }) };
    case 'job-reschedule':
      return { verdict: labelled(head, { 1: 'rescheduled', 0: 'declined' }) };
    case 'queue-pause':
      return { verdict: labelled(flag(value), { 1: 'set' }) };
    case 'group-set':
      return { verdict: Array.isArray(value) ? 'set' : 'unexpected' };
    case 'group-read':
    case 'queue-info':
      return { verdict: Array.isArray(value) ? 'found' : 'unexpected' };
    case 'repeat-register':
      return { verdict: labelled(flag(value), { 1: 'registered', 0: 'exists' }) };
    case 'repeat-cancel':
      return { verdict: labelled(flag(value), { 1: 'cancelled', 0: 'absent' }) };
    case 'repeat-read':
    case 'repeat-move':
      return { verdict: value === null ? 'missing' : Array.isArray(value) ? 'found' : 'unexpected' };
    case 'repeat-page':
      return { verdict: Array.isArray(value) ? 'found' : 'unexpected' };
    default:
      return { verdict: 'unexpected' };
  }
}

/** The queue a key of this project's keyspace belongs to: its hash tag (`emq:{<queue>}:...`), else undefined. */
export function queueOfKey(key: string | undefined): string | undefined {
  if (key === undefined || !key.startsWith('emq:{')) return undefined;
  const close = key.indexOf('}', 5);
  return close > 5 ? key.slice(5, close) : undefined;
}
