// Callers' tokens, from the EMQ_TOKENS secret: a JSON array of
//   { "token": "<at least 16 characters>", "queues": ["orders", "tenant-a.*", "*"] }
// where a queue pattern is an exact name, a prefix ending in `*`, or `*` for every queue.
// CallerTokens are compared in constant time (every byte of every configured token) and never
// appear in errors or logs.

import { sha256Hex } from '../../shared/keyspace.js';

export interface Caller {
  /** Whether this caller may use the queue. */
  allows(queue: string): boolean;
  /** The token's SHA-256 in hex: scopes Idempotency-Keys to the caller without keeping the token. */
  scope(): Promise<string>;
}

export interface CallerTokens {
  /** The caller a presented token belongs to, or undefined. */
  callerOf(presented: string): Caller | undefined;
}

const utf8 = new TextEncoder();

function allowing(patterns: readonly string[]): (queue: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith('*')));
  const prefixes = patterns.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  return (q) => exact.has(q) || prefixes.some((p) => q.startsWith(p));
}

/**
 * Equal in time that depends only on the configured token's length: every byte is compared,
 * and a length difference is folded in rather than returned early. (No per-request digest:
 * on Node, Web Crypto's digest runs on the thread pool and cost a quarter of the request.)
 */
function sameToken(presented: Uint8Array, known: Uint8Array): boolean {
  let diff = presented.length ^ known.length;
  for (let i = 0; i < known.length; i++) diff |= known[i]! ^ (presented[i % Math.max(presented.length, 1)] ?? 0);
  return diff === 0;
}

/** Parses EMQ_TOKENS; an error names the entry by position, never by its token. */
export function parseCallerTokens(spec: string | undefined): CallerTokens {
  if (!spec) throw new Error('EMQ_TOKENS is not set: a JSON array of {"token": "...", "queues": ["..."]}');
  let list: unknown;
  try {
    list = JSON.parse(spec);
  } catch {
    throw new Error('EMQ_TOKENS is not valid JSON: expected an array of {"token": "...", "queues": ["..."]}');
  }
  if (!Array.isArray(list) || list.length === 0) throw new Error('EMQ_TOKENS must be a non-empty JSON array');
  const entries = list.map((item: unknown, i) => {
    const { token, queues } = (item ?? {}) as { token?: unknown; queues?: unknown };
    if (typeof token !== 'string' || token.length < 16) throw new Error(`EMQ_TOKENS[${i}].token must be a string of at least 16 characters`);
    if (!Array.isArray(queues) || queues.length === 0 || !queues.every((q) => typeof q === 'string' && q.length > 0)) {
      throw new Error(`EMQ_TOKENS[${i}].queues must be a non-empty array of queue names or prefixes ending in *`);
    }
    const bytes = utf8.encode(token);
    let digest: Promise<string> | undefined;
    // digested on first use: Workers allow no crypto at a script's top level
    const caller: Caller = { allows: allowing(queues as string[]), scope: () => (digest ??= sha256Hex(bytes)) };
    return { bytes, caller };
  });
  return {
    callerOf(presented) {
      const p = utf8.encode(presented);
      let found: Caller | undefined;
      // no early exit: every token is compared whatever matches
      for (const e of entries) if (sameToken(p, e.bytes) && found === undefined) found = e.caller;
      return found;
    },
  };
}

/**
 * A caller your own auth has already vouched for (the app's `caller` option): the queues it
 * may use, as EMQ_TOKENS patterns, and the scope its Idempotency-Keys live in (e.g. a user
 * or tenant id; one key names one job per scope). Scopes are kept apart from EMQ_TOKENS'.
 */
export function trustedCaller({ queues, scope }: { queues: readonly string[]; scope: string }): Caller {
  if (queues.length === 0 || !queues.every((q) => typeof q === 'string' && q.length > 0)) {
    throw new TypeError('trustedCaller: queues must be a non-empty array of queue names or prefixes ending in *');
  }
  if (typeof scope !== 'string' || scope.length === 0) throw new TypeError('trustedCaller: scope must be a non-empty string');
  // token scopes are 64 hex digits: the prefix keeps an own scope from ever naming one
  const own = Promise.resolve(`own:${scope}`);
  return { allows: allowing(queues), scope: () => own };
}
