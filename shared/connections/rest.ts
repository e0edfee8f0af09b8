// The REST connection: the Connection seam over Upstash's REST protocol, sending with fetch,
// so it runs on Workers, Node, Deno and Bun (on Node, through undici: rest-node.ts). Works
// against this project's gateway or Upstash.
//
// One enqueue is one request: path-style EVALSHA with the payload as the raw request body,
// so every byte travels as it is. A pipeline is one POST /pipeline of JSON commands (more
// past maxRequestBytes); JSON carries text, so where a call is not UTF-8 (or JSON would
// grow it past base64) the run goes with every argument in base64 (Emq-Arg-Encoding), which
// this project's gateway reads. A plain Upstash endpoint does not: there such a call goes
// alone, path-style. Which endpoint it is, is learned once, from the gateway's echo of that
// header. Every pipeline's requests are planned before the first is sent, and bounded
// (rest-encode.ts): a call that cannot fit is refused whole, nothing sent.
// Replies are asked for in base64 (Upstash-Encoding) and decoded to bytes.
import type { Connection, Outcome, Reply, RequestScope, ScanStep, ScriptCommand, WaitFor } from '../connection.js';
import type { Observer } from '../observe.js';
import {
  AuthError,
  ConnectionError,
  InvalidPayloadError,
  NotReplicatedError,
  ProtocolError,
  ServerError,
  TooLargeError,
  WireMismatchError,
} from '../errors.js';
import { fetchTransport, type RestAnswer, type RestTransport } from './rest-transport.js';
import { Encoded, MAX_PIPELINE_COMMANDS, planPipeline, runBody, singleBytes, singleOf, type Bounds, type Single } from './rest-encode.js';

export { MAX_PIPELINE_COMMANDS } from './rest-encode.js';
export { fetchTransport, type RestAnswer, type RestTransport } from './rest-transport.js';
import { printable } from '../fence.js';
import { allScripts, controlScripts, type Script } from '../scripts.js';
import { fromBase64 } from '../base64.js';
import { backoff, mayRetry, type RetryPolicy } from '../retry.js';
import { scanStepOf } from '../queue-list.js';

export interface RestOptions {
  /** The endpoint: the gateway's URL, or an Upstash database's REST URL. */
  url: string;
  token: string;
  /** One request's budget, in ms (each retry gets its own). */
  timeoutMs?: number;
  /** Retries after a transport failure or a 502/503/504, for idempotent scripts only. */
  retries?: number;
  /** The first retry's delay, in ms; it doubles, with jitter, and honours Retry-After. */
  backoffMs?: number;
  /**
   * Scripts safe to send again (each is keyed by its job id, or only reads). Default: all but
   * the control scripts, whose resend after a lost reply would answer for its first send's
   * work (a removal `absent`, a promotion `not_scheduled`): they fail once, and say so.
   */
  idempotent?: readonly Script[];
  /**
   * Largest /pipeline body, in bytes (default 1 MiB, Upstash's request limit): a longer
   * batch goes as several pipelines, in order. JSON can grow a payload up to 6x (a NUL is
   * `\u0000`), so a batch within the producer's caps could pass the gateway's.
   */
  maxRequestBytes?: number;
  /**
   * Largest body of any request, when the endpoint's limit is known (the gateway's producer
   * cap, EMQ_GATEWAY_PRODUCER_MAX_BODY, 2 MiB by default): a call that would pass it is refused,
   * and a pipeline that holds one is refused whole, nothing sent. Default: no bound here (the
   * endpoint's 413 refuses a request too large, as TooLargeError).
   */
  maxBodyBytes?: number;
  /** Most requests one pipeline may take (default: no bound; the producer's is 8); a longer one is refused, nothing sent. */
  maxRequests?: number;
  /** The fetch to send with (the global one by default). */
  fetch?: typeof fetch;
  /** How requests are sent, in place of `fetch` (on Node: undiciTransport, rest-node.ts). */
  transport?: RestTransport;
  /**
   * Calls run() in the same tick go as one /pipeline request (default: on), so the endpoint
   * sees batches even from one busy caller. Only where that changes nothing a call can see:
   * calls of `idempotent` scripts (a retry sends them again, as it would alone), text that
   * JSON carries no larger than base64 would, up to MERGED_MAX bytes; the rest, and a call
   * alone in its tick, go as they would without it. Never across withRequest views (each
   * request's own headers). A failure of that one request (a timeout, 401, 503 after the
   * retries) is each of its calls' failure.
   */
  autoPipeline?: boolean;
}

