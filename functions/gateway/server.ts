// `emq gateway`: the gateway as a Node process, configured by environment (config.ts; the
// table of variables: shared/config/variables.ts). Beyond loopback, serve HTTPS
// (EMQ_GATEWAY_TLS_CERT, EMQ_GATEWAY_TLS_KEY) or put a proxy that terminates TLS in front:
// tokens travel in every request. A bad value stops the start, naming the variable, never its value.
// SIGTERM or SIGINT: stop taking requests, finish those in flight, close, exit 0.
import { redactUrl } from '../../shared/connections/valkey-url.js';
import { allScripts } from '../../shared/scripts.js';
import { createGateway } from './app.js';
import { glideBackend } from './backend.js';
import { listen } from '../http/listen.js';
import { gatewayConfigFrom } from './config.js';

export interface RunningGateway {
  url: string;
  stop(): Promise<void>;
}

export async function startGateway(env: NodeJS.ProcessEnv = process.env): Promise<RunningGateway> {
  // every setting is read and checked before anything starts
  const { valkeyUrl, tokens, host, port, timeoutMs: timeout, wireVersion, limits, tls, settings } = gatewayConfigFrom(env);

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
