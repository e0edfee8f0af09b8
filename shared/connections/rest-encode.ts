// How the REST connection puts script calls on the wire, decided before anything is sent.
// Three forms: path-style (the last argument as the raw body: any bytes, one call a request),
// JSON (text only), and JSON whose every argument is base64 (`Emq-Arg-Encoding: base64`, this
// project's gateway only: any bytes, any number of calls a request). A pipeline is cut into
// requests of at most maxRequestBytes, each in the smaller form it can take; a call too big
// for one goes alone path-style. The plan is bounded: more than maxRequests requests, or one
// request over maxBodyBytes, is refused whole (TooLargeError) before the first is sent, so a
// batch or a flow never lands in part for want of room.
import type { Arg, ScriptCommand } from '../connection.js';
import { toBase64 } from '../base64.js';
import { TooLargeError } from '../errors.js';

const utf8 = new TextEncoder();
// ignoreBOM: true keeps a leading BOM as text; the default would drop those three bytes
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** The longest path-style request path sent; a longer call goes as JSON. */
export const MAX_PATH = 8 * 1024;
/**
 * The most calls in one /pipeline (the producer's largest batch): the gateway caps a
 * producer's pipeline by it (functions/gateway/script-calls.ts); more go as several.
 */
export const MAX_PIPELINE_COMMANDS = 1_000;

export function argsOf(c: ScriptCommand): Arg[] {
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

const bytesOf = (arg: Arg): Uint8Array => (typeof arg === 'string' ? utf8.encode(arg) : arg);

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

function base64Of(arg: Arg): string {
  // ASCII text is its own byte string (the usual key, id, SHA-1)
  if (typeof arg === 'string' && !/[^\x00-\x7f]/.test(arg)) return btoa(arg);
  return toBase64(bytesOf(arg));
}

/** The UTF-8 length of text, without encoding it (a lone surrogate counts as U+FFFD: 3). */
function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 4 bytes for 2 code units
      i++;
    } else n += 2;
  }
  return n;
}

/** One call, measured in each form on demand (a lone path-style call needs neither). */
export class Encoded {
  readonly args: Arg[];
  private text: string | null | undefined;
  private jsonSize: number | undefined;
  private b64Size: number | undefined;

  constructor(readonly command: ScriptCommand) {
    this.args = argsOf(command);
  }

  /** The call as a JSON array of text; undefined when an argument is not UTF-8. */
  get json(): string | undefined {
    if (this.text === undefined) {
      const texts: string[] = [];
      for (const a of this.args) {
        const t = jsonText(a);
        if (t === undefined) {
          this.text = null;
          return undefined;
        }
        texts.push(t);
      }
      this.text = JSON.stringify(texts);
    }
    return this.text ?? undefined;
  }

  /** Its bytes in a JSON body; Infinity when it has no JSON form. */
  get jsonBytes(): number {
    if (this.jsonSize === undefined) {
      const json = this.json;
      this.jsonSize = json === undefined ? Infinity : utf8Length(json);
    }
    return this.jsonSize;
  }

  /** Its bytes as base64 JSON: 4 characters per 3 bytes an argument, quoted, comma-separated, in brackets. */
  get base64Bytes(): number {
    if (this.b64Size === undefined) {
      let n = 1;
      for (const a of this.args) n += 4 * Math.ceil((typeof a === 'string' ? utf8Length(a) : a.length) / 3) + 3;
      this.b64Size = n;
    }
    return this.b64Size;
  }

  /** Whether JSON text cannot carry it, or carries it larger than base64 would. */
  get wantsBase64(): boolean {
    return this.jsonBytes > this.base64Bytes;
  }

  base64(): string {
    return `[${this.args.map((a) => `"${base64Of(a)}"`).join(',')}]`;
  }
}

/** A call alone in one request. */
export type Single =
  | { form: 'path'; path: string; body: Uint8Array }
  | { form: 'json'; body: string; base64: boolean }
  /** After NOSCRIPT, a project script's EVAL that has no other exact form: load its text, then EVALSHA path-style. */
  | { form: 'load'; script: string; then: Single }
  | { form: 'none'; why: string };

/**
 * How one call goes alone: path-style when its path is short and no argument is empty (path
 * style drops empty segments), else JSON, as base64 where the endpoint reads it (`base64`)
 * and it is needed or smaller. `loadable` is the path-style form of the same call by SHA-1,
 * for an EVAL of a project script.
 */