/** The largest call merged by autoPipeline, as JSON; a larger one goes alone. */
const MERGED_MAX = 64 * 1024;

/** A call of run() waiting for its tick's pipeline. */
interface Waiting {
  item: Encoded;
  resolve(outcome: Outcome): void;
  reject(err: unknown): void;
}

const RETRYABLE = new Set([502, 503, 504]);
const RESENDABLE = allScripts.filter((s) => !controlScripts.includes(s));
const ARG_ENCODING = 'Emq-Arg-Encoding';
/** Its name as an answer's header is read. */
const ARG_ENCODING_LC = 'emq-arg-encoding';
/** Asks this project's gateway to WAIT after the request's writes (replicas, then ms); it answers how many replicas confirmed. */
const WAIT = 'Emq-Wait';
const WAIT_TIMEOUT = 'Emq-Wait-Timeout-Ms';
const WAIT_REPLICAS_LC = 'emq-wait-replicas';
const WAIT_NAMES = new Set(['emq-wait', 'emq-wait-timeout-ms']);
/** PING, its arguments in base64: the gateway answers PONG and echoes Emq-Arg-Encoding; Upstash finds no such command. */
const PROBE = '[["UElORw=="]]';

/** Upstash's result, base64 strings decoded to bytes (a plain "OK" status is not base64). */
function decode(result: unknown): Reply {
  if (typeof result === 'string') {
    if (result === 'OK') return 'OK';
    const bytes = fromBase64(result);
    if (!bytes) throw new ProtocolError(`a result that is not base64: ${result.slice(0, 40)}`);
    return bytes;
  }
  if (Array.isArray(result)) return result.map(decode);
  if (typeof result === 'number' || result === null) return result;
  throw new ProtocolError(`unexpected result ${JSON.stringify(result)}`);
}

/**
 * A gateway's 503 for a `{emq}:version` that is not its wire version (code wire_mismatch),
 * as the typed error: retrying will not help until an operator makes them match.
 */
function wireMismatchOf(body: unknown): WireMismatchError | undefined {
  const b = body as { code?: unknown; error?: unknown; expected?: unknown; found?: unknown } | undefined;
  if (b?.code !== 'wire_mismatch') return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? printable(v, 200) : '(not given)');
  return new WireMismatchError(text(b.expected), text(b.found), typeof b.error === 'string' ? printable(b.error) : undefined);
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function outcomeOf(body: unknown): Outcome {
  const b = body as { result?: unknown; error?: unknown };
  if (typeof b?.error === 'string') return { ok: false, error: b.error };
  if (b && 'result' in b) return { ok: true, value: decode(b.result) };
  throw new ProtocolError(`unexpected body ${JSON.stringify(body).slice(0, 200)}`);
}

export class RestConnection implements Connection {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  /** The names (lowercase) a request's own headers may not use: `headers`' and Content-Type. */
  private readonly ownNames: ReadonlySet<string>;
  /** One request's own headers (withRequest), never one of `headers`. */
  private readonly requestHeaders: Record<string, string> = {};
  /** One request's WAIT after its writes (withRequest), asked of the gateway with Emq-Wait. */
  private readonly requestWait: WaitFor | undefined = undefined;
  private readonly timeoutMs: number;
  /** Retries: `retries` of them (default 2), from `backoffMs` (default 50) doubling, jittered, honouring Retry-After up to 2 s. */
  private readonly retry: RetryPolicy;
  /** The bounds a pipeline is planned in; `base64` is learned (the endpoint object is shared with every withRequest view). */
  private readonly bounds: Omit<Bounds, 'base64'>;
  private readonly endpoint: { base64: boolean | undefined } = { base64: undefined };
  private readonly shas: Set<string>;
  private readonly texts: Set<string>;
  /** The SHA-1 of each project script's text, to load a script too long for a request line. */
  private readonly shaOfText = new Map(allScripts.map((s) => [s.text, s.sha1]));
  private readonly transport: RestTransport;
  /** Told of each request sent again (and, through dispatch, of every script call). */
  readonly observer: Observer | undefined;
  private readonly autoPipeline: boolean;
  /** This view's calls of this tick, not yet sent (an own property of each withRequest view). */
  private waiting: Waiting[] | undefined;

