// The producer's configuration, from Worker vars and secrets (or process.env on Node).
//   EMQ_TOKENS               secret: callers' tokens and their queues (see tokens.ts)
//   EMQ_REST_URL             the gateway (or Upstash) URL the Worker enqueues through
//   EMQ_REST_TOKEN           secret: a producer token of that gateway
//   EMQ_MAX_PAYLOAD_BYTES    one job's payload cap, default 1048576 (1 MiB)
//   EMQ_MAX_BATCH_BYTES      a batch request's body cap, default 5242880 (5 MiB)
//   EMQ_REST_TIMEOUT_MS      one REST request's budget, default 5000
//   EMQ_SOURCES              webhook sources (see webhooks/sources.ts); a secret when it holds secrets
//   EMQ_DEDUPE_TTL_SECONDS   how long a delivery id or Idempotency-Key is remembered, default 604800 (7 days)
//   EMQ_REGION, EMQ_HOME_REGIONS, EMQ_REGION_URLS, EMQ_REST_TOKEN_<REGION>: which region's gateway
//                            takes a queue's jobs (regions.ts, read by the Worker in worker.ts)
import { parseTokens, type Tokens } from './tokens.js';
import { parseSources, type Source } from './webhooks/sources.js';

export type Vars = Record<string, string | undefined>;

export interface Config {
  tokens: Tokens;
  maxPayloadBytes: number;
  maxBatchBytes: number;
  maxBatchItems: number;
  sources: Map<string, Source>;
  dedupeTtlSeconds: number;
}

function positive(vars: Vars, name: string, fallback: number): number {
  const text = vars[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name}=${JSON.stringify(text)} is not a positive whole number`);
  return n;
}

export function configFrom(vars: Vars): Config {
  return {
    tokens: parseTokens(vars.EMQ_TOKENS),
    maxPayloadBytes: positive(vars, 'EMQ_MAX_PAYLOAD_BYTES', 1024 * 1024),
    maxBatchBytes: positive(vars, 'EMQ_MAX_BATCH_BYTES', 5 * 1024 * 1024),
    maxBatchItems: 1_000,
    sources: parseSources(vars.EMQ_SOURCES),
    dedupeTtlSeconds: positive(vars, 'EMQ_DEDUPE_TTL_SECONDS', 7 * 24 * 3600),
  };
}
