// Each request's record (request-record.ts) in front of a Hono app, for its log line, the
// metrics and the Worker's data points: its id (minted, echoed; a sane X-Request-Id logged
// beside it), its W3C traceparent as version 00, its route pattern, and what the core did for it
// (shared/observe.ts). `observeRequests()` makes the record and hands the finished summary to
// sinks; `forRequest()` gives a request's calls the record as observer and its id and
// traceparent as headers (over REST, the gateway logs that id as its callerRequestId). Runtime-agnostic: the
// Worker and the producer's Node server use it (the gateway, a node:http listener, uses
// request-record.ts directly).
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Connection } from '../../shared/connection.js';
import { type Observer, scoped } from '../../shared/observe.js';
import { type RequestRecord, type RequestSummary, startRequest, tell } from './request-record.js';

export { mintRequestId, RequestRecord, type RequestSummary, type SummarySink, saneRequestId, traceparentOf } from './request-record.js';

export type RequestSink = (summary: RequestSummary, c: Context) => void;

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

/** Notes what a refusal stands for, when its answer says less (a webhook's): the log line's `reason`. */
export function noteReason(c: Context, reason: string): void {
  const record = records.get(c);
  if (record) record.reason = reason;
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

export interface ObserveOptions {
  /** Told of every call of every request (the process's counters); optional. */
  observer?: Observer | undefined;
  /** Each gets every request's summary once it is answered; a sink that throws is ignored. */
  sinks: ReadonlyArray<RequestSink>;
}

/**
 * Middleware, first in the app: gives the request a minted id (a sane X-Request-Id is kept
 * as the caller's) and echoes it, keeps a traceparent as version 00, and once answered hands its summary to
 * each sink. Bounded work before any authentication: one header test, one id.
 */
export function observeRequests({ observer, sinks }: ObserveOptions): MiddlewareHandler {
  return async function observeRequests(c, next) {
    const record = startRequest(c.req.header('X-Request-Id'), c.req.header('traceparent'), observer);
    records.set(c, record);
    try {
      await next();
    } finally {
      try {
        c.res.headers.set('X-Request-Id', record.id);
      } catch {
        // a response with immutable headers keeps them
      }
      // the route's :queue, when the handler that answered has one
      tell(sinks, record.summary(c.req.method, routeOf(c), c.res.status, c.req.param('queue')), c);
    }
  };
}
