// A request's record, with no web framework in it: its id (always minted here; a caller's
// sane X-Request-Id is kept beside it as `callerId`, logged, never used as the id), its W3C
// traceparent re-encoded as version 00 when it parses, what the core did for it
// (shared/observe.ts), and its summary once answered, for the sinks (log line, metrics, the
// Worker's data points). The producer's core (functions/producer/core.ts) and the gateway's
// node:http listener (functions/gateway/app.ts) keep one per request. Runtime-agnostic.
import type { Arg, Outcome } from '../../shared/connection.js';
import { type Observer, queueOfKey, verdictOf } from '../../shared/observe.js';
import type { Script } from '../../shared/scripts.js';

/** A caller's X-Request-Id is logged when it is 1 to 128 printable ASCII characters, no space. */
const SANE_ID = /^[\x21-\x7e]{1,128}$/;
/** A queue name as logged: printable ASCII, bounded. */
const QUEUE_SHAPE = /^[\x21-\x7e]{1,200}$/;
// the first 55 characters of any version's traceparent (W3C Trace Context §3.2.4: a later
// version keeps version 00's four fields first, and may append more after a '-')
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;
const ZEROS = /^0+$/;

/** The caller's request id when sane (logged as callerRequestId), else undefined. */
export function saneRequestId(header: string | undefined): string | undefined {
  return header !== undefined && SANE_ID.test(header) ? header : undefined;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
// one getRandomValues call per 256 ids (on Node each call costs more than the rest of the id),
// written out as hex once: an id is a slice of that text (no 16 concatenations per id)
let pool = '';
let at = 0;

/** 128 random bits as 32 hex digits. */
export function mintRequestId(): string {
  if (at + 32 > pool.length) {
    const bytes = crypto.getRandomValues(new Uint8Array(4096));
    pool = '';
    // a plain loop: Array.from(bytes, f).join() costs ~3x
    for (let i = 0; i < bytes.length; i++) pool += HEX[bytes[i]!];
    at = 0;
  }
  at += 32;
  return pool.slice(at - 32, at);
}

/**
 * A traceparent as version 00 (the one understood here) and its trace id, else undefined
 * (then nothing is passed on). Version 00 is exactly 55 characters; a later version (not ff)
 * is read from its first 55, which must end it or be followed by '-', and re-encoded as 00,
 * so what is passed on is always 55 characters.
 */
export function traceparentOf(header: string | undefined): { header: string; traceId: string } | undefined {
  if (header === undefined || header.length < 55) return undefined;
  const m = TRACEPARENT.exec(header);
  if (!m) return undefined;
  const [, version, traceId, parentId, flags] = m;
  if (version === 'ff' || (version === '00' ? header.length !== 55 : header.length > 55 && header.charCodeAt(55) !== 45)) return undefined;
  if (ZEROS.test(traceId!) || ZEROS.test(parentId!)) return undefined;
  return { header: version === '00' ? header : `00-${traceId}-${parentId}-${flags}`, traceId: traceId! };
}

/** What a request did, once answered: what the sinks get. Never a payload, a token or a header's value beyond the id and trace. */
export interface RequestSummary {
  /** Unix ms when the request arrived. */
  time: number;
  /** The id minted for the request: echoed as X-Request-Id and sent on to the gateway. */
  id: string;
  /** The caller's X-Request-Id when sane (at the gateway: the producer's id), else undefined. */
  callerId: string | undefined;
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
  /** What a refusal stands for when its answer says less (a webhook's), for the operator. */
  reason: string | undefined;
  /** Request body bytes read. */
  bytes: number;
  /** A cron schedule's fire (functions/producer/cron-fire.ts): the schedule's name. */
  schedule?: string | undefined;
  noscript: number;
  transient: number;
  retries: number;
  pipelines: number;
  pipelineCommands: number;
}

/** Gets each request's summary once it is answered (a request log, the metrics). */
export type SummarySink = (summary: RequestSummary) => void;

/** The request's running record; also the observer its calls report to (and, through it, the process's). */
export class RequestRecord implements Observer {
  readonly time = Date.now();
  private readonly started = performance.now();
  queue: string | undefined;
  code: string | undefined;
  reason: string | undefined;
  bytes = 0;
  readonly counts = { noscript: 0, transient: 0, retries: 0, pipelines: 0, pipelineCommands: 0 };
  private readonly calls = new Map<string, { script: string; verdict: string; code: string; count: number }>();

  constructor(
    readonly id: string,
    readonly trace: { header: string; traceId: string } | undefined,
    private readonly process: Observer | undefined,
    readonly callerId?: string,
  ) {}

  /** The headers its calls carry over REST. */
  get headers(): Record<string, string> {
    return this.trace ? { 'X-Request-Id': this.id, traceparent: this.trace.header } : { 'X-Request-Id': this.id };
  }

  script(script: Script, outcome: Outcome, keys: readonly string[], args?: readonly Arg[]): void {
    // a gateway's caller may send any key: only a queue-like tag reaches the log
    const queue = this.queue === undefined ? queueOfKey(keys[0]) : undefined;
    if (queue !== undefined && QUEUE_SHAPE.test(queue)) this.queue = queue;
    const { verdict, code = '' } = verdictOf(script, outcome, args);
    const key = `${script.name} ${verdict} ${code}`;
    const seen = this.calls.get(key) ?? { script: script.name, verdict, code, count: 0 };
    seen.count++;
    this.calls.set(key, seen);
    this.process?.script?.(script, outcome, keys, args);
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

  /**
   * What the request did, once answered: `route` is the pattern that served it, `routeQueue`
   * the queue its route named (used when no script call named one).
   */
  summary(method: string, route: string, status: number, routeQueue?: string): RequestSummary {
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
      callerId: this.callerId,
      traceId: this.trace?.traceId,
      method,
      route,
      status,
      ms: Math.round((performance.now() - this.started) * 1000) / 1000,
      queue: this.queue ?? (routeQueue !== undefined && QUEUE_SHAPE.test(routeQueue) ? routeQueue : undefined),
      verdicts,
      calls,
      code: this.code,
      reason: this.reason,
      bytes: this.bytes,
    };
  }
}

/**
 * A new request's record: a minted id whatever the caller sent (a caller must not choose the
 * id another request's lines carry), the caller's id when sane, its traceparent as version 00.
 */
export function startRequest(callerId: string | undefined, traceparent: string | undefined, observer: Observer | undefined): RequestRecord {
  return new RequestRecord(mintRequestId(), traceparentOf(traceparent), observer, saneRequestId(callerId));
}

/** Hands `summary` to each sink; a sink that throws is ignored (a sink never fails a request). */
export function tell<A extends unknown[]>(sinks: ReadonlyArray<(summary: RequestSummary, ...rest: A) => void>, summary: RequestSummary, ...rest: A): void {
  for (const sink of sinks) {
    try {
      sink(summary, ...rest);
    } catch {
      // ignored
    }
  }
}
