// The Worker's fetch for POST /v1/queues/:queue/jobs, every job's way in: answered with the
// app's own steps (JobRoute, app.ts) and no router, context or middleware chain in between
// (Hono's share of the isolate's CPU per job). The answer is the app's, byte for byte: its
// status, body, headers in the order the app sets them, X-Request-Id, the log line and data
// points through the same sinks. Every other request, and a job request this path would not
// answer exactly as the app does (no or an unknown token, a refused queue or header, a
// declared body over the cap, a misbound EMQ_ANALYTICS, a misconfiguration, a path Hono
// would decode), goes to the app before its body is read, and is answered there as ever.
import { type RequestRecord, type RequestSummary, startRequest, tell } from '../http/request-record.js';
import { datasetOf } from './analytics.js';
import type { JobRoute } from './app.js';
import { reportedProblem } from './error-problems.js';
import { type Problem, problemHeaders, problemJson } from './problem.js';

export type WorkerFetch = (request: Request, env?: unknown, ctx?: unknown) => Response | Promise<Response>;

/** Gets each answered job request's summary and the request's env (the log line, the data points). */
export type JobSink = (summary: RequestSummary, env: unknown) => void;

const ROUTE = '/v1/queues/:queue/jobs';
// A path Hono reads as it is sent: no percent-escape to decode, no query or fragment. (A
// Request's url is already parsed: no dot segment or backslash is left in it.)
const JOBS = /^\/v1\/queues\/([^/%?#]+)\/jobs$/;

/** A request header, undefined when absent (as Hono's c.req.header gives it). */
const headerOf = (headers: Headers, name: string): string | undefined => headers.get(name) ?? undefined;

/** `fallback` (the app's fetch) behind the job path. */
export function jobFetch(jobs: JobRoute, sinks: readonly JobSink[], fallback: WorkerFetch): WorkerFetch {
  // module-level helpers and unnamed callbacks only: the bundle keeps function names, which
  // costs a defineProperty for each named closure made per request
  return (request, env, ctx) => {
    if (request.method !== 'POST') return fallback(request, env, ctx);
    const url = request.url;
    // the path as Hono's getPath takes it: from the first '/' after the scheme's "://"
    const path = url.slice(url.indexOf('/', url.indexOf(':') + 4));
    const match = JOBS.exec(path);
    if (!match) return fallback(request, env, ctx);
    const headers = request.headers;
    const record = startRequest(headerOf(headers, 'X-Request-Id'), headerOf(headers, 'traceparent'), undefined);
    // each refusal before the body is read is the app's to answer (its checks, in its order)
    try {
      datasetOf(env as never);
    } catch {
      return fallback(request, env, ctx);
    }
    const taken = jobs.take(match[1]!, (name) => headers.get(name) ?? undefined, { headers: record.headers, observer: record });
    if (!taken) return fallback(request, env, ctx);
    const { caller, plan, region, valkey } = taken;
    const done: Done = { record, sinks, env, queue: plan.queue, region };
    return jobs
      .payload(request, plan, (bytes) => {
        record.bytes += bytes;
      })
      .then((payload) => jobs.admit(valkey, plan, caller, payload))
      .then(
        (admitted) => admittedResponse(done, path, admitted),
        (err: unknown) => problemResponse(done, reportedProblem(err, 'POST', path, record.id)),
      );
  };
}

/** What an answer needs beyond itself: the request's record, the sinks, the route's queue, its region. */
interface Done {
  record: RequestRecord;
  sinks: readonly JobSink[];
  env: unknown;
  queue: string;
  region: string | undefined;
}

/** As the route answers: Emq-Region, Location, then c.json's Content-Type. */
function admittedResponse(done: Done, path: string, { id, verdict }: { id: string; verdict: string }): Response {
  const head: Record<string, string> = done.region ? { 'Emq-Region': done.region } : {};
  head.Location = `${path}/${id}`;
  head['Content-Type'] = 'application/json';
  return answer(done, verdict === 'duplicate' ? 200 : 201, head, JSON.stringify({ id, queue: done.queue, verdict }));
}

/** As the app's onError answers (problemResponse): Emq-Region, the problem's own headers, Content-Type. */
function problemResponse(done: Done, p: Problem): Response {
  done.record.code = p.code;
  const head: Record<string, string> = done.region ? { 'Emq-Region': done.region } : {};
  for (const [name, value] of Object.entries(problemHeaders(p))) head[name] = value;
  head['Content-Type'] = 'application/problem+json';
  return answer(done, p.status, head, problemJson(p));
}

/** The answer with X-Request-Id last (observeRequests sets it on the app's), then its summary to the sinks. */
function answer({ record, sinks, env, queue }: Done, status: number, head: Record<string, string>, body: string): Response {
  // a record, not pairs: workerd converts it to Headers for less than an array of arrays
  head['X-Request-Id'] = record.id;
  const response = new Response(body, { status, headers: head });
  tell(sinks, record.summary('POST', ROUTE, status, queue), env);
  return response;
}
