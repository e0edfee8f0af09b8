// The producer's configuration (the Worker's vars and secrets, or process.env on Node), read
// through the parsers of shared/config/parse.ts: the names, kinds, defaults and meanings are
// in the table, shared/config/variables.ts (and in docs/configuration.md, made
// from it). Regions (EMQ_REGION, EMQ_HOME_REGIONS, EMQ_REGION_URLS, EMQ_REST_TOKEN_<REGION>)
// are read by regions.ts; the Node process's own settings by node-config.ts.
import { ConfigError, choice, duration, nodeId, nodePool, wholeNumber, type Vars } from '../../shared/config/parse.js';
import type { LogLevel } from '../http/request-log.js';
import { parseCrons, type CronSchedule } from './crons.js';
import { parseQueueGroups, type QueueGroups } from './queue-groups.js';
import { parseCallerTokens, type CallerTokens } from './tokens.js';
import { parseSources, type Source } from './webhooks/sources.js';

export type { Vars };

export interface Config {
  /** EMQ_TOKENS; undefined only when read with `tokens: false` (the app is given its own caller). */
  tokens: CallerTokens | undefined;
  maxPayloadBytes: number;
  maxBatchBytes: number;
  maxBatchItems: number;
  sources: Map<string, Source>;
  dedupeTtlSeconds: number;
  /** The node id minted ids carry: pinned by EMQ_NODE_ID, else drawn from EMQ_NODE_IDS at start. */
  nodeId: number | undefined;
  nodePool: [number, number];
  /** One REST request's budget (EMQ_REST_TIMEOUT_MS). */
  restTimeoutMs: number;
  /** The longest WAIT a request's ?wait=N may ask for (EMQ_WAIT_MAX_MS), below restTimeoutMs. */
  waitMaxMs: number;
  /** The longest delay, and the furthest not-before from now, a job may carry (EMQ_MAX_DELAY), in ms. */
  maxDelayMs: number;
  /** A queue's default lane (EMQ_QUEUE_GROUPS), or undefined: flat. */
  groupOf: QueueGroups;
  /** Request logs (EMQ_LOG). */
  logLevel: LogLevel;
  /** The cron schedules this producer fires (EMQ_CRONS); [] when unset. */
  crons: CronSchedule[];
}

/** The most gateway requests one pipeline of a producer request takes (docs/api.md, round trips). */
export const MAX_REST_REQUESTS = 8;

/**
 * The REST connection's options that follow from the configuration: its budget, and its
 * largest request body, room for one payload at the configured cap (the gateway's producer
 * cap, EMQ_GATEWAY_PRODUCER_MAX_BODY, is 2 MiB unless raised with it).
 */
export function restOptionsOf(config: Config): { timeoutMs: number; maxBodyBytes: number; maxRequests: number } {
  return { timeoutMs: config.restTimeoutMs, maxBodyBytes: Math.max(2 * 1024 * 1024, config.maxPayloadBytes + 64 * 1024), maxRequests: MAX_REST_REQUESTS };
}

export interface ConfigOptions {
  /** Read EMQ_TOKENS (required then). false: not read, for an app given its own `caller`. Default true. */
  tokens?: boolean;
}

export function configFrom(vars: Vars, { tokens = true }: ConfigOptions = {}): Config {
  const dedupeTtlSeconds = wholeNumber(vars, 'EMQ_DEDUPE_TTL_SECONDS');
  const maxDelayMs = duration(vars, 'EMQ_MAX_DELAY');
  const maxPayloadBytes = wholeNumber(vars, 'EMQ_MAX_PAYLOAD_BYTES');
  const restTimeoutMs = wholeNumber(vars, 'EMQ_REST_TIMEOUT_MS');
  // unset, the default fits under any budget: half of it at most
  const waitSet = vars.EMQ_WAIT_MAX_MS !== undefined && vars.EMQ_WAIT_MAX_MS !== '';
  const waitMaxMs = waitSet ? wholeNumber(vars, 'EMQ_WAIT_MAX_MS') : Math.max(1, Math.min(wholeNumber(vars, 'EMQ_WAIT_MAX_MS'), Math.floor(restTimeoutMs / 2)));
  if (waitMaxMs >= restTimeoutMs)
    throw new ConfigError('EMQ_WAIT_MAX_MS', 'EMQ_WAIT_MAX_MS must be below EMQ_REST_TIMEOUT_MS: the WAIT runs inside one REST request');
  return {
    // JSON of a given shape: their own parsers (named in the table) check it
    tokens: tokens ? parseCallerTokens(vars.EMQ_TOKENS) : undefined,
    maxPayloadBytes,
    maxBatchBytes: wholeNumber(vars, 'EMQ_MAX_BATCH_BYTES'),
    maxBatchItems: 1_000,
    sources: parseSources(vars.EMQ_SOURCES, dedupeTtlSeconds, maxDelayMs),
    dedupeTtlSeconds,
    nodeId: nodeId(vars, 'EMQ_NODE_ID'),
    nodePool: nodePool(vars, 'EMQ_NODE_IDS'),
    restTimeoutMs,
    waitMaxMs,
    maxDelayMs,
    groupOf: parseQueueGroups(vars),
    logLevel: choice<LogLevel>(vars, 'EMQ_LOG'),
    crons: parseCrons(vars, maxPayloadBytes, maxDelayMs),
  };
}
