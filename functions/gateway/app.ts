// The gateway's routes: Upstash's REST protocol in front of Valkey.
//   POST /               one JSON command            → {"result"} | 400 {"error"}
//   POST /pipeline       JSON commands, in order      → [{"result"} | {"error"}, ...]
//   POST /multi-exec     JSON commands, atomically    → the same, or 400 {"error"} if aborted
//   GET|POST /<cmd>/...  path-style; a POST body is the last argument, raw
//   GET /healthz, GET /readyz; GET /metrics (with EMQ_METRICS_TOKEN, functions/http/metrics.ts)
// Authorization: Bearer <token> (or ?_token=<token> when queryToken is on).
// A node:http request listener: no Request or Response objects and no router in between, as
// this is every job's hop. Routes are matched on the path as a URL reads it (dot segments
// resolved, percent-decoded: functions/http/node-request.ts), commands read from the path as
// sent. Each request has its record (functions/http/request-record.ts): its id minted and
// echoed in X-Request-Id (the producer's X-Request-Id logged beside it, to join the two hops'
// lines), and its summary (route pattern: routeOf) to the sinks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getQueryParam } from 'hono/utils/url';
import type { Arg, Outcome, WaitFor } from '../../shared/connection.js';
import { WireMismatchError } from '../../shared/errors.js';
import { publicFound } from '../../shared/fence.js';
import type { Script } from '../../shared/scripts.js';
import { BadCommand, jsonCommand, jsonCommands, pathCommand } from './args.js';
import { ARG_ENCODING, DECODED, decodeCommands, wantsBase64 } from './base64-args.js';
import { type Caps, overCaps } from './count.js';
import { Unavailable, type Backend } from './backend.js';
import type { Observer } from '../../shared/observe.js';
import { ClientClosed, TooLarge } from '../http/body.js';
import { readIncoming } from '../http/incoming.js';
import { VALID_HOST, authorizationOf, targetOf } from '../http/node-request.js';
import { type MetricsEndpoint, pathOf, serveMetrics } from '../http/metrics.js';
import { type RequestRecord, type SummarySink, startRequest, tell } from '../http/request-record.js';
import { noteOutcomes } from './observe.js';
import { createPolicy } from './policy.js';
import { producerCaps } from './script-calls.js';
import { ScriptFlags } from './script-flags.js';
import { bodyOf, integerText } from './reply.js';
import type { Scope, GatewayTokens } from './tokens.js';
import { waitOf, writtenKeys } from './wait.js';

export interface GatewayOptions {
  backend: Backend;
  tokens: GatewayTokens;
  /** The scripts a producer token may run, and a control token. */
  scripts: readonly Script[];
  /** Those of `scripts` only a control token may run (default: none). */
  control?: readonly Script[] | undefined;
  /** Largest request body, in bytes; refused with 413 as it streams in. */
  maxBodyBytes?: number;
  /**
   * Largest body a producer token may send (never above maxBodyBytes): its largest honest
   * request is a path-style enqueue of one payload or a REST pipeline, each 1 MiB by default.
   */
  producerMaxBodyBytes?: number;
  /** Most commands in one /pipeline or /multi-exec request. */
  maxPipeline?: number;
  /**
   * Most elements (command names and arguments) in one admin request, counted before it is
   * parsed; a producer token's caps are its largest honest calls' (script-calls.ts).
   */
  adminMaxArgs?: number;
  /** The longest WAIT one request's Emq-Wait may ask for, in ms (EMQ_GATEWAY_WAIT_MAX_MS); a longer one is cut to it. */
  waitMaxMs?: number;
  /** Seconds a client should wait after a 503. */
  retryAfterSeconds?: number;
  /** True once the process is draining: new requests get 503. */
  draining?: () => boolean;
  /**
   * Accept a token in the URL (`?_token=`), as Upstash does; off by default, since URLs end
   * up in proxy and access logs. Off, a request carrying `_token` is refused whatever it holds.
   */
  queryToken?: boolean;
  /** Request ids, and each request's summary to the sinks (a log line, the metrics); off when absent. */
  observe?: {
    /** Told of every relayed script call, NOSCRIPT and pipeline (the process's counters). */
    observer?: Observer | undefined;
    sinks: readonly SummarySink[];
  };
  /**
   * GET /metrics (metricsEndpoint), answered before anything else and neither logged nor
   * counted; absent, /metrics is a 404 (it is the gateway's, not a path-style command).
   */
  metrics?: MetricsEndpoint | undefined;
}

