// The producer without a web framework: one function from a request (call.ts's RequestView) to
// its answer, for the routes in routes.ts. It keeps each request's record (its id, echoed as
// X-Request-Id; its log line and metrics: functions/http/request-record.ts), checks the caller
// of every route that names a queue, and answers every error as a problem document
// (problem.ts, error-problems.ts). The adapters only translate: hono-app.ts (the Worker, and
// the app users mount) and node-http.ts (`emq producer`).
import { createMinter, drawNode, type Connection, type Minter } from '../../shared/index.js';
import type { Observer } from '../../shared/observe.js';
import { type RequestSummary, startRequest, tell } from '../http/request-record.js';
import { headersOf, type Answer, type Call, type RequestView, type Route, type Service } from './call.js';
import type { Config } from './config.js';
import { reportedProblem } from './error-problems.js';
import { Problem, problemHeaders, problemJson } from './problem.js';
import { ROUTES } from './routes.js';
import { DEFAULT_CAN, type Caller } from './tokens.js';

/** Gets each request's summary once it is answered, with the request's env (the Worker's bindings). */
export type RequestSink = (summary: RequestSummary, env: unknown) => void;

export interface CoreOptions {
  /** The configuration, or the error that made it; a bad one answers 500 misconfigured. */
  config: () => Config;
  /** The connection that takes a queue's jobs (its home region's, with regions); no queue: the local one. */
  connection: (queue?: string) => Connection;
  /** The region that takes a queue's jobs, answered as Emq-Region; none without regions. */
  regionOf?: ((queue: string) => string | undefined) | undefined;
  /** The minter for ids this producer mints; default: one on the configured node id (EMQ_NODE_ID / EMQ_NODE_IDS). */
  minter?: Minter | undefined;
  /** Who is calling a route that names a queue, or undefined for 401; default: the bearer token, one of EMQ_TOKENS. */
  caller?: ((request: RequestView) => Caller | undefined | Promise<Caller | undefined>) | undefined;
  /** Told of every call of every request (the process's counters), and the sinks each request's summary goes to. */
  observe?: { observer?: Observer | undefined; sinks: readonly RequestSink[] } | undefined;
  /** Run first on every request, with its env: a throw is its answer (the Worker's EMQ_ANALYTICS binding check). */
  precheck?: ((env: unknown) => void) | undefined;
}

export interface ProducerCore {
  readonly routes: readonly Route[];
  /** The route for a method (HEAD is matched as GET) and path, and its parameters as sent; undefined: 404. */
  match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined;
  /** The answer to `request` by `route` (undefined: no route, 404); never rejects. */
  serve(route: Route | undefined, request: RequestView): Promise<Answer>;
  /** The answer to a request that failed before a route ran (a middleware of the user's threw). */
  failed(request: RequestView, err: unknown): Answer;
}

/** A minter on the configured node id (EMQ_NODE_ID), else one drawn once from EMQ_NODE_IDS. */
export const minterOf = ({ nodeId, nodePool }: Config): Minter => createMinter({ node: nodeId ?? drawNode(nodePool) });

const BEARER = /^bearer\s+(\S+)\s*$/i;

