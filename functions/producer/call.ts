// The shapes every producer route shares, with no web framework in them: the request as a
// route reads it (RequestView: an adapter makes one from a Hono context or a node:http
// request), the answer a route gives (Answer: an adapter writes it), and what a route is
// handed (Call, Service). The routes themselves: routes.ts; the dispatch: core.ts.
import type { Connection } from '../../shared/index.js';
import type { RequestRecord } from '../http/request-record.js';
import type { Config } from './config.js';
import type { Caller, Capability } from './tokens.js';

/** A request as the producer's routes read it. */
export interface RequestView {
  /** As sent (HEAD included: it is routed as GET and answered without a body). */
  readonly method: string;
  /** The path as routed (percent-decoded as Hono reads it), under any mount prefix the app has. */
  readonly path: string;
  /** A request header, any case; every occurrence joined with ', ' (as Fetch's Headers read them). */
  header(name: string): string | undefined;
  /** A parameter of the route's pattern (`:queue`, `:id`, `:source`), percent-decoded. */
  param(name: string): string | undefined;
  /** A query parameter's first value, decoded (`+` a space), or undefined. */
  query(name: string): string | undefined;
  /**
   * The body, read under the cap `max` (functions/http/body.ts's rules: TooLarge, ClientClosed);
   * `read.bytes` is added the bytes read, those of a body refused part way included.
   */
  body(max: number, read: { bytes: number }): Promise<Uint8Array>;
  /** The runtime's per-request environment (the Worker's bindings), for the sinks; else undefined. */
  readonly env?: unknown;
}

/** An answer: its status, its headers (Content-Type among them) and its body's text. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a route is handed: the request, its record (log line, metrics) and caller, the answer's headers so far. */
export interface Call {
  readonly request: RequestView;
  readonly record: RequestRecord;
  /** Who is calling; set before any route that names a queue runs (undefined on the others). */
  caller: Caller;
  /** Headers every answer to this request carries, a problem's too (Emq-Region once known). */
  readonly headers: Record<string, string>;
}

/** What the routes share beyond the request: the configuration, connections, ids. */
export interface Service {
  /** The configuration; a bad one throws 500 misconfigured (its message names the variable). */
  settings(): Config;
  /** A new job id from this producer's minter. */
  mint(): string;
  /** The region that takes a queue's jobs (Emq-Region); undefined without regions. */
  regionOf(queue: string): string | undefined;
  /** The connection that takes the queue's jobs (no queue: the local one), unscoped. */
  connection(queue?: string): Connection;
}

export type Handler = (call: Call, service: Service) => Promise<Answer>;

export interface Route {
  /** GET routes answer HEAD too; ALL: any method. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ALL';
  /** The path pattern: literal segments, `:name` (one segment, not empty), a final `*` (the rest, or nothing). */
  pattern: string;
  /** The route as the log line and the metrics name it. */
  name: string;
  /** Needs a caller (EMQ_TOKENS' bearer token, or the app's `caller`): 401 before the route runs. */
  auth: boolean;
  /** What the caller must be able to do (EMQ_TOKENS' `can`): 403 forbidden_action before the route runs. */
  needs?: Capability;
  handle: Handler;
}

/**
 * The answer's headers: the request's (Emq-Region), then `more`, then `type` as Content-Type.
 * Copied member by member into a new literal, not spread: adapters add to it (X-Request-Id,
 * Content-Length), and V8 extends a spread-made object on a slow path.
 */
export function headersOf(call: Call, type: string, more?: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in call.headers) headers[name] = call.headers[name]!;
  if (more) for (const name in more) headers[name] = more[name]!;
  headers['Content-Type'] = type;
  return headers;
}

/** A JSON answer, after the request's headers (Emq-Region) and `more` (Location). */
export function json(call: Call, status: number, value: unknown, more?: Record<string, string>): Answer {
  return { status, headers: headersOf(call, 'application/json', more), body: JSON.stringify(value) };
}
