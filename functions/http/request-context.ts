// Each request's record, for its log line, the metrics and the Worker's data points: its id
// (X-Request-Id when sane, else minted; echoed), its W3C traceparent when valid, its route
// pattern, and what the core did for it (shared/observe.ts). `observeRequests()` makes the
// record and hands the finished summary to sinks; `forRequest()` gives a request's calls the
// record as observer and its id and traceparent as headers (over REST, the gateway logs the
// same id). Runtime-agnostic: the Worker and both Node servers use it.
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Connection, Outcome } from '../../shared/connection.js';
import { type Observer, queueOfKey, scoped, verdictOf } from '../../shared/observe.js';
import type { Script } from '../../shared/scripts.js';

/** A caller's X-Request-Id is kept when it is 1 to 128 printable ASCII characters, no space. */
const SANE_ID = /^[\x21-\x7e]{1,128}$/;
// version 00 exactly; a later version may append fields after the first four (W3C Trace Context §3.2.4)
/** A queue name as logged: printable ASCII, bounded. */
const QUEUE_SHAPE = /^[\x21-\x7e]{1,200}$/;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;

/** The caller's request id when sane, else undefined (then one is minted). */
export function saneRequestId(header: string | undefined): string | undefined {
  return header !== undefined && SANE_ID.test(header) ? header : undefined;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
// one getRandomValues call per 256 ids: on Node each call costs more than the rest of the id
let pool = new Uint8Array(0);
let at = 0;

/** 128 random bits as 32 hex digits. */
export function mintRequestId(): string {
  if (at + 16 > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(4096));
    at = 0;
  }
  let out = '';
  for (const end = at + 16; at < end; at++) out += HEX[pool[at]!];
  return out;
}