/** The gateway as a node:http (or https) request listener. */
export type GatewayListener = (req: IncomingMessage, res: ServerResponse) => void;

/** An answer: a status, a JSON body (and its text, when made already), and headers beyond Content-Type. */
interface Answer {
  status: 200 | 400 | 401 | 403 | 404 | 405 | 413 | 499 | 503;
  body: unknown;
  text?: string | undefined;
  headers?: Record<string, string>;
}

const answer = (body: unknown, status: Answer['status'] = 200, headers?: Record<string, string>): Answer =>
  headers ? { status, body, headers } : { status, body };

/**
 * The request target's URL, routed path and raw path; undefined when it is not a valid target
 * (400). Origin-form only. A path of two segments or more, without a query, dot segments
 * (percent-encoded dots too: the URL parser resolves them) or backslashes, is no route's (every
 * route is one segment; decoding makes no '/'), so its path is taken as sent: every
 * path-style command (every enqueue) is one.
 */
function gatewayTarget(req: IncomingMessage): { url: string; path: string; raw: string } | undefined {
  const target = req.url ?? '';
  if (target.charCodeAt(0) !== 47) return undefined;
  const host = req.headers.host ?? 'localhost';
  const query = target.indexOf('?');
  const raw = query < 0 ? target : target.slice(0, query);
  if (query < 0 && raw.indexOf('/', 1) > 0 && VALID_HOST.test(host) && !raw.includes('\\') && !ANY_DOT_SEGMENT.test(raw)) {
    return { url: target, path: raw, raw };
  }
  const parsed = targetOf(req);
  return parsed && { ...parsed, raw };
}

// a dot segment as the URL parser reads it, percent-encoded dots included (/%2e%2e/healthz is /healthz)
const ANY_DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/** A header node:http joined (every occurrence, ', ' between, as Fetch reads them). */
const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

/**
 * The request's route pattern (the log line's and the metrics' route, a bounded set): GET /healthz
 * and /readyz (HEAD as GET), POST /, /pipeline and /multi-exec, and /* for every other method
 * and path.
 */
function routeOf(method: string | undefined, path: string): string {
  if (method === 'POST') return path === '/' || path === '/pipeline' || path === '/multi-exec' ? path : '/*';
  if (method === 'GET' || method === 'HEAD') return path === '/healthz' || path === '/readyz' ? path : '/*';
  return '/*';
}