  constructor({
    url,
    token,
    timeoutMs = 5_000,
    retries = 2,
    backoffMs = 50,
    idempotent = RESENDABLE,
    maxRequestBytes = 1024 * 1024,
    maxBodyBytes = Infinity,
    maxRequests = Infinity,
    fetch: fetchImpl,
    transport,
    autoPipeline = true,
  }: RestOptions) {
    this.base = url.replace(/\/+$/, '');
    this.headers = { Authorization: `Bearer ${token}`, 'Upstash-Encoding': 'base64' };
    this.ownNames = new Set([...Object.keys(this.headers), 'Content-Type'].map((k) => k.toLowerCase()));
    this.timeoutMs = timeoutMs;
    this.retry = { retries, baseMs: backoffMs, maxRetryAfterMs: 2_000 };
    this.bounds = { maxRequestBytes, maxBodyBytes: Math.max(maxBodyBytes, maxRequestBytes), maxRequests };
    this.shas = new Set(idempotent.map((s) => s.sha1));
    this.texts = new Set(idempotent.map((s) => s.text));
    this.transport = transport ?? fetchTransport(fetchImpl);
    this.observer = undefined;
    this.autoPipeline = autoPipeline;
    this.waiting = undefined;
  }

  /**
   * This connection for one request: the same endpoint and settings, its requests carrying
   * `headers` too (X-Request-Id, traceparent: one id follows a job to the gateway), and
   * `observer` told of them. Authorization and the encoding header cannot be replaced.
   */
  withRequest({ headers, observer, wait }: RequestScope): RestConnection {
    const view = Object.create(this) as RestConnection;
    const mutable = view as unknown as {
      requestHeaders: Record<string, string>;
      observer: Observer | undefined;
      waiting: undefined;
      requestWait: WaitFor | undefined;
    };
    // a loop, not entries/filter/fromEntries: this runs once per request
    const mine: Record<string, string> = {};
    if (headers) for (const k of Object.keys(headers)) if (!this.ownNames.has(k.toLowerCase()) && !WAIT_NAMES.has(k.toLowerCase())) mine[k] = headers[k]!;
    if (wait) {
      mine[WAIT] = String(wait.replicas);
      mine[WAIT_TIMEOUT] = String(wait.timeoutMs);
    }
    mutable.requestWait = wait;
    mutable.requestHeaders = mine;
    mutable.observer = observer;
    mutable.waiting = undefined;
    return view;
  }

  run(command: ScriptCommand): Promise<Outcome> {
    const e = new Encoded(command);
    // a merged call always fits a /pipeline body, so a tick's plan has no call alone and refuses none
    const fits = e.jsonBytes <= Math.min(MERGED_MAX, this.bounds.maxRequestBytes - 3);
    if (!this.autoPipeline || !this.safe([command]) || e.wantsBase64 || !fits) return this.single(e);
    return new Promise((resolve, reject) => {
      let waiting = this.waiting;
      if (!waiting) {
        const mine = (waiting = this.waiting = []);
        // two turns, as @upstash/redis waits: the calls its callers make on resuming join in
        void Promise.resolve()
          .then(() => undefined)
          .then(() => this.flush(mine));
      }
      waiting.push({ item: e, resolve, reject });
      if (waiting.length >= MAX_PIPELINE_COMMANDS) this.waiting = undefined;
    });
  }

  /** Sends a tick's calls: one alone as it would go without autoPipeline, more as a pipeline. */
  private async flush(calls: Waiting[]): Promise<void> {
    if (this.waiting === calls) this.waiting = undefined;
    try {
      // no bound of maxRequests: each call alone would have been a request of its own
      const outcomes =
        calls.length === 1
          ? [await this.single(calls[0]!.item)]
          : await this.planned(
              calls.map((c) => c.item),
              Infinity,
            );
      calls.forEach((c, i) => c.resolve(outcomes[i]!));
    } catch (err) {
      for (const c of calls) c.reject(err);
    }
  }

  pipeline(commands: readonly ScriptCommand[]): Promise<Outcome[]> {
    return this.planned(
      commands.map((c) => new Encoded(c)),
      this.bounds.maxRequests,
    );
  }

  private async planned(items: readonly Encoded[], maxRequests: number): Promise<Outcome[]> {
    const steps = planPipeline(items, { ...(await this.boundsFor(items)), maxRequests });
    const outcomes: Outcome[] = [];
    for (const step of steps) {
      if (step.kind === 'single') {
        outcomes.push(await this.send(step.single, this.safe([items[step.item]!.command])));
        continue;
      }
      const body = await this.request(
        '/pipeline',
        runBody(items, step.items, step.base64),
        'application/json',
        this.safe(step.items.map((i) => items[i]!.command)),
        step.base64,
      );
      if (!Array.isArray(body)) throw new ServerError(`REST ${this.base} refused the pipeline: ${JSON.stringify(body).slice(0, 200)}`);
      if (body.length !== step.items.length) throw new ProtocolError(`a pipeline of ${step.items.length} answered ${body.length} results`);
      for (const b of body) outcomes.push(outcomeOf(b));
    }
    return outcomes;
  }

