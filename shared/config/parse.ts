// The parsers, one per kind of variable (./variables.ts): each takes the variables and a name,
// finds the name's entry in the table (its kind, bounds and default), and answers the value,
// or throws ConfigError naming the variable and never its value: a secret pasted into the
// wrong variable must not reach a log or an answer. An unset or empty variable is its default.
// Runtime-agnostic: the Worker reads its vars through these as Node reads its environment.
import { parseValkeyUrl } from '../connections/valkey-url.js';
import { isWireVersion } from '../fence.js';
import { durationText, parseDuration } from '../duration.js';
import { NODE_MAX, parseNodePool } from '../ids.js';
import { variable, type VariableKind, type Variable } from './variables.js';

export type Vars = Record<string, string | undefined>;

/** A bad value: the message names the variable, never its value. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Of<T extends VariableKind['type']> = Variable & { kind: Extract<VariableKind, { type: T }> };

function entry<T extends VariableKind['type']>(name: string, type: T): Of<T> {
  const v = variable(name);
  if (v.kind.type !== type) throw new Error(`${name} is a ${v.kind.type} in the table, not a ${type}`);
  return v as Of<T>;
}

/** The variable's text, or undefined when unset or empty. */
function given(vars: Vars, name: string): string | undefined {
  const text = vars[name];
  return text === undefined || text === '' ? undefined : text;
}

/** A whole number within the table's bounds, or its default. */
export function wholeNumber(vars: Vars, name: string): number {
  const v = entry(name, 'whole');
  const text = given(vars, name);
  if (text === undefined) return v.default as number;
  const n = Number(text);
  const { min, max } = v.kind;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(name, `${name} is not a whole number from ${min} to ${max}`);
  return n;
}

/** A switch: 1 on, 0 (or unset, or empty) off; anything else is refused. */
export function onOff(vars: Vars, name: string): boolean {
  const v = entry(name, 'switch');
  const text = given(vars, name);
  if (text === undefined) return v.default === true;
  if (text === '0') return false;
  if (text === '1') return true;
  throw new ConfigError(name, `${name} is not 1 (on) or 0 (off)`);
}

/** Text: the table's default when unset; a token shorter than the table's minLength is refused. */
export function text(vars: Vars, name: string): string | undefined {
  const v = entry(name, 'text');
  const value = given(vars, name);
  if (value === undefined) return v.default as string | undefined;
  const min = v.kind.minLength;
  if (min !== undefined && value.length < min) throw new ConfigError(name, `${name} is shorter than ${min} characters`);
  return value;
}

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/**
 * Throws, naming `name` (a URL is not repeated), unless `url` is https:// (plain http:// only on
 * loopback, for local runs) with no credentials, query or fragment: a gateway's token must
 * never cross a network in the clear.
 */
export function checkGatewayUrl(name: string, url: string): void {
  if (!URL.canParse(url)) throw new ConfigError(name, `${name} is not a URL`);
  const u = new URL(url);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.test(u.hostname))) {
    throw new ConfigError(name, `${name} must be an https:// URL (plain http:// only on loopback): the gateway token must not cross a network in the clear`);
  }
  if (u.username || u.password || u.search || u.hash)
    throw new ConfigError(name, `${name} must carry no credentials, query or fragment: tokens are secrets (EMQ_REST_TOKEN)`);
}

/** A gateway's URL (checkGatewayUrl), or undefined when unset. */
export function gatewayUrl(vars: Vars, name: string): string | undefined {
  entry(name, 'gateway-url');
  const url = given(vars, name);
  if (url !== undefined) checkGatewayUrl(name, url);
  return url;
}

/** A Valkey URL, checked as the glide connection will parse it, or undefined when unset. */
export function valkeyUrl(vars: Vars, name: string): string | undefined {
  entry(name, 'valkey-url');
  const url = given(vars, name);
  if (url === undefined) return undefined;
  try {
    parseValkeyUrl(url);
  } catch {
    throw new ConfigError(name, `${name} is not a Valkey URL: redis://, rediss://, valkey:// or valkeys://[user:password@]host[:port][/db][?options]`);
  }
  return url;
}

/** JSON text that parses, for the app's own parser of its shape; undefined when unset. */
export function jsonText(vars: Vars, name: string): { text: string; value: unknown } | undefined {
  const v = entry(name, 'json');
  const text = given(vars, name);
  if (text === undefined) return undefined;
  try {
    return { text, value: JSON.parse(text) };
  } catch {
    throw new ConfigError(name, `${name} is not valid JSON: expected ${v.kind.shape}`);
  }
}

/** A JSON object (the region maps); {} when unset. */
export function jsonObject(vars: Vars, name: string): Record<string, unknown> {
  const json = jsonText(vars, name);
  if (json === undefined) return {};
  const { value } = json;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(name, `${name} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The raw scope:token list, for functions/gateway/tokens.ts (which never shows a token). */
export function scopedTokens(vars: Vars, name: string): string | undefined {
  entry(name, 'scoped-tokens');
  return given(vars, name);
}

/** A pinned node id (0-1023), or undefined when unset. */
export function nodeId(vars: Vars, name: string): number | undefined {
  entry(name, 'node-id');
  const text = given(vars, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,4}$/.test(text) || Number(text) > NODE_MAX) throw new ConfigError(name, `${name} is not a node id: a whole number from 0 to ${NODE_MAX}`);
  return Number(text);
}

/** A node-id pool [first, last], or the table's default. */
export function nodePool(vars: Vars, name: string): [number, number] {
  const v = entry(name, 'node-pool');
  try {
    return parseNodePool(given(vars, name) ?? (v.default as string));
  } catch (err) {
    throw new ConfigError(name, `${name} ${(err as Error).message}`);
  }
}

/** An EchoMQ wire version (echomq:MAJOR.MINOR.PATCH), or the table's default. */
export function wireVersion(vars: Vars, name: string): string {
  const v = entry(name, 'wire-version');
  const text = given(vars, name);
  if (text === undefined) return v.default as string;
  if (!isWireVersion(text))
    throw new ConfigError(name, `${name} is not a wire version: it must look like echomq:MAJOR.MINOR.PATCH (the default is ${v.default as string})`);
  return text;
}

/** Lowercase words joined by single '-': a wrangler environment, and one-to-one with EMQ_REST_TOKEN_<REGION>. */
export const REGION_RULE = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** A region name, or undefined when unset. */
export function region(vars: Vars, name: string): string | undefined {
  entry(name, 'region');
  const text = given(vars, name);
  if (text !== undefined && !REGION_RULE.test(text)) throw new ConfigError(name, `${name} is not a region name (lowercase letters, digits and single '-')`);
  return text;
}

/** A duration (`<n><unit>`, unit ms, s, m, h or d) in ms, from 1 ms to the table's max, or its default. */
export function duration(vars: Vars, name: string): number {
  const v = entry(name, 'duration');
  const text = given(vars, name) ?? (v.default as string);
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    throw new ConfigError(name, `${name} is not a duration: a whole number with a unit ms, s, m, h or d (e.g. 365d)`);
  }
  if (ms < 1 || ms > v.kind.max) throw new ConfigError(name, `${name} must be from 1ms to ${durationText(v.kind.max)}`);
  return ms;
}

/** One of the table's words, or its default. */
export function choice<T extends string>(vars: Vars, name: string): T {
  const v = entry(name, 'choice');
  const text = given(vars, name) ?? (v.default as string);
  if (!v.kind.values.includes(text)) throw new ConfigError(name, `${name} must be one of ${v.kind.values.join(', ')}`);
  return text as T;
}
