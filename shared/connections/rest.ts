// The REST connection: the Connection seam over Upstash's REST protocol, with fetch only,
// so it runs on Workers, Node, Deno and Bun. Works against this project's gateway or Upstash.
//
// One enqueue is one request: path-style EVALSHA with the payload as the raw request body,
// so every byte travels as it is. A pipeline is one POST /pipeline of JSON commands; JSON
// carries text, so a job whose payload is not valid UTF-8 goes in its own path-style request
// (in order, between the JSON runs) instead: exact either way, never re-encoded.
// Replies are asked for in base64 (Upstash-Encoding) and decoded to bytes.
import type { Arg, Connection, Outcome, Reply, RequestScope, ScriptCommand } from '../connection.js';
import type { Observer } from '../observe.js';
import { AuthError, ConnectionError, InvalidPayloadError, ProtocolError, ServerError, WireMismatchError } from '../errors.js';
import { printable } from '../fence.js';
import { allScripts, type Script } from '../scripts.js';
import { fromBase64 } from '../base64.js';
import { backoff, mayRetry, type RetryPolicy } from '../retry.js';

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
  /** Scripts safe to send again (each is keyed by its job id, or only reads). */
  idempotent?: readonly Script[];
  /**
   * Largest /pipeline body, in bytes (default 1 MiB, Upstash's request limit): a longer
   * batch goes as several pipelines, in order. JSON can grow a payload up to 6x (a NUL is
   * `\u0000`), so a batch within the producer's caps could pass the gateway's.
   */
  maxRequestBytes?: number;
  fetch?: typeof fetch;
}

const utf8 = new TextEncoder();
// ignoreBOM: true keeps a leading BOM as text; the default would drop those three bytes
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const RETRYABLE = new Set([502, 503, 504]);
/** The longest path-style request path sent; a longer command goes as JSON. */
const MAX_PATH = 8 * 1024;
/**
 * The most commands in one /pipeline (the producer's largest batch): the gateway caps a
 * producer's pipeline by it (functions/gateway/script-calls.ts); a longer batch goes as
 * several pipelines, in order.
 */
export const MAX_PIPELINE_COMMANDS = 1_000;

function argsOf(c: ScriptCommand): Arg[] {
  // lowercase, as Upstash's path-style examples are: /evalsha/<sha>/...
  const head = c.op === 'evalsha' ? ['evalsha', c.sha1] : ['eval', c.script];
  return [...head, String(c.keys.length), ...c.keys, ...c.args];
}

/** The argument as JSON text, or undefined when its bytes are not UTF-8 (JSON cannot carry them). */
function jsonText(arg: Arg): string | undefined {
  if (typeof arg === 'string') return arg;
  try {
    return strictUtf8.decode(arg);
  } catch {
    return undefined;
  }
}

