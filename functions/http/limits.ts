// A Node HTTP server's caps and timeouts, from the environment, one prefix per app
// (EMQ_GATEWAY_, EMQ_PRODUCER_). Node's defaults let one client hold a connection ~64 s by
// trickling headers (headersTimeout 60 s, only checked every 30 s) or 300 s with a slow body,
// and take any number of connections: 3,000 half-open requests without a token were all held.
//   <PREFIX>_HEADERS_TIMEOUT_MS    the request line and headers must arrive within it, default 10000
//   <PREFIX>_REQUEST_TIMEOUT_MS    the whole request, body included, default 30000
//   <PREFIX>_KEEPALIVE_TIMEOUT_MS  an idle keep-alive connection is closed after it, default 5000
//   <PREFIX>_MAX_CONNECTIONS       connections past it are closed as they arrive, default 1024
// A client cut off by a timeout gets 408 and a closed connection.
import type { ServerOptions } from 'node:http';
import { wholeNumber, type Vars } from './settings.js';

export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

const A_DAY_MS = 86_400_000;

/** The limits `<prefix>_*` set; a bad value throws a message naming the variable, never its value. */
export function limitsFrom(vars: Vars, prefix: 'EMQ_GATEWAY' | 'EMQ_PRODUCER'): ServerLimits {
  const headers = `${prefix}_HEADERS_TIMEOUT_MS`;
  const request = `${prefix}_REQUEST_TIMEOUT_MS`;
  const limits = {
    headersTimeoutMs: wholeNumber(vars, headers, 10_000, 1, A_DAY_MS),
    requestTimeoutMs: wholeNumber(vars, request, 30_000, 1, A_DAY_MS),
    keepAliveTimeoutMs: wholeNumber(vars, `${prefix}_KEEPALIVE_TIMEOUT_MS`, 5_000, 1, A_DAY_MS),
    maxConnections: wholeNumber(vars, `${prefix}_MAX_CONNECTIONS`, 1_024, 1, 1_000_000),
  };
  // Node refuses a headers timeout longer than the request's (the request includes its headers)
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new Error(`${headers} must not be above ${request}`);
  return limits;
}

/** The options node:http (or https) createServer takes for them; maxConnections is set on the server. */
export function serverOptions(limits: ServerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node enforces the first two only when it looks, every 30 s by default: look at least
    // four times per shortest timeout (at most once a second, at least every 10 ms)
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4))),
  };
}
