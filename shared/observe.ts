// What the core tells an observer: every script call's final outcome, each NOSCRIPT fallback,
// each transient retry, each pipeline sent, each REST request sent again. Runtime-agnostic:
// the Node servers turn these into prom-client counters, the Worker into Analytics Engine
// data points, and both into the request's log line. An observer rides on a Connection
// (`observed()`), so each request can have its own without changing any function's signature.
// Observers must not throw and must be cheap: they run on the hot path.
import type { Connection, Outcome, RequestScope, ScriptCommand } from './connection.js';
import { errorPrefix } from './errors.js';
import type { Script } from './scripts.js';

export interface Observer {
  /** A script call's final outcome, after dispatch's NOSCRIPT and transient rounds. */
  script?(script: Script, outcome: Outcome, keys: readonly string[]): void;
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
 * Closing the view does not close `connection`.
 */
export function scoped(connection: Connection, scope: RequestScope): Connection {
  if (connection.withRequest) return connection.withRequest(scope);
  const view: Connection = {
    observer: scope.observer,
    run: (c: ScriptCommand) => connection.run(c),
    pipeline: (cs: readonly ScriptCommand[]) => connection.pipeline(cs),
    close: async () => {},
  };
  if (connection.check) view.check = (cs) => connection.check!(cs);
  return view;
}

/** The error codes a verdict names; any other error reply's first word is counted as OTHER (labels stay bounded). */
const CODES = new Set(
  'EMQKIND EMQLAYOUT EMQCONFLICT WRONGTYPE NOSCRIPT TRYAGAIN CLUSTERDOWN MASTERDOWN LOADING MOVED ASK ERR NOPERM OOM BUSY READONLY'.split(' '),
);
/** The script's own refusals: the caller's input, nothing written. */
const REFUSALS = new Set(['EMQKIND', 'EMQLAYOUT', 'EMQCONFLICT', 'WRONGTYPE']);

export type VerdictLabel = 'enqueued' | 'scheduled' | 'duplicate' | 'taken' | 'found' | 'missing' | 'refused' | 'error' | 'unexpected';

/** An error reply's first word, from a bounded set (OTHER for the rest). */
export function errorCode(message: string): string {
  const prefix = errorPrefix(message);
  return CODES.has(prefix) ? prefix : 'OTHER';
}

/**
 * What a script's reply stands for, as a bounded label: enqueued, scheduled or duplicate;
 * `taken` (a -once script's id named another minter's job: minted again); found or missing
 * (job-state); `refused` with the script's refusal code; `error` with the error reply's first
 * word; `unexpected` for a reply no script gives.
 */
export function verdictOf(script: Script, outcome: Outcome): { verdict: VerdictLabel; code?: string } {
  if (!outcome.ok) {
    const code = errorCode(outcome.error);
    return { verdict: REFUSALS.has(code) ? 'refused' : 'error', code };
  }
  const value = outcome.value;
  const flag = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
  const admitted: VerdictLabel = script.name.startsWith('schedule') ? 'scheduled' : 'enqueued';
  switch (script.name) {
    case 'job-state':
      return { verdict: value === null ? 'missing' : 'found' };
    case 'enqueue':
    case 'genqueue':
    case 'schedule': {
      const f = flag(value);
      return { verdict: f === 1 ? admitted : f === 0 ? 'duplicate' : 'unexpected' };
    }
    default: {
      // the -once scripts: [1 | 0 | 2, id]
      const f = Array.isArray(value) ? flag(value[0]) : undefined;
      return { verdict: f === 1 ? admitted : f === 0 ? 'duplicate' : f === 2 ? 'taken' : 'unexpected' };
    }
  }
}

/** The queue a key of this project's keyspace belongs to: its hash tag (`emq:{<queue>}:...`), else undefined. */
export function queueOfKey(key: string | undefined): string | undefined {
  if (key === undefined || !key.startsWith('emq:{')) return undefined;
  const close = key.indexOf('}', 5);
  return close > 5 ? key.slice(5, close) : undefined;
}