export function createGateway({
  backend,
  tokens,
  scripts,
  control,
  maxBodyBytes = 8 * 1024 * 1024,
  producerMaxBodyBytes = 2 * 1024 * 1024,
  maxPipeline = 10_000,
  adminMaxArgs = 100_000,
  retryAfterSeconds = 1,
  waitMaxMs = 1_000,
  draining = () => false,
  queryToken = false,
  observe,
  metrics,
}: GatewayOptions): GatewayListener {
  const policy = createPolicy(scripts, control);
  // the admin scope's scripts with flags the server does not know (Upstash's clients'); the
  // producer and control scopes run only this project's scripts, which carry no shebang
  const flags = new ScriptFlags();
  // read after authentication, so a request without a token never has its body read
  const capOf = (scope: Scope) => (scope !== 'admin' ? Math.min(producerMaxBodyBytes, maxBodyBytes) : maxBodyBytes);
  const retryAfter = { 'Retry-After': String(retryAfterSeconds) };
  // each scope's element caps for POST / (one command) and /pipeline, /multi-exec (commands)
  const producer = producerCaps(scripts, control);
  const producing = [1, 2].map((level) => ({ level, commands: maxPipeline, ...producer })) as [Caps, Caps];
  const capsOf = {
    producer: producing,
    control: producing,
    admin: [1, 2].map((level) => ({ level, commands: maxPipeline, perCommand: adminMaxArgs, total: adminMaxArgs })) as [Caps, Caps],
  };

  const unavailable = (why: string) => answer({ error: `Valkey is unavailable: ${why}` }, 503, retryAfter);

  // `{emq}:version` holds another wire version: the producer scope waits, the admin scope
  // may still look (and fix it)
  const mismatched = (err: WireMismatchError) =>
    answer({ error: err.message, code: 'wire_mismatch', expected: err.expected, found: err.found }, 503, retryAfter);

  /** A failure as its answer; `cap` is the body cap the request was read under. */
  const failure = (err: unknown, req: IncomingMessage, path: string, cap: number): Answer => {
    if (err instanceof Unavailable) return unavailable(err.message);
    if (err instanceof WireMismatchError) return mismatched(err);
    if (err instanceof BadCommand) return answer({ error: `ERR ${err.message}` }, 400);
    // the client's outcome (nginx's 499): no stack, not a 5xx; the answer reaches no one
    if (err instanceof ClientClosed) return answer({ error: `ERR ${err.message}` }, 499);
    if (err instanceof SyntaxError) return answer({ error: 'ERR the body is not valid JSON' }, 400);
    // the rest of a body read in part is left unread: the connection cannot carry another request
    if (err instanceof TooLarge)
      return answer({ error: `ERR the request body is larger than ${cap} bytes` }, 413, err.partly ? { Connection: 'close' } : undefined);
    console.error(`gateway: ${req.method} ${path}: ${(err as Error).stack ?? String(err)}`);
    return answer({ error: 'ERR internal error in the gateway' }, 400);
  };

  // /readyz needs no token: ready or not and a stable reason, never Valkey's or glide's words
  // (an address, the user); a wire mismatch names both versions, as the fence asks
  const notReady = (reason: string, more: Record<string, string> = {}) => answer({ status: 'unavailable', reason, ...more }, 503, retryAfter);

  const readyz = async (): Promise<Answer> => {
    try {
      const pong = await backend.command('producer', ['PING']);
      if (!pong.ok) return notReady('valkey_refused');
      await backend.admit();
      return answer({ status: 'ready' });
    } catch (err) {
      if (err instanceof Unavailable) return notReady('valkey_unreachable');
      if (!(err instanceof WireMismatchError)) {
        console.error(`gateway: /readyz: ${(err as Error).stack ?? String(err)}`);
        return notReady('internal');
      }
      const found = publicFound(err.found);
      const error = new WireMismatchError(err.expected, found).message;
      return notReady('wire_mismatch', { error, code: 'wire_mismatch', expected: err.expected, found });
    }
  };

  /** The scope the request's token carries, or the 401 to answer. */
  const authenticate = (req: IncomingMessage, url: string): Scope | Answer => {
    const header = authorizationOf(req);
    const bearer = header && /^bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const inUrl = url.includes('?') ? getQueryParam(url, '_token') : undefined;
    if (inUrl !== undefined && !queryToken) {
      return answer(
        { error: 'Unauthorized: a token in the URL (?_token=) is off on this gateway (EMQ_GATEWAY_QUERY_TOKEN); send Authorization: Bearer <token>' },
        401,
      );
    }
    const presented = bearer || (inUrl as string | undefined);
    const scope = presented ? tokens.scopeOf(presented) : undefined;
    return scope ?? answer({ error: 'Unauthorized: send Authorization: Bearer <token>' }, 401);
  };

  const notAllowed = (method: string | undefined) => answer({ error: `ERR method ${method} is not allowed; use GET or POST` }, 405, { Allow: 'GET, POST' });

  /** The first command the scope may not run, as an answer; nothing is executed then. */
  const refuse = (scope: Scope, commands: ReadonlyArray<readonly Arg[]>): Answer | undefined => {
    for (const args of commands) {
      const why = policy.refusal(scope, args);
      if (why) return answer({ error: why[1] }, why[0]);
    }
    return undefined;
  };

  /**
   * The first command the server does not know, as a 400; nothing is sent then (Valkey would
   * echo its bytes in an error reply). Asked for the admin scope only: a producer may send only
   * PING, EVAL and EVALSHA, and its Valkey user need not be allowed COMMAND.
   */
  const unknown = async (commands: ReadonlyArray<readonly Arg[]>): Promise<Answer | undefined> => {
    const name = await backend.unknownCommand(commands);
    if (name === undefined) return undefined;
    return answer({ error: `ERR unknown command '${name}': the server has no such command, so it was not sent` }, 400);
  };

  /** Every check before a command runs: the policy, then (admin) the command table. */
  const checked = async (scope: Scope, commands: ReadonlyArray<readonly Arg[]>) =>
    refuse(scope, commands) ?? (scope === 'admin' ? await unknown(commands) : undefined);

  /**
   * The producer scope's calls wait for the `{emq}:version` fence; the admin scope's do not (an
   * operator may need them to fix the key). After the checks, so that a refusal stays a
   * refusal while Valkey is down.
   */
  const fence = (scope: Scope) => (scope !== 'admin' ? backend.admit() : undefined);

  /**
   * An answer to a request that asked Emq-Wait: the WAITs after its written slots (none written:
   * nothing to wait for), and how many replicas confirmed, the fewest, as Emq-Wait-Replicas.
   */
  const waited = async (scope: Scope, wait: WaitFor | undefined, commands: ReadonlyArray<readonly Arg[]>, outcomes: readonly Outcome[], a: Answer) => {
    if (!wait) return a;
    const keys = writtenKeys(commands, outcomes);
    const got = keys.length === 0 ? wait.replicas : await backend.replicas(scope, keys, wait);
    a.headers = { ...a.headers, 'Emq-Wait-Replicas': String(got) };
    return a;
  };

  const single = async (scope: Scope, args: Arg[], base64: boolean, record: RequestRecord | undefined, wait?: WaitFor): Promise<Answer> => {
    const refused = scope === 'admin' ? await checked(scope, [args]) : refuse(scope, [args]);
    if (refused) return refused;
    const held = fence(scope); // no promise at all while the fence was read lately
    if (held) await held;
    const flagged = scope === 'admin' ? flags.rewrite([args]) : undefined;
    const sent = flagged ? flagged.commands[0]! : args;
    let outcome = await backend.command(scope, sent);
    if (flagged) outcome = flagged.outcomes([outcome])[0]!;
    noteOutcomes(record, 'single', [sent], [outcome]);
    const body = bodyOf(outcome, base64);
    return waited(scope, wait, [sent], [outcome], { status: 'error' in body ? 400 : 200, body, text: integerText(body) });
  };

  // JSON is UTF-8: a body that is not would be altered by decoding, so it is refused
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const readJson = async (req: IncomingMessage, cap: number, record: RequestRecord | undefined, caps: Caps) => {
    const bytes = await readIncoming(req, cap, record);
    const over = overCaps(bytes, caps);
    if (over !== undefined) throw new BadCommand(over);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new BadCommand('the body is not valid UTF-8, so it is not JSON; send bytes path-style as a POST body');
    }
    return JSON.parse(text) as unknown;
  };

  /** /pipeline (outcomes one by one) and /multi-exec (one transaction). */
  const many = async (
    scope: Scope,
    commands: Arg[][],
    base64: boolean,
    atomic: boolean,
    record: RequestRecord | undefined,
    wait?: WaitFor,
  ): Promise<Answer> => {
    const refused = await checked(scope, commands);
    if (refused) return refused;
    const held = fence(scope);
    if (held) await held;
    const flagged = scope === 'admin' ? flags.rewrite(commands) : undefined;
    const sent = flagged ? flagged.commands : commands;
    if (!atomic) {
      let outcomes = await backend.pipeline(scope, sent);
      if (flagged) outcomes = flagged.outcomes(outcomes);
      noteOutcomes(record, 'pipeline', sent, outcomes);
      return waited(scope, wait, sent, outcomes, answer(outcomes.map((o) => bodyOf(o, base64))));
    }
    let outcomes = await backend.transaction(scope, sent);
    if (flagged) outcomes = flagged.outcomes(outcomes);
    noteOutcomes(record, 'multi_exec', sent, outcomes);
    if (!Array.isArray(outcomes)) return answer(bodyOf(outcomes as Outcome, false), 400);
    return waited(scope, wait, sent, outcomes, answer(outcomes.map((o) => bodyOf(o, base64))));
  };

  /** The answer to an authenticated request. */
  const route = async (req: IncomingMessage, scope: Scope, path: string, raw: string, record: RequestRecord | undefined): Promise<Answer> => {
    const method = req.method;
    const encoding = req.headers['upstash-encoding'];
    const base64 = typeof encoding === 'string' && encoding.toLowerCase() === 'base64';
    const cap = capOf(scope);
    if (method === 'POST') {
      const [one, some] = capsOf[scope];
      // Emq-Wait: the producer and control scopes' writes, on the connection they share (an
      // admin request may go on a connection of its own: alone.ts)
      const wait = waitOf(req, waitMaxMs);
      if (wait && scope === 'admin') throw new BadCommand('Emq-Wait is for producer and control tokens');
      if (path === '/' || path === '/pipeline' || path === '/multi-exec') {
        const binary = wantsBase64(req.headers[ARG_ENCODING]);
        const alone = path === '/';
        const json = await readJson(req, cap, record, alone ? one : some);
        const commands = alone ? [jsonCommand(json)] : jsonCommands(json, maxPipeline);
        if (binary) decodeCommands(commands);
        const answered = alone
          ? await single(scope, commands[0]!, base64, record, wait)
          : await many(scope, commands, base64, path === '/multi-exec', record, wait);
        if (binary) answered.headers = answered.headers ? { ...answered.headers, ...DECODED } : DECODED;
        return answered;
      }
      return single(scope, pathCommand(raw, await readIncoming(req, cap, record), one.perCommand), base64, record, wait);
    }
    // HEAD would run the command as a GET does: it is refused (405)
    if (method === 'GET') return single(scope, pathCommand(raw, undefined, capsOf[scope][0].perCommand), base64, record);
    return notAllowed(method);
  };

  const sinks = observe?.sinks ?? [];
  const respond = (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    record: RequestRecord | undefined,
    { status, body, text: made, headers }: Answer,
  ) => {
    const text = made ?? JSON.stringify(body);
    // no spread when there is nothing to add (most answers): a literal V8 builds on its fast path
    const head: Record<string, string | number> = headers ? { 'Content-Type': 'application/json', ...headers } : { 'Content-Type': 'application/json' };
    // a HEAD's answer (the probes') carries no Content-Length: it has no body
    if (req.method !== 'HEAD') head['Content-Length'] = Buffer.byteLength(text);
    if (record) head['X-Request-Id'] = record.id;
    // a request that was in flight when draining began: its client must not reuse the socket
    if (draining()) head.Connection = 'close';
    const summary = record?.summary(req.method!, routeOf(req.method, path), status);
    res.writeHead(status, head);
    res.end(text);
    if (summary) tell(sinks, summary);
  };

  /** GET /metrics: in front of everything else, neither logged nor counted; off, a 404 (it is no path-style command). */
  const metricsOf = (req: IncomingMessage, res: ServerResponse) => {
    if (metrics) return serveMetrics(req, res, metrics, authorizationOf(req), 'gateway');
    const body = JSON.stringify({ error: 'ERR no such route' });
    res.writeHead(404, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  };

  return (req, res) => {
    const target = gatewayTarget(req);
    if (!target) {
      res.writeHead(400, { 'Content-Length': 0 }).end();
      return;
    }
    const { url, path, raw } = target;
    // the path of the URL, undecoded (a path of two segments or more is the target as sent)
    if (url.charCodeAt(0) !== 47 && pathOf(url) === '/metrics') return metricsOf(req, res);
    const record = observe && startRequest(header(req.headers['x-request-id']), header(req.headers.traceparent), observe.observer);
    if (draining()) return respond(req, res, path, record, path === '/readyz' ? notReady('draining') : unavailable('the gateway is shutting down'));
    const method = req.method;
    if ((method === 'GET' || method === 'HEAD') && (path === '/healthz' || path === '/readyz')) {
      if (path === '/healthz') return respond(req, res, path, record, answer({ status: 'ok' }));
      void readyz().then((a) => respond(req, res, path, record, a));
      return;
    }
    const scope = authenticate(req, url);
    if (typeof scope !== 'string') return respond(req, res, path, record, scope);
    route(req, scope, path, raw, record).then(
      (a) => respond(req, res, path, record, a),
      (err: unknown) => {
        if (record && err instanceof ClientClosed) record.code = 'client_closed'; // the log line's code
        respond(req, res, path, record, failure(err, req, path, capOf(scope)));
      },
    );
  };
}
