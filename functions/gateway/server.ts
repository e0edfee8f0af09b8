// `emq gateway`: the gateway as a Node process, configured by environment.
//   VALKEY_URL            the server behind it (required)
//   EMQ_GATEWAY_TOKENS    scope:token,... with scope admin or producer (required)
//   EMQ_GATEWAY_HOST      default 127.0.0.1
//   EMQ_GATEWAY_TLS_CERT, EMQ_GATEWAY_TLS_KEY   paths of a PEM certificate chain and its key:
//                         HTTPS (both or neither; see tls.ts). Beyond loopback, serve HTTPS or
//                         put a proxy that terminates TLS in front: tokens travel in every request
//   EMQ_GATEWAY_PORT      default 8079 (0 picks a free port)
//   EMQ_GATEWAY_MAX_BODY  bytes, default 8388608 (8 MiB)
//   EMQ_GATEWAY_PRODUCER_MAX_BODY  a producer token's body cap, bytes, default 2097152 (2 MiB;
//                         never above EMQ_GATEWAY_MAX_BODY)
//   EMQ_GATEWAY_MAX_PIPELINE  commands per request, default 10000
//   EMQ_GATEWAY_TIMEOUT_MS    one Valkey command's budget, default 5000
//   EMQ_WIRE_VERSION      the EchoMQ wire version, default echomq:3.0.0: while Valkey's
//                         {emq}:version holds another, producer calls get 503 wire_mismatch
//   EMQ_GATEWAY_QUERY_TOKEN   1: accept ?_token= too; default 0 (a request carrying it gets 401)
//   EMQ_GATEWAY_HEADERS_TIMEOUT_MS, _REQUEST_TIMEOUT_MS, _KEEPALIVE_TIMEOUT_MS, _MAX_CONNECTIONS:
//                         the HTTP server's caps (../http/limits.ts), default 10000, 30000, 5000, 1024
// A bad value stops the start, naming the variable, never its value.
// SIGTERM or SIGINT: stop taking requests, finish those in flight, close, exit 0.
import { redactUrl } from '../../shared/connections/valkey-url.js';
import { wireVersionFrom } from '../../shared/fence.js';
import { allScripts } from '../../shared/scripts.js';
import { createGateway } from './app.js';
import { glideBackend } from './backend.js';
import { limitsFrom } from '../http/limits.js';
import { listen } from '../http/listen.js';
import { onOff, wholeNumber } from '../http/settings.js';
import { tlsFrom } from './tls.js';
import { parseTokens } from './tokens.js';

export interface RunningGateway {
  url: string;
  stop(): Promise<void>;
}

export async function startGateway(env: NodeJS.ProcessEnv = process.env): Promise<RunningGateway> {
  // every setting is read and checked before anything starts
  const valkeyUrl = env.VALKEY_URL;
  if (!valkeyUrl) throw new Error('VALKEY_URL is not set: the gateway needs the Valkey server to front');
  const tokens = parseTokens(env.EMQ_GATEWAY_TOKENS);
  const host = env.EMQ_GATEWAY_HOST || '127.0.0.1';
  const port = wholeNumber(env, 'EMQ_GATEWAY_PORT', 8079, 0, 65_535);
  const timeout = wholeNumber(env, 'EMQ_GATEWAY_TIMEOUT_MS', 5_000, 1);
  const wireVersion = wireVersionFrom(env);
  const limits = limitsFrom(env, 'EMQ_GATEWAY');
  const tls = tlsFrom(env);
  const settings = {
    maxBodyBytes: wholeNumber(env, 'EMQ_GATEWAY_MAX_BODY', 8 * 1024 * 1024, 1),
    producerMaxBodyBytes: wholeNumber(env, 'EMQ_GATEWAY_PRODUCER_MAX_BODY', 2 * 1024 * 1024, 1),
    maxPipeline: wholeNumber(env, 'EMQ_GATEWAY_MAX_PIPELINE', 10_000, 1),
    queryToken: onOff(env, 'EMQ_GATEWAY_QUERY_TOKEN'),
  };

  const backend = glideBackend({ url: valkeyUrl, requestTimeoutMs: timeout, connectTimeoutMs: Math.min(timeout, 2_000), wireVersion });
  let draining = false;
  const app = createGateway({ backend, tokens, scripts: allScripts, ...settings, draining: () => draining });
  const { server, url } = await listen({ fetch: app.fetch, host, port, limits, tls });

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      draining = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      });
      await backend.close();
    })());
  process.stderr.write(`gateway: fronting ${redactUrl(valkeyUrl)} with ${tokens.size} token(s) over ${tls ? 'HTTPS' : 'plain HTTP'}\n`);
  return { url, stop };
}