export function singleOf(e: Encoded, base64: boolean, loadable?: Encoded): Single {
  const last = e.args[e.args.length - 1]!;
  const path = `/${e.args.slice(0, -1).map(segment).join('/')}`;
  if (path.length <= MAX_PATH && e.args.every((a) => a.length > 0)) return { form: 'path', path, body: bytesOf(last) };
  if (base64 && e.wantsBase64) return { form: 'json', body: e.base64(), base64: true };
  if (e.json !== undefined) return { form: 'json', body: e.json, base64: false };
  if (loadable && e.command.op === 'eval') {
    const then = singleOf(loadable, base64);
    if (then.form === 'path') return { form: 'load', script: e.command.script, then };
  }
  return {
    form: 'none',
    why:
      path.length > MAX_PATH
        ? `a call whose path would pass ${MAX_PATH} bytes, with bytes that are not UTF-8 before its last argument, has no exact form on a REST endpoint without Emq-Arg-Encoding`
        : 'a call with an empty argument and bytes that are not UTF-8 has no exact form on a REST endpoint without Emq-Arg-Encoding',
  };
}

/** The bytes a single request's body holds. */
export function singleBytes(s: Single): number {
  if (s.form === 'path') return s.body.length;
  if (s.form === 'json') return utf8.encode(s.body).length;
  if (s.form === 'load') return singleBytes(s.then);
  return 0;
}

/** One request of a pipeline's plan: calls (by index) as one /pipeline body, or one call alone. */
export type Step = { kind: 'run'; items: number[]; base64: boolean } | { kind: 'single'; item: number; single: Single };

export interface Bounds {
  /** The endpoint reads base64 arguments (this project's gateway). */
  base64: boolean;
  /** Largest /pipeline body. */
  maxRequestBytes: number;
  /** Largest body of any request (a call alone). */
  maxBodyBytes: number;
  /** Most requests one pipeline may take. */
  maxRequests: number;
}

/**
 * The requests a pipeline takes, in order. Without base64 (a plain Upstash endpoint) a call
 * JSON cannot carry goes alone, path-style. Throws TooLargeError, before anything is sent,
 * when a call has no exact form, a request would pass maxBodyBytes, or the plan maxRequests.
 */
export function planPipeline(items: readonly Encoded[], bounds: Bounds): Step[] {
  const steps: Step[] = [];
  let run: number[] = [];
  let runJson = 2;
  let run64 = 2;
  const flush = () => {
    if (run.length > 0) steps.push({ kind: 'run', items: run, base64: bounds.base64 && runJson > run64 });
    run = [];
    runJson = run64 = 2;
  };
  const best = (json: number, b64: number) => (bounds.base64 ? Math.min(json, b64) : json);
  items.forEach((e, i) => {
    const json = e.jsonBytes + 1;
    const b64 = e.base64Bytes + 1;
    if (best(json, b64) > bounds.maxRequestBytes - 2) {
      flush();
      const single = singleOf(e, bounds.base64);
      if (single.form === 'none' || single.form === 'load') throw new TooLargeError(`call ${i}: ${single.form === 'none' ? single.why : 'no exact form'}`);
      steps.push({ kind: 'single', item: i, single });
      return;
    }
    if (best(runJson + json, run64 + b64) > bounds.maxRequestBytes || run.length >= MAX_PIPELINE_COMMANDS) flush();
    run.push(i);
    runJson += json;
    run64 += b64;
  });
  flush();
  for (const s of steps) {
    const bytes = s.kind === 'single' ? singleBytes(s.single) : 0;
    if (bytes > bounds.maxBodyBytes) {
      throw new TooLargeError(`one call is ${bytes} bytes on the wire; one request to the REST endpoint carries at most ${bounds.maxBodyBytes}`);
    }
  }
  if (steps.length > bounds.maxRequests) {
    throw new TooLargeError(
      `these ${items.length} calls would take ${steps.length} requests to the REST endpoint; one call of the producer takes at most ${bounds.maxRequests}${bounds.base64 ? '' : ' (a payload that is not UTF-8 goes in a request of its own on an endpoint without Emq-Arg-Encoding, such as Upstash)'}`,
    );
  }
  return steps;
}

/** A run's /pipeline body. */
export function runBody(items: readonly Encoded[], which: readonly number[], base64: boolean): string {
  return `[${which.map((i) => (base64 ? items[i]!.base64() : items[i]!.json)).join(',')}]`;
}