  /**
   * Refuses, with TooLargeError, calls a pipeline could not send within its bounds; sends
   * nothing but, once per connection where needed, the probe that learns whether the endpoint
   * reads base64 arguments. For a caller that must know before it writes anything else (a
   * flow's children, checked before its parent is held).
   */
  async check(commands: readonly ScriptCommand[]): Promise<void> {
    const items = commands.map((c) => new Encoded(c));
    planPipeline(items, await this.boundsFor(items));
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** The bounds for these calls: the endpoint probed first when one of them wants base64 and it is not known yet. */
  private async boundsFor(items: readonly Encoded[]): Promise<Bounds> {
    if (this.endpoint.base64 === undefined && items.some((e) => e.wantsBase64)) await this.learn();
    return { ...this.bounds, base64: this.endpoint.base64 === true };
  }

  /**
   * Whether the endpoint reads base64 arguments: a base64 PING, which the gateway answers
   * with the header's echo; anything else (Upstash's unknown command, a refusal) means no.
   */
  private async learn(): Promise<boolean> {
    if (this.endpoint.base64 !== undefined) return this.endpoint.base64;
    let res: RestAnswer;
    try {
      const headers = { ...this.requestHeaders, ...this.headers, 'Content-Type': 'application/json', [ARG_ENCODING]: 'base64' };
      res = await this.transport.post(this.base, '/pipeline', headers, PROBE, this.timeoutMs);
    } catch (err) {
      throw this.unreached(err);
    }
    await res.discard();
    if (res.status === 401) throw new AuthError(`REST ${this.base} refused the token (401)`);
    if (RETRYABLE.has(res.status)) throw new ConnectionError(`REST ${this.base} answered ${res.status}`);
    return (this.endpoint.base64 = res.status === 200 && res.header(ARG_ENCODING_LC) === 'base64');
  }

  /** One call in one request. */
  private async single(e: Encoded): Promise<Outcome> {
    const command = e.command;
    const sha1 = command.op === 'eval' ? this.shaOfText.get(command.script) : undefined;
    const loadable = sha1 === undefined ? undefined : new Encoded({ op: 'evalsha', sha1, keys: command.keys, args: command.args });
    let form = singleOf(e, this.endpoint.base64 === true, loadable);
    // a call that goes as JSON and wants base64: learn whether the endpoint reads it
    if (form.form !== 'path' && this.endpoint.base64 === undefined && e.wantsBase64 && (await this.learn())) form = singleOf(e, true, loadable);
    return this.send(form, this.safe([command]));
  }

  /** Sends a call in the form chosen; refuses one without an exact form, or over maxBodyBytes, before sending. */
  private async send(form: Single, safe: boolean): Promise<Outcome> {
    if (form.form === 'none') throw new InvalidPayloadError(form.why);
    const bytes = singleBytes(form);
    if (bytes > this.bounds.maxBodyBytes) {
      throw new TooLargeError(`one call is ${bytes} bytes on the wire; one request to the REST endpoint carries at most ${this.bounds.maxBodyBytes}`);
    }
    if (form.form === 'load') {
      // After NOSCRIPT, a project script's EVAL with no exact form of its own: load the script
      // with a keyless EVAL (every project script refuses it at its layout gate, before
      // touching anything), then send the EVALSHA path-style.
      await this.request('/', JSON.stringify(['eval', form.script, '0']), 'application/json', true);
      return this.send(form.then, safe);
    }
    if (form.form === 'path') return outcomeOf(await this.request(form.path, form.body, 'application/octet-stream', safe));
    return outcomeOf(await this.request('/', form.body, 'application/json', safe, form.base64));
  }

  /** One step of a SCAN walk, through the gateway (which walks a cluster's primaries for it); retried as a read. */
  async scan(cursor: string, match: string, count: number): Promise<ScanStep> {
    const body = JSON.stringify(['SCAN', cursor, 'MATCH', match, 'COUNT', String(count)]);
    return scanStepOf(outcomeOf(await this.request('/', body, 'application/json', true)));
  }

  private safe(commands: readonly ScriptCommand[]): boolean {
    return commands.every((c) => (c.op === 'evalsha' ? this.shas.has(c.sha1) : this.texts.has(c.script)));
  }

  /** A request that failed (no answer, a timeout) as the transport's error. */
  private unreached(err: unknown): ConnectionError {
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (err as Error).message;
    return new ConnectionError(`REST ${this.base}: ${why}`, { cause: err });
  }

  /** POSTs and parses the JSON answer; retries transport failures and 502/503/504 when `idempotent`. */
  private async request(path: string, body: string | Uint8Array, type: string, idempotent: boolean, base64 = false): Promise<unknown> {
    const headers: Record<string, string> = { ...this.requestHeaders, ...this.headers, 'Content-Type': type };
    if (base64) headers[ARG_ENCODING] = 'base64';
    for (let attempt = 0; ; attempt++) {
      const last = !idempotent || !mayRetry(this.retry, attempt);
      let res: RestAnswer;
      try {
        res = await this.transport.post(this.base, path, headers, body, this.timeoutMs);
      } catch (err) {
        if (last) throw this.unreached(err);
        this.observer?.retry?.('transport');
        await backoff(this.retry, attempt);
        continue;
      }
      if (RETRYABLE.has(res.status) && !last) {
        // a 503 that says the wire versions differ is not retried: it lasts until fixed
        const text = res.status === 503 ? await res.text().catch(() => '') : undefined;
        if (text !== undefined && wireMismatchOf(jsonOf(text))) return await this.parse(res, text);
        if (text === undefined) await res.discard();
        this.observer?.retry?.(String(res.status));
        await backoff(this.retry, attempt, res.header('retry-after'));
        continue;
      }
      if (base64 && res.status === 200) {
        // only this project's gateway echoes the header; an endpoint that did not read the
        // arguments as base64 found no such commands and wrote nothing
        const read = res.header(ARG_ENCODING_LC) === 'base64';
        const wasKnown = this.endpoint.base64;
        this.endpoint.base64 = read;
        if (!read && wasKnown) {
          await res.discard();
          throw new ConnectionError('the REST endpoint no longer reads Emq-Arg-Encoding (nothing was written): send the same call again');
        }
      }
      if (this.requestWait && res.status === 200) await this.replicated(res, this.requestWait);
      // awaited: returning the promise would take two more microtask turns to settle
      return await this.parse(res);
    }
  }

  /**
   * The gateway's count of replicas that confirmed this request's writes (Emq-Wait-Replicas);
   * fewer than asked, or no count (an endpoint that does not WAIT: Upstash), is NotReplicatedError.
   */
  private async replicated(res: RestAnswer, wait: WaitFor): Promise<void> {
    const said = res.header(WAIT_REPLICAS_LC);
    const got = said != null && /^[0-9]{1,4}$/.test(said) ? Number(said) : undefined;
    if (got !== undefined && got >= wait.replicas) return;
    await res.discard();
    const why =
      got === undefined
        ? `REST ${this.base} did not say that its writes reached any replica (an endpoint that does not honour ${WAIT})`
        : `the write reached ${got} of ${wait.replicas} replicas within ${wait.timeoutMs} ms (or the gateway's cap)`;
    throw new NotReplicatedError(`${why}; it is on the primary but could be lost in a failover: send it again with the same id`, got ?? 0, wait.replicas);
  }

  private async parse(res: RestAnswer, read?: string): Promise<unknown> {
    // a reply cut off mid-body is a transport failure (retry the same call), not a server's answer
    const text =
      read ??
      (await res.text().catch((err: unknown) => {
        throw new ConnectionError(`REST ${this.base}: the reply was cut off (${(err as Error).message})`, { cause: err });
      }));
    const body = jsonOf(text);
    const mismatch = res.status === 503 ? wireMismatchOf(body) : undefined;
    if (mismatch) throw mismatch;
    const message = (body as { error?: unknown })?.error;
    const said = typeof message === 'string' ? message : text.slice(0, 200);
    if (res.status === 200 || (res.status === 400 && typeof message === 'string')) {
      if (body === undefined) throw new ProtocolError(`REST ${this.base} answered non-JSON: ${text.slice(0, 200)}`);
      return body;
    }
    if (res.status === 401 || res.status === 403) throw new AuthError(`REST ${this.base} refused the token (${res.status}): ${said}`);
    if (res.status === 413) throw new TooLargeError(`REST ${this.base}: the request is too large (413): ${said}`, true);
    if (RETRYABLE.has(res.status)) throw new ConnectionError(`REST ${this.base} answered ${res.status}: ${said}`);
    throw new ServerError(`REST ${this.base} answered ${res.status}: ${said}`);
  }
}

export function connectRest(options: RestOptions): RestConnection {
  return new RestConnection(options);
}