/** A valid traceparent header and its trace id, else undefined (then nothing is passed on). */
export function traceparentOf(header: string | undefined): { header: string; traceId: string } | undefined {
  if (header === undefined || header.length > 512) return undefined;
  const m = TRACEPARENT.exec(header);
  if (!m) return undefined;
  const [, version, traceId, parentId, , rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  return { header, traceId: traceId! };
}

/** What a request did, once answered: what the sinks get. Never a payload, a token or a header's value beyond the id and trace. */
export interface RequestSummary {
  /** Unix ms when the request arrived. */
  time: number;
  id: string;
  traceId: string | undefined;
  method: string;
  /** The route pattern that served it ('unmatched' when none did): never the raw path. */
  route: string;
  status: number;
  ms: number;
  /** The queue its script calls (else its route) named, when it got that far. */
  queue: string | undefined;
  /** Script calls by verdict label: `enqueued`, `duplicate`, `refused:EMQKIND`... */
  verdicts: Record<string, number>;
  /** Script calls by script, verdict and code. */
  calls: ReadonlyArray<{ script: string; verdict: string; code: string; count: number }>;
  /** The answer's error code: the producer's problem code, or the gateway's error reply code. */
  code: string | undefined;
  /** Request body bytes read. */
  bytes: number;
  noscript: number;
  transient: number;
  retries: number;
  pipelines: number;
  pipelineCommands: number;
}

export type RequestSink = (summary: RequestSummary, c: Context) => void;

/** The request's running record; also the observer its calls report to (and, through it, the process's). */
export class RequestRecord implements Observer {
  readonly time = Date.now();
  private readonly started = performance.now();
  queue: string | undefined;
  code: string | undefined;
  bytes = 0;
  readonly counts = { noscript: 0, transient: 0, retries: 0, pipelines: 0, pipelineCommands: 0 };
  private readonly calls = new Map<string, { script: string; verdict: string; code: string; count: number }>();

  constructor(
    readonly id: string,
    readonly trace: { header: string; traceId: string } | undefined,
    private readonly process: Observer | undefined,
  ) {}

  /** The headers its calls carry over REST. */
  get headers(): Record<string, string> {
    return this.trace ? { 'X-Request-Id': this.id, traceparent: this.trace.header } : { 'X-Request-Id': this.id };
  }

  script(script: Script, outcome: Outcome, keys: readonly string[]): void {
    // a gateway's caller may send any key: only a queue-like tag reaches the log
    const queue = this.queue === undefined ? queueOfKey(keys[0]) : undefined;
    if (queue !== undefined && QUEUE_SHAPE.test(queue)) this.queue = queue;
    const { verdict, code = '' } = verdictOf(script, outcome);
    const key = `${script.name} ${verdict} ${code}`;
    const seen = this.calls.get(key) ?? { script: script.name, verdict, code, count: 0 };
    seen.count++;
    this.calls.set(key, seen);
    this.process?.script?.(script, outcome, keys);
  }

  noscript(script: Script): void {
    this.counts.noscript++;
    this.process?.noscript?.(script);
  }

  transient(reply: string): void {
    this.counts.transient++;
    this.process?.transient?.(reply);
  }

  pipeline(size: number, kind?: string): void {
    this.counts.pipelines++;
    this.counts.pipelineCommands += size;
    this.process?.pipeline?.(size, kind);
  }

  retry(reason: string): void {
    this.counts.retries++;
    this.process?.retry?.(reason);
  }

  summary(c: Context): RequestSummary {
    const calls = [...this.calls.values()];
    const verdicts: Record<string, number> = {};
    for (const { verdict, code, count } of calls) {
      const label = verdict === 'refused' ? `refused:${code}` : verdict;
      verdicts[label] = (verdicts[label] ?? 0) + count;
    }
    const { noscript, transient, retries, pipelines, pipelineCommands } = this.counts;
    // no object spread here: V8 builds a spread-then-extended literal on a slow path (~10 µs)
    return {
      noscript,
      transient,
      retries,
      pipelines,
      pipelineCommands,
      time: this.time,
      id: this.id,
      traceId: this.trace?.traceId,
      method: c.req.method,
      route: routeOf(c),
      status: c.res.status,
      ms: Math.round((performance.now() - this.started) * 1000) / 1000,
      queue: this.queue ?? routeQueue(c),
      verdicts,
      calls,
      code: this.code,
      bytes: this.bytes,
    };
  }
}

const records = new WeakMap<Context, RequestRecord>();

/** The request's record, when observeRequests() runs in front of it. */
export function requestOf(c: Context): RequestRecord | undefined {
  return records.get(c);
}

/** `connection` for this request: its calls report to the request's record and carry its id and traceparent (REST). */
export function forRequest(c: Context, connection: Connection): Connection {
  const record = records.get(c);
  return record ? scoped(connection, { headers: record.headers, observer: record }) : connection;
}

/** Notes body bytes read (functions/http/body.ts). */
export function noteBytes(c: Context, bytes: number): void {
  const record = records.get(c);
  if (record) record.bytes += bytes;
}

/** Notes the answer's error code (the producer's problem code; a gateway's error reply code). */
export function noteCode(c: Context, code: string): void {
  const record = records.get(c);
  if (record) record.code = code;
}

/**
 * The route pattern of the handler the request was for: the first matched route that is a
 * handler, not a middleware (Hono's own test: a handler takes fewer than two parameters),
 * so a 401 from an auth middleware still counts under its route. Bounded by the app's routes.
 */
export function routeOf(c: Context): string {
  for (const r of matchedRoutes(c)) if (r.handler.length < 2) return r.path;
  return 'unmatched';
}

/** The route's :queue, when the handler that answered has one and it looks like a queue name. */
function routeQueue(c: Context): string | undefined {
  const queue = c.req.param('queue');
  return queue !== undefined && QUEUE_SHAPE.test(queue) ? queue : undefined;
}

export interface ObserveOptions {
  /** Told of every call of every request (the process's counters); optional. */
  observer?: Observer | undefined;
  /** Each gets every request's summary once it is answered; a sink that throws is ignored. */
  sinks: ReadonlyArray<RequestSink>;
}

/**
 * Middleware, first in the app: gives the request its id (X-Request-Id when sane, else
 * minted) and echoes it, keeps a valid traceparent, and once answered hands its summary to
 * each sink. Bounded work before any authentication: one header test, one id.
 */
export function observeRequests({ observer, sinks }: ObserveOptions): MiddlewareHandler {
  return async function observeRequests(c, next) {
    const id = saneRequestId(c.req.header('X-Request-Id')) ?? mintRequestId();
    const record = new RequestRecord(id, traceparentOf(c.req.header('traceparent')), observer);
    records.set(c, record);
    try {
      await next();
    } finally {
      try {
        c.res.headers.set('X-Request-Id', id);
      } catch {
        // a response with immutable headers keeps them
      }
      const summary = record.summary(c);
      for (const sink of sinks) {
        try {
          sink(summary, c);
        } catch {
          // a sink never fails a request
        }
      }
    }
  };
}