export function createProducerCore({ config, connection, regionOf, minter: given, caller: own, observe, precheck }: CoreOptions): ProducerCore {
  const sinks = observe?.sinks ?? [];
  const settings = (): Config => {
    try {
      return config();
    } catch (err) {
      // the message names the variable, never a secret's value
      throw new Problem(500, 'misconfigured', (err as Error).message);
    }
  };
  // this producer's minter, on its configured node id (or one drawn from the pool once, at first use)
  let minter = given;
  const service: Service = {
    settings,
    mint() {
      minter ??= minterOf(settings());
      return minter();
    },
    regionOf: (queue) => regionOf?.(queue),
    connection,
  };

  const bearer = (request: RequestView): Caller | undefined => {
    const { tokens } = settings();
    if (!tokens) throw new Problem(500, 'misconfigured', 'EMQ_TOKENS was not read (configFrom with tokens: false) and the app was given no caller');
    const header = request.header('Authorization');
    const token = header && BEARER.exec(header)?.[1];
    return token ? tokens.callerOf(token) : undefined;
  };
  const unknown = own ? 'this request has no caller' : 'send Authorization: Bearer <token> with a token from EMQ_TOKENS';

  const problemAnswer = (call: Call, p: Problem): Answer => {
    call.record.code = p.code; // the log line's and the data points' code
    return { status: p.status, headers: headersOf(call, 'application/problem+json', problemHeaders(p)), body: problemJson(p) };
  };

  /** The answer's X-Request-Id, then the request's summary to the sinks. */
  const done = (call: Call, route: string, answer: Answer, queue: string | undefined): Answer => {
    const { record, request } = call;
    answer.headers['X-Request-Id'] = record.id;
    tell(sinks, record.summary(request.method, route, answer.status, queue), request.env);
    return answer;
  };

  const start = (request: RequestView): Call => {
    const record = startRequest(request.header('X-Request-Id'), request.header('traceparent'), observe?.observer);
    return { request, record, caller: undefined as unknown as Caller, headers: {} };
  };

  const serve = async (route: Route | undefined, request: RequestView): Promise<Answer> => {
    const call = start(request);
    let queue: string | undefined;
    let answer: Answer;
    try {
      precheck?.(request.env);
      if (!route) throw new Problem(404, 'not_found', `no route ${request.method} ${request.path}`);
      if (route.auth) {
        const caller = own ? await own(request) : bearer(request);
        if (!caller) throw new Problem(401, 'unauthorized', unknown);
        const { needs } = route;
        if (needs && !(caller.can ? caller.can(needs) : DEFAULT_CAN.includes(needs))) {
          throw new Problem(
            403,
            'forbidden_action',
            `this token may not ${needs === 'control' ? 'act on jobs, lanes or queues' : needs}: its "can" lacks "${needs}"`,
          );
        }
        call.caller = caller;
        queue = request.param('queue'); // the log line's queue, once a caller may name it
      }
      answer = await route.handle(call, service);
    } catch (err) {
      answer = problemAnswer(call, reportedProblem(err, request.method, request.path, call.record.id));
    }
    return done(call, route ? route.name : 'unmatched', answer, queue);
  };

  const failed = (request: RequestView, err: unknown): Answer => {
    const call = start(request);
    return done(call, 'unmatched', problemAnswer(call, reportedProblem(err, request.method, request.path, call.record.id)), undefined);
  };

  return { routes: ROUTES, match: matcher(ROUTES), serve, failed };
}

/** A route's pattern as segments: a literal, a parameter (`:name`), or the rest (`*`, last). */
type Segment = { literal: string } | { param: string } | { rest: true };

/** Matches routes by method and path segments, first match first (the table's order). */
function matcher(routes: readonly Route[]): ProducerCore['match'] {
  const compiled = routes.map((route) => ({
    route,
    segments: route.pattern
      .split('/')
      .slice(1)
      .map((s): Segment => (s === '*' ? { rest: true } : s.startsWith(':') ? { param: s.slice(1) } : { literal: s })),
  }));
  return (method, path) => {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const parts = path.split('/').slice(1);
    next: for (const { route, segments } of compiled) {
      if (route.method !== 'ALL' && route.method !== wanted) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i]!;
        if ('rest' in segment) return { route, params }; // `/v1/*` is /v1 and anything under it
        const part = parts[i];
        if (part === undefined) continue next;
        if ('literal' in segment) {
          if (part !== segment.literal) continue next;
        } else if (part === '') continue next;
        else params[segment.param] = part;
      }
      if (parts.length === segments.length) return { route, params };
    }
    return undefined;
  };
}
