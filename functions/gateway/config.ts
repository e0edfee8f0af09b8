// `emq gateway`'s configuration, read whole and checked before anything connects or listens
// (the table of names, kinds, defaults and meanings: shared/config/variables.ts). A bad value
// stops the start, naming the variable, never its value.
import { ConfigError, choice, onOff, scopedTokens, text, valkeyUrl, wholeNumber, wireVersion } from '../../shared/config/parse.js';
import type { LogLevel } from '../http/request-log.js';
import { limitsFrom, type ServerLimits } from '../http/limits.js';
import { tlsFrom } from './tls.js';
import { parseGatewayTokens, type GatewayTokens } from './tokens.js';

export interface GatewayConfig {
  valkeyUrl: string;
  tokens: GatewayTokens;
  host: string;
  port: number;
  timeoutMs: number;
  wireVersion: string;
  limits: ServerLimits;
  tls: { cert: Buffer; key: Buffer } | undefined;
  /** Request logs (EMQ_LOG). */
  logLevel: LogLevel;
  /** GET /metrics's bearer token (EMQ_METRICS_TOKEN); undefined: /metrics is off. */
  metricsToken: string | undefined;
  settings: { maxBodyBytes: number; producerMaxBodyBytes: number; maxPipeline: number; adminMaxArgs: number; queryToken: boolean; waitMaxMs: number };
}

export function gatewayConfigFrom(env: Record<string, string | undefined>): GatewayConfig {
  const url = valkeyUrl(env, 'VALKEY_URL');
  if (!url) throw new ConfigError('VALKEY_URL', 'VALKEY_URL is not set: the gateway needs the Valkey server to front');
  const timeoutMs = wholeNumber(env, 'EMQ_GATEWAY_TIMEOUT_MS');
  // unset, the default fits under any budget: half of it at most
  const waitSet = env.EMQ_GATEWAY_WAIT_MAX_MS !== undefined && env.EMQ_GATEWAY_WAIT_MAX_MS !== '';
  const waitMaxMs = waitSet
    ? wholeNumber(env, 'EMQ_GATEWAY_WAIT_MAX_MS')
    : Math.max(1, Math.min(wholeNumber(env, 'EMQ_GATEWAY_WAIT_MAX_MS'), Math.floor(timeoutMs / 2)));
  if (waitMaxMs >= timeoutMs)
    throw new ConfigError('EMQ_GATEWAY_WAIT_MAX_MS', 'EMQ_GATEWAY_WAIT_MAX_MS must be below EMQ_GATEWAY_TIMEOUT_MS: a WAIT is one Valkey command');
  return {
    valkeyUrl: url,
    tokens: parseGatewayTokens(scopedTokens(env, 'EMQ_GATEWAY_TOKENS')),
    host: text(env, 'EMQ_GATEWAY_HOST')!,
    port: wholeNumber(env, 'EMQ_GATEWAY_PORT'),
    timeoutMs,
    wireVersion: wireVersion(env, 'EMQ_WIRE_VERSION'),
    limits: limitsFrom(env, 'EMQ_GATEWAY'),
    tls: tlsFrom(env),
    logLevel: choice<LogLevel>(env, 'EMQ_LOG'),
    metricsToken: text(env, 'EMQ_METRICS_TOKEN'),
    settings: {
      maxBodyBytes: wholeNumber(env, 'EMQ_GATEWAY_MAX_BODY'),
      producerMaxBodyBytes: wholeNumber(env, 'EMQ_GATEWAY_PRODUCER_MAX_BODY'),
      maxPipeline: wholeNumber(env, 'EMQ_GATEWAY_MAX_PIPELINE'),
      adminMaxArgs: wholeNumber(env, 'EMQ_GATEWAY_ADMIN_MAX_ARGS'),
      queryToken: onOff(env, 'EMQ_GATEWAY_QUERY_TOKEN'),
      waitMaxMs,
    },
  };
}
