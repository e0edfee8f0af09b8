// Callers' tokens, from the EMQ_TOKENS secret: a JSON array of
//   { "token": "<at least 16 characters>", "queues": ["orders", "tenant-a.*"], "rawPrefixes"?: true,
//     "can"?: ["enqueue", "read", "control"] }
// where a queue pattern is an exact name or one segment under a stem (queue-patterns.ts);
// `*` and bare prefixes (`acme*`) cross tenants, so an entry takes them only with "rawPrefixes": true.
// `can` is what the token may do on those queues (default enqueue and read): control is
// cancel, promote, reschedule, lanes and pause.
// CallerTokens are compared in constant time (every byte of every configured token) and never
// appear in errors or logs.

import { sha256Hex } from '../../shared/keyspace.js';
import { PatternError, queueMatcher } from './queue-patterns.js';

/** What a caller may do on its queues: put jobs in, read them back, act on them. */
export type Capability = 'enqueue' | 'read' | 'control';
export const CAPABILITIES: readonly Capability[] = ['enqueue', 'read', 'control'];
/** What a token or a trusted caller may do when it does not say. */
export const DEFAULT_CAN: readonly Capability[] = ['enqueue', 'read'];

export interface Caller {
  /** Whether this caller may use the queue. */
  allows(queue: string): boolean;
  /** Whether this caller may do `what`; a caller without this method may enqueue and read. */
  can?(what: Capability): boolean;
  /** The token's SHA-256 in hex: scopes Idempotency-Keys to the caller without keeping the token. */
  scope(): Promise<string>;
}

export interface CallerTokens {
  /** The caller a presented token belongs to, or undefined. */
  callerOf(presented: string): Caller | undefined;
}

const utf8 = new TextEncoder();

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
    const {
      token,
      queues,
      rawPrefixes = false,
      can = DEFAULT_CAN,
    } = (item ?? {}) as { token?: unknown; queues?: unknown; rawPrefixes?: unknown; can?: unknown };
    if (typeof token !== 'string' || token.length < 16) throw new Error(`EMQ_TOKENS[${i}].token must be a string of at least 16 characters`);
    if (!Array.isArray(queues) || queues.length === 0) {
      throw new Error(`EMQ_TOKENS[${i}].queues must be a non-empty array of queue names or patterns ending in .*`);
    }
    if (typeof rawPrefixes !== 'boolean') throw new Error(`EMQ_TOKENS[${i}].rawPrefixes must be true or false`);
    const options = { rawPrefixes, optIn: `"rawPrefixes": true in EMQ_TOKENS[${i}]` };
    const allows = queueMatcher(queues, options, (j) => `EMQ_TOKENS[${i}].queues[${j}]`);
    const bytes = utf8.encode(token);
    let digest: Promise<string> | undefined;
    // digested on first use: Workers allow no crypto at a script's top level
    const caller: Caller = { allows, can: capabilities(can, `EMQ_TOKENS[${i}].can`), scope: () => (digest ??= sha256Hex(bytes)) };
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

/** A `can` list as a check; an Error names `where` (and the entry by position), never a value. */
function capabilities(can: unknown, where: string): (what: Capability) => boolean {
  if (!Array.isArray(can) || can.length === 0) throw new Error(`${where} must be a non-empty array of ${CAPABILITIES.join(', ')}`);
  can.forEach((c, j) => {
    if (!(CAPABILITIES as readonly unknown[]).includes(c)) throw new Error(`${where}[${j}] must be one of ${CAPABILITIES.join(', ')}`);
  });
  const set = new Set(can as Capability[]);
  return (what) => set.has(what);
}

/** trustedCaller's tenant form: the queues `${tenant}.${name}`, which no other tenant's can be. */
export interface TenantQueues {
  /** One segment (letters, digits, '_' and '-'; no '.', not empty). */
  tenant: string;
  /** Names one segment each, or `*` for every queue one segment under the tenant. */
  queues: readonly string[];
  scope: string;
  /** What it may do (default enqueue and read), as EMQ_TOKENS' `can`. */
  can?: readonly Capability[];
}

/** trustedCaller's pattern form: queue patterns as in EMQ_TOKENS. */
export interface PatternQueues {
  queues: readonly string[];
  scope: string;
  /** What it may do (default enqueue and read), as EMQ_TOKENS' `can`. */
  can?: readonly Capability[];
  /** Accept `*` and bare prefixes (`acme*`), which cross tenants. */
  rawPrefixes?: boolean;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** The tenant form as patterns; a TypeError names what is wrong, by position. */
function tenantPatterns(tenant: unknown, queues: readonly unknown[]): string[] {
  if (typeof tenant !== 'string' || !SEGMENT.test(tenant)) {
    throw new TypeError("trustedCaller: tenant must be one segment: 1 or more letters, digits, '_' and '-', with no '.'");
  }
  return queues.map((name, i) => {
    if (name === '*') return `${tenant}.*`;
    if (typeof name !== 'string' || !SEGMENT.test(name)) {
      throw new TypeError(`trustedCaller: queues[${i}] must be one segment (letters, digits, '_' and '-', no '.') or *, under the tenant`);
    }
    return `${tenant}.${name}`;
  });
}

/**
 * A caller your own auth has already vouched for (the app's `caller` option): the queues it
 * may use, and the scope its Idempotency-Keys live in (e.g. a user or tenant id; one key names
 * one job per scope). Scopes are kept apart from EMQ_TOKENS'.
 *   trustedCaller({ tenant: 'acme', queues: ['emails', '*'], scope })  acme.emails, and acme.<one segment>
 *   trustedCaller({ queues: ['billing', 'acme.*'], scope })            patterns as in EMQ_TOKENS
 */
export function trustedCaller(options: TenantQueues | PatternQueues): Caller {
  const { queues, scope } = options;
  if (!Array.isArray(queues) || queues.length === 0) throw new TypeError('trustedCaller: queues must be a non-empty array');
  if (typeof scope !== 'string' || scope.length === 0) throw new TypeError('trustedCaller: scope must be a non-empty string');
  const tenantForm = 'tenant' in options;
  if (tenantForm && (options as PatternQueues).rawPrefixes !== undefined)
    throw new TypeError('trustedCaller: rawPrefixes is for the pattern form, not with a tenant');
  const patterns = tenantForm ? tenantPatterns(options.tenant, queues) : queues;
  const rawPrefixes = !tenantForm && options.rawPrefixes === true;
  let allows: (queue: string) => boolean;
  try {
    allows = queueMatcher(patterns, { rawPrefixes }, (i) => `trustedCaller: queues[${i}]`);
  } catch (err) {
    throw err instanceof PatternError ? new TypeError(err.message) : err;
  }
  let can: Caller['can'];
  try {
    can = capabilities(options.can ?? DEFAULT_CAN, 'trustedCaller: can');
  } catch (err) {
    throw new TypeError((err as Error).message);
  }
  // token scopes are 64 hex digits: the prefix keeps an own scope from ever naming one
  const own = Promise.resolve(`own:${scope}`);
  return { allows, can, scope: () => own };
}
