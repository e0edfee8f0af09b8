// A Node HTTP server's caps and timeouts, from the environment, one prefix per app
// (EMQ_GATEWAY_, EMQ_PRODUCER_, EMQ_CONSOLE_): <PREFIX>_HEADERS_TIMEOUT_MS, _REQUEST_TIMEOUT_MS,
// _KEEPALIVE_TIMEOUT_MS, _MAX_CONNECTIONS, and the two connection-guard.ts enforces,
// _MAX_CONNECTIONS_PER_ADDRESS and _REQUEST_LINE_TIMEOUT_MS (bounds, defaults and meanings in the table,
// shared/config/variables.ts). Node's defaults let one client hold a connection ~64 s by
// trickling headers (headersTimeout 60 s, only checked every 30 s) or 300 s with a slow body,
// and take any number of connections: 3,000 half-open requests without a token were all held.
// A client cut off by the headers or request timeout gets 408 and a closed connection; one that
// never sent a request line is closed unanswered (connection-guard.ts).
import type { ServerOptions } from 'node:http';
import { ConfigError, wholeNumber, type Vars } from '../../shared/config/parse.js';

export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Connections one address may hold; 0: no share. */
  maxConnectionsPerAddress: number;
  /** A new connection's first request line (and, over HTTPS, its handshake before it) must arrive within it. */
  requestLineTimeoutMs: number;
}

/** The limits `<prefix>_*` set; a bad value throws a message naming the variable, never its value. */
export function limitsFrom(vars: Vars, prefix: 'EMQ_GATEWAY' | 'EMQ_PRODUCER' | 'EMQ_CONSOLE'): ServerLimits {
  const headers = `${prefix}_HEADERS_TIMEOUT_MS`;
  const request = `${prefix}_REQUEST_TIMEOUT_MS`;
  const limits = {
    headersTimeoutMs: wholeNumber(vars, headers),
    requestTimeoutMs: wholeNumber(vars, request),
    keepAliveTimeoutMs: wholeNumber(vars, `${prefix}_KEEPALIVE_TIMEOUT_MS`),
    maxConnections: wholeNumber(vars, `${prefix}_MAX_CONNECTIONS`),
    maxConnectionsPerAddress: wholeNumber(vars, `${prefix}_MAX_CONNECTIONS_PER_ADDRESS`),
    requestLineTimeoutMs: wholeNumber(vars, `${prefix}_REQUEST_LINE_TIMEOUT_MS`),
  };
  // Node refuses a headers timeout longer than the request's (the request includes its headers)
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new ConfigError(headers, `${headers} must not be above ${request}`);
  return limits;
}

/** The options node:http (or https) createServer takes for them; the connection caps are connection-guard.ts's. */
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
