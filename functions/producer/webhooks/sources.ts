// Webhook sources, from EMQ_SOURCES (a JSON var or secret):
//   {"<source>": {"kind": "github" | "stripe" | "standard" | "hmac", "secrets": ["…", "…"],
//                 "queue": "<queue>", "toleranceSeconds": 300,
//                 // hmac only:
//                 "signatureHeader": "X-Signature", "encoding": "hex" | "base64",
//                 "signaturePrefix": "sha256=", "idHeader": "X-Delivery-Id", "eventHeader": "X-Event"}}
// Several secrets verify at once, so a secret can rotate with no downtime.
import { validateQueue } from '../../../shared/index.js';

export type Kind = 'github' | 'stripe' | 'standard' | 'hmac';

export interface Source {
  name: string;
  kind: Kind;
  secrets: string[];
  queue: string;
  toleranceSeconds: number;
  signatureHeader?: string;
  encoding?: 'hex' | 'base64';
  signaturePrefix?: string;
  idHeader?: string;
  eventHeader?: string;
}

const KINDS = new Set<Kind>(['github', 'stripe', 'standard', 'hmac']);

export function parseSources(spec: string | undefined): Map<string, Source> {
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
    if (!KINDS.has(s.kind as Kind)) throw new Error(`${where}.kind must be github, stripe, standard or hmac`);
    if (!Array.isArray(s.secrets) || s.secrets.length === 0 || !s.secrets.every((x) => typeof x === 'string' && x.length > 0)) {
      throw new Error(`${where}.secrets must be a non-empty array of strings`);
    }
    try {
      validateQueue(s.queue);
    } catch (err) {
      throw new Error(`${where}.queue: ${(err as Error).message}`);
    }
    const tolerance = s.toleranceSeconds ?? 300;
    if (typeof tolerance !== 'number' || !(tolerance > 0)) throw new Error(`${where}.toleranceSeconds must be a positive number`);
    const source: Source = { name, kind: s.kind as Kind, secrets: s.secrets as string[], queue: s.queue as string, toleranceSeconds: tolerance };
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
