// Webhook sources, from EMQ_SOURCES (a JSON var or secret):
//   {"<source>": {"kind": "github" | "stripe" | "standard" | "hmac", "secrets": ["…", "…"],
//                 "queue": "<queue>", "toleranceSeconds": 300,
//                 "group": "<branded id>", "delay": "<n><unit>",   // optional: a lane, a delay
//                 // hmac only:
//                 "signatureHeader": "X-Signature", "encoding": "hex" | "base64",
//                 "signaturePrefix": "sha256=", "idHeader": "X-Delivery-Id", "eventHeader": "X-Event"}}
// Several secrets verify at once, so a secret can rotate with no downtime.
import { validateGroup, validateQueue } from '../../../shared/index.js';
import { parseDuration } from '../../../shared/duration.js';
import { fromBase64 } from '../../../shared/base64.js';

/** A secret shorter than this (decoded) is refused at start: it would be guessable. */
const MIN_SECRET_BYTES = 16;
/** Few secrets: each costs one HMAC of the body per delivery (rotation needs two). */
const MAX_SECRETS = 4;

function secretBytes(kind: SourceKind, secret: string, where: string): Uint8Array {
  let bytes: Uint8Array;
  if (kind === 'standard' && secret.startsWith('whsec_')) {
    const decoded = fromBase64(secret.slice(6));
    if (!decoded) throw new Error(`${where} is whsec_ followed by something that is not base64`);
    bytes = decoded;
  } else bytes = new TextEncoder().encode(secret);
  if (bytes.length < MIN_SECRET_BYTES) throw new Error(`${where} is shorter than ${MIN_SECRET_BYTES} bytes${kind === 'standard' ? ' (decoded)' : ''}`);
  return bytes;
}

export type SourceKind = 'github' | 'stripe' | 'standard' | 'hmac';

export interface Source {
  name: string;
  kind: SourceKind;
  secrets: string[];
  /** The secrets as HMAC keys: a Standard Webhooks `whsec_` secret base64-decoded, any other as its UTF-8 bytes. */
  secretBytes: Uint8Array[];
  queue: string;
  toleranceSeconds: number;
  /** The lane its jobs join (a branded id); none: the queue's default lane (EMQ_QUEUE_GROUPS), else flat. */
  group?: string;
  /** Its jobs are scheduled this many ms after arrival; none: due at once. */
  delayMs?: number;
  signatureHeader?: string;
  encoding?: 'hex' | 'base64';
  signaturePrefix?: string;
  idHeader?: string;
  eventHeader?: string;
}

const KINDS = new Set<SourceKind>(['github', 'stripe', 'standard', 'hmac']);

export function parseSources(spec: string | undefined, dedupeTtlSeconds = 7 * 24 * 3600, maxDelayMs = 365 * 86_400_000): Map<string, Source> {
  const out = new Map<string, Source>();
  if (!spec) return out;
  let raw: unknown;
  try {
    raw = JSON.parse(spec);
  } catch {
    throw new Error('EMQ_SOURCES is not valid JSON: expected {"<source>": {"kind", "secrets", "queue"}}');
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('EMQ_SOURCES must be a JSON object of sources');
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const s = (value ?? {}) as Record<string, unknown>;
    const where = `EMQ_SOURCES.${name}`;
    if (!KINDS.has(s.kind as SourceKind)) throw new Error(`${where}.kind must be github, stripe, standard or hmac`);
    if (
      !Array.isArray(s.secrets) ||
      s.secrets.length === 0 ||
      s.secrets.length > MAX_SECRETS ||
      !s.secrets.every((x) => typeof x === 'string' && x.length > 0)
    ) {
      throw new Error(`${where}.secrets must be an array of 1 to ${MAX_SECRETS} strings`);
    }
    const keys = (s.secrets as string[]).map((secret, i) => secretBytes(s.kind as SourceKind, secret, `${where}.secrets[${i}]`));
    try {
      validateQueue(s.queue);
    } catch (err) {
      throw new Error(`${where}.queue: ${(err as Error).message}`);
    }
    const tolerance = s.toleranceSeconds ?? 300;
    if (typeof tolerance !== 'number' || !(tolerance > 0)) throw new Error(`${where}.toleranceSeconds must be a positive number`);
    // a delivery older than its dedup key could be replayed once the key expired
    if (tolerance >= dedupeTtlSeconds) throw new Error(`${where}.toleranceSeconds must be below EMQ_DEDUPE_TTL_SECONDS`);
    const source: Source = {
      name,
      kind: s.kind as SourceKind,
      secrets: s.secrets as string[],
      secretBytes: keys,
      queue: s.queue as string,
      toleranceSeconds: tolerance,
    };
    if (s.group !== undefined) {
      try {
        validateGroup(s.group);
      } catch {
        throw new Error(`${where}.group must be a branded id (e.g. PRT0KHTOWnGLuC)`);
      }
      source.group = s.group;
    }
    if (s.delay !== undefined) {
      let ms: number;
      try {
        if (typeof s.delay !== 'string') throw new RangeError('not a string');
        ms = parseDuration(s.delay);
      } catch {
        throw new Error(`${where}.delay must be a whole number with a unit ms, s, m, h or d (e.g. "30s")`);
      }
      if (ms > maxDelayMs) throw new Error(`${where}.delay is beyond EMQ_MAX_DELAY`);
      source.delayMs = ms;
    }
    if (source.kind === 'hmac') {
      for (const field of ['signatureHeader', 'idHeader'] as const) {
        if (typeof s[field] !== 'string' || !s[field]) throw new Error(`${where}.${field} is required for kind hmac`);
        source[field] = s[field] as string;
      }
      if (s.encoding !== 'hex' && s.encoding !== 'base64') throw new Error(`${where}.encoding must be hex or base64 for kind hmac`);
      source.encoding = s.encoding;
      if (typeof s.signaturePrefix === 'string') source.signaturePrefix = s.signaturePrefix;
      if (typeof s.eventHeader === 'string') source.eventHeader = s.eventHeader;
    }
    out.set(name, source);
  }
  return out;
}
