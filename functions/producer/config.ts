// The producer's configuration, from Worker vars and secrets (or process.env on Node).
//   EMQ_TOKENS               secret: callers' tokens and their queues (see tokens.ts)
//   EMQ_REST_URL             the gateway (or Upstash) URL the Worker enqueues through
//   EMQ_REST_TOKEN           secret: a producer token of that gateway
//   EMQ_MAX_PAYLOAD_BYTES    one job's payload cap, default 1048576 (1 MiB)
//   EMQ_MAX_BATCH_BYTES      a batch request's body cap, default 5242880 (5 MiB)
//   EMQ_REST_TIMEOUT_MS      one REST request's budget, default 5000
//   EMQ_SOURCES              webhook sources (see webhooks/sources.ts); a secret when it holds secrets
//   EMQ_DEDUPE_TTL_SECONDS   how long a webhook delivery or Idempotency-Key is remembered, default 604800 (7 days)
//   EMQ_NODE_ID              this process's snowflake node id (0-1023), pinned; unset: drawn from EMQ_NODE_IDS
//   EMQ_NODE_IDS             the pool a minter with no pinned node id draws from at start, default 0-1023
//   EMQ_REGION, EMQ_HOME_REGIONS, EMQ_REGION_URLS, EMQ_REST_TOKEN_<REGION>: which region's gateway
//                            takes a queue's jobs (regions.ts, read by the Worker in worker.ts)
import { NODE_MAX, TTL_MAX_SECONDS, parseNodePool } from '../../shared/index.js';
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
  /** The node id minted ids carry: pinned by EMQ_NODE_ID, else drawn from EMQ_NODE_IDS at start. */
  nodeId: number | undefined;
  nodePool: [number, number];
}

function positive(vars: Vars, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = vars[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  // the message names the variable, never its value
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n <= 0 || n > max) throw new Error(`${name} is not a whole number from 1 to ${max}`);
  return n;
}

function nodeId(vars: Vars): number | undefined {
  const text = vars.EMQ_NODE_ID;
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,4}$/.test(text) || Number(text) > NODE_MAX) throw new Error(`EMQ_NODE_ID is not a node id: a whole number from 0 to ${NODE_MAX}`);
  return Number(text);
}

function nodePool(vars: Vars): [number, number] {
  const text = vars.EMQ_NODE_IDS;
  if (text === undefined || text === '') return [0, NODE_MAX];
  try {
    return parseNodePool(text);
  } catch (err) {
    throw new Error(`EMQ_NODE_IDS ${(err as Error).message}`);
  }
}

export function configFrom(vars: Vars): Config {
  const dedupeTtlSeconds = positive(vars, 'EMQ_DEDUPE_TTL_SECONDS', 7 * 24 * 3600, TTL_MAX_SECONDS);
  return {
    tokens: parseTokens(vars.EMQ_TOKENS),
    maxPayloadBytes: positive(vars, 'EMQ_MAX_PAYLOAD_BYTES', 1024 * 1024),
    maxBatchBytes: positive(vars, 'EMQ_MAX_BATCH_BYTES', 5 * 1024 * 1024),
    maxBatchItems: 1_000,
    sources: parseSources(vars.EMQ_SOURCES, dedupeTtlSeconds),
    dedupeTtlSeconds,
    nodeId: nodeId(vars),
    nodePool: nodePool(vars),
  };
}
