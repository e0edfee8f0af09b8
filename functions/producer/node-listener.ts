// `emq producer`'s node:http listener. POST /v1/queues/:queue/jobs, every job's way in, is
// answered here, with no Request or Response objects and no router in between (measured: the
// same answer cost ~30 µs more CPU per request under Hono on @hono/node-server than on
// node:http; the process's CPU per job fell by about a quarter). Every other request, and a job
// request this listener would not answer exactly as the app does (no or an unknown token, a
// refused queue or header, a declared body over the cap, no Content-Length, a target the URL
// parser would rewrite...), goes to the app on @hono/node-server before its body is read, and
// is answered there as ever. The route's steps are the app's own (JobRoute, app.ts): one
// implementation of auth and parsing. Node only.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Observer } from '../../shared/observe.js';
import { readIncoming } from '../http/incoming.js';
import { VALID_HOST, VALID_TARGET, authorizationOf } from '../http/node-request.js';
import { type RequestRecord, type SummarySink, startRequest, tell } from '../http/request-record.js';
import type { JobRoute } from './app.js';
import { reportedProblem } from './error-problems.js';
import { problemHeaders, problemJson } from './problem.js';

export interface JobListenerOptions {
  jobs: JobRoute;
  /** The app on @hono/node-server (its getRequestListener): every request not taken here. */
  fallback: RequestListener;
  /** Told of every call (the process's counters), as observeRequests tells it. */
  observer?: Observer | undefined;
  /** The app's sinks (the log line, the metrics): each answered job request's summary. */
  sinks: readonly SummarySink[];
}

const ROUTE = '/v1/queues/:queue/jobs';
// A target Hono reads as it is sent: no percent-escapes to decode, no query, no dot segment,
// no backslash; and within @hono/node-server's own test for a target it need not parse.
const JOBS = /^\/v1\/queues\/([^/%?#\\]+)\/jobs$/;

/**
 * A request header as Fetch's Headers read it on @hono/node-server: every occurrence, joined
 * with ', '. node:http joins most repeated headers so already, but keeps only the first
 * Authorization (two tokens must be no token).
 */
function headerOf(req: IncomingMessage, name: string): string | undefined {
  if (name === 'authorization') return authorizationOf(req);
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Writes an answer as @hono/node-server wrote the app's: the header names lowercase and in
 * order (Fetch's Headers iterate so), then Content-Length.
 */
function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  const head: Record<string, string | number> = {};
  for (const name of Object.keys(headers).sort()) head[name] = headers[name]!;
  head['Content-Length'] = Buffer.byteLength(body);
  res.writeHead(status, head);
  res.end(body);
}

/** An answer that could not be written, as @hono/node-server handled one: a 500 if nothing was sent yet. */
function failed(res: ServerResponse, err: unknown): void {
  const error = err instanceof Error ? err : new Error('unknown error', { cause: err });
  console.error(err);
  if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
  res.end(`Error: ${error.message}`);
  res.destroy(error);
}

/** The listener: POST …/jobs taken here when it can be, everything else to `fallback`. */
export function jobListener({ jobs, fallback, observer, sinks }: JobListenerOptions): RequestListener {
  const header = (req: IncomingMessage) => (name: string) => headerOf(req, name.toLowerCase());

  const answer = (res: ServerResponse, record: RequestRecord, queue: string, status: number, headers: Record<string, string>, body: string) => {
    headers['x-request-id'] = record.id;
    const summary = record.summary('POST', ROUTE, status, queue);
    send(res, status, headers, body);
    tell(sinks, summary);
  };

  return (req, res) => {
    const target = req.url ?? '';
    const match = req.method === 'POST' ? JOBS.exec(target) : null;
    const host = req.headers.host;
    const length = req.headers['content-length'];
    if (
      !match ||
      host === undefined ||
      !VALID_HOST.test(host) ||
      !VALID_TARGET.test(target) ||
      match[1] === '.' ||
      match[1] === '..' ||
      length === undefined ||
      req.headers['transfer-encoding'] !== undefined
    ) {
      return fallback(req, res);
    }
    const record = startRequest(headerOf(req, 'x-request-id'), headerOf(req, 'traceparent'), observer);
    // every refusal before the body is read is the app's to answer (a record of its own, its log line)
    const taken = jobs.take(match[1]!, header(req), { headers: record.headers, observer: record });
    if (!taken) return fallback(req, res);
    const { caller, plan, region, valkey } = taken;
    const { queue } = plan;
    readIncoming(req, plan.maxPayloadBytes, record)
      .then((payload) => jobs.admit(valkey, plan, caller, payload))
      .then(
        ({ id, verdict }) => {
          const headers: Record<string, string> = { 'content-type': 'application/json', location: `${target}/${id}` };
          if (region) headers['emq-region'] = region;
          answer(res, record, queue, verdict === 'duplicate' ? 200 : 201, headers, JSON.stringify({ id, queue, verdict }));
        },
        (err: unknown) => {
          const p = reportedProblem(err, 'POST', target, record.id);
          record.code = p.code;
          const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
          if (region) headers['emq-region'] = region;
          for (const [name, value] of Object.entries(problemHeaders(p))) headers[name.toLowerCase()] = value;
          answer(res, record, queue, p.status, headers, problemJson(p));
        },
      )
      .catch((err: unknown) => failed(res, err));
  };
}