/** A path segment: every byte outside the unreserved set percent-escaped. */
function segment(arg: Arg): string {
  if (typeof arg === 'string') return encodeURIComponent(arg);
  let out = '';
  for (const b of arg) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

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
  private readonly timeoutMs: number;
  /** Retries: `retries` of them (default 2), from `backoffMs` (default 50) doubling, jittered, honouring Retry-After up to 2 s. */
  private readonly retry: RetryPolicy;
  private readonly maxRequestBytes: number;
  private readonly shas: Set<string>;
  private readonly texts: Set<string>;
  /** The SHA-1 of each project script's text, to load a script too long for a request line. */
  private readonly shaOfText = new Map(allScripts.map((s) => [s.text, s.sha1]));
  private readonly fetch: typeof fetch;
  /** Told of each request sent again (and, through dispatch, of every script call). */
  readonly observer: Observer | undefined;

  constructor({
    url,
    token,
    timeoutMs = 5_000,
    retries = 2,
    backoffMs = 50,
    idempotent = allScripts,
    maxRequestBytes = 1024 * 1024,
    fetch: fetchImpl,
  }: RestOptions) {
    this.base = url.replace(/\/+$/, '');
    this.headers = { Authorization: `Bearer ${token}`, 'Upstash-Encoding': 'base64' };
    this.ownNames = new Set([...Object.keys(this.headers), 'Content-Type'].map((k) => k.toLowerCase()));
    this.timeoutMs = timeoutMs;
    this.retry = { retries, baseMs: backoffMs, maxRetryAfterMs: 2_000 };
    this.maxRequestBytes = maxRequestBytes;
    this.shas = new Set(idempotent.map((s) => s.sha1));
    this.texts = new Set(idempotent.map((s) => s.text));
    this.fetch = fetchImpl ?? ((input, init) => fetch(input, init));
    this.observer = undefined;
  }

  /**
   * This connection for one request: the same endpoint and settings, its requests carrying
   * `headers` too (X-Request-Id, traceparent: one id follows a job to the gateway), and
   * `observer` told of them. Authorization and the encoding header cannot be replaced.
   */
  withRequest({ headers, observer }: RequestScope): RestConnection {
    const view = Object.create(this) as RestConnection;
    const mutable = view as unknown as { requestHeaders: Record<string, string>; observer: Observer | undefined };
    // a loop, not entries/filter/fromEntries: this runs once per request
    const mine: Record<string, string> = {};
    if (headers) for (const k of Object.keys(headers)) if (!this.ownNames.has(k.toLowerCase())) mine[k] = headers[k]!;
    mutable.requestHeaders = mine;
    mutable.observer = observer;
    return view;
  }

  run(command: ScriptCommand): Promise<Outcome> {
    return this.single(command);
  }

  async pipeline(commands: readonly ScriptCommand[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    let run: string[] = []; // each command as JSON
    let runBytes = 2;
    let runCommands: ScriptCommand[] = [];
    const flush = async () => {
      if (run.length === 0) return;
      const body = await this.request('/pipeline', `[${run.join(',')}]`, 'application/json', this.safe(runCommands));
      if (!Array.isArray(body)) throw new ServerError(`REST ${this.base} refused the pipeline: ${JSON.stringify(body).slice(0, 200)}`);
      if (body.length !== run.length) {
        throw new ProtocolError(`a pipeline of ${run.length} answered ${body.length} results`);
      }
      outcomes.push(...body.map(outcomeOf));
      run = [];
      runBytes = 2;
      runCommands = [];
    };
    for (const c of commands) {
      const texts = argsOf(c).map(jsonText);
      const json = texts.every((t) => t !== undefined) ? JSON.stringify(texts) : undefined;
      const bytes = json === undefined ? Infinity : utf8.encode(json).length + 1;
      // bytes JSON cannot carry, or one command too big for a pipeline: alone, path-style
      if (bytes > this.maxRequestBytes) {
        await flush();
        outcomes.push(await this.single(c));
        continue;
      }
      if (runBytes + bytes > this.maxRequestBytes || run.length >= MAX_PIPELINE_COMMANDS) await flush();
      run.push(json!);
      runBytes += bytes;
      runCommands.push(c);
    }
    await flush();
    return outcomes;
  }

  async close(): Promise<void> {}

  /** One command in one request: path-style with the last argument as the raw body. */
  private async single(command: ScriptCommand): Promise<Outcome> {
    const args = argsOf(command);
    const last = args[args.length - 1]!;
    const safe = this.safe([command]);
    const path = `/${args.slice(0, -1).map(segment).join('/')}`;
    // path-style drops empty segments, and an empty body adds no argument; and a long request
    // line is refused (Node's HTTP server: 431 past 16 KiB of headers; nginx: 8 KiB), which
    // long keys or arguments before the last would make: then send JSON (every project
    // script takes its payload last, so any payload bytes ride the raw body)
    if (args.some((a) => a.length === 0) || path.length > MAX_PATH) {
      const texts = args.map(jsonText);
      const sha1 = command.op === 'eval' ? this.shaOfText.get(command.script) : undefined;
      if (texts.some((t) => t === undefined) && sha1 !== undefined && command.op === 'eval') {
        // After NOSCRIPT, a project script's EVAL with bytes JSON cannot carry, too long for a
        // request line: load the script with a keyless EVAL (every project script refuses it
        // at its layout gate, before touching anything), then send the EVALSHA path-style.
        await this.request('/', JSON.stringify(['eval', command.script, '0']), 'application/json', true);
        return this.single({ op: 'evalsha', sha1, keys: command.keys, args: command.args });
      }
      if (texts.some((t) => t === undefined)) {
        throw new InvalidPayloadError(
          path.length > MAX_PATH
            ? `a command whose path would pass ${MAX_PATH} bytes, with bytes that are not UTF-8 before its last argument, has no exact REST form`
            : 'a command with an empty argument and bytes that are not UTF-8 has no exact REST form',
        );
      }
      return outcomeOf(await this.request('/', JSON.stringify(texts), 'application/json', safe));
    }
    const body = typeof last === 'string' ? utf8.encode(last) : last;
    return outcomeOf(await this.request(path, body, 'application/octet-stream', safe));
  }

  private safe(commands: readonly ScriptCommand[]): boolean {
    return commands.every((c) => (c.op === 'evalsha' ? this.shas.has(c.sha1) : this.texts.has(c.script)));
  }

  /** POSTs and parses the JSON answer; retries transport failures and 502/503/504 when `idempotent`. */
  private async request(path: string, body: string | Uint8Array, type: string, idempotent: boolean): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const last = !idempotent || !mayRetry(this.retry, attempt);
      let res: Response;
      try {
        res = await this.fetch(this.base + path, {
          method: 'POST',
          headers: { ...this.requestHeaders, ...this.headers, 'Content-Type': type },
          body: body as NonNullable<RequestInit['body']>,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (err as Error).message;
        if (last) throw new ConnectionError(`REST ${this.base}: ${why}`, { cause: err });
        this.observer?.retry?.('transport');
        await backoff(this.retry, attempt);
        continue;
      }
      if (RETRYABLE.has(res.status) && !last) {
        // a 503 that says the wire versions differ is not retried: it lasts until fixed
        const text = res.status === 503 ? await res.text().catch(() => '') : undefined;
        if (text !== undefined && wireMismatchOf(jsonOf(text))) return await this.parse(res, text);
        if (text === undefined) await res.body?.cancel();
        this.observer?.retry?.(String(res.status));
        await backoff(this.retry, attempt, res.headers.get('Retry-After'));
        continue;
      }
      // awaited: returning the promise would take two more microtask turns to settle
      return await this.parse(res);
    }
  }

  private async parse(res: Response, read?: string): Promise<unknown> {
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
    if (res.status === 413) throw new InvalidPayloadError(`REST ${this.base}: the request is too large (413): ${said}`);
    if (RETRYABLE.has(res.status)) throw new ConnectionError(`REST ${this.base} answered ${res.status}: ${said}`);
    throw new ServerError(`REST ${this.base} answered ${res.status}: ${said}`);
  }
}

export function connectRest(options: RestOptions): RestConnection {
  return new RestConnection(options);
}
