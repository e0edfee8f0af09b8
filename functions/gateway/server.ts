// `emq gateway`: the gateway as a Node process, configured by environment (config.ts; the
// table of variables: shared/config/variables.ts). Beyond loopback, serve HTTPS
// (EMQ_GATEWAY_TLS_CERT, EMQ_GATEWAY_TLS_KEY) or put a proxy that terminates TLS in front:
// tokens travel in every request. A bad value stops the start, naming the variable, never its value.
// SIGTERM or SIGINT: stop taking requests, finish those in flight, close, exit 0.
// Each request logs a JSON line (EMQ_LOG); with EMQ_METRICS_TOKEN, GET /metrics serves
// Prometheus metrics (functions/http/metrics.ts).
import { redactUrl } from '../../shared/connections/valkey-url.js';
import { allScripts, controlScripts } from '../../shared/scripts.js';
import { createGateway } from './app.js';
import { glideBackend } from './backend.js';
import { listen } from '../http/listen.js';
import { flushLines, writeLine } from '../http/log-lines.js';
import { createMetrics, metricsEndpoint } from '../http/metrics.js';
import type { SummarySink } from '../http/request-record.js';
import { eventLine, requestLog } from '../http/request-log.js';
import { gatewayConfigFrom } from './config.js';

export interface RunningGateway {
  url: string;
  stop(): Promise<void>;
}

export async function startGateway(env: NodeJS.ProcessEnv = process.env): Promise<RunningGateway> {
  // every setting is read and checked before anything starts
  const { valkeyUrl, tokens, host, port, timeoutMs: timeout, wireVersion, limits, tls, logLevel, metricsToken, settings } = gatewayConfigFrom(env);
  const metrics = metricsToken === undefined ? undefined : createMetrics();
  const event = (msg: string, fields: Record<string, unknown>) => {
    const line = eventLine('gateway', logLevel, msg, fields);
    if (line !== undefined) writeLine(line);
  };

  const backend = glideBackend(
    { url: valkeyUrl, requestTimeoutMs: timeout, connectTimeoutMs: Math.min(timeout, 2_000), wireVersion },
    {
      lane(connection) {
        const availability = metrics?.availability(connection);
        return {
          down() {
            availability?.down();
            event('valkey unavailable', { connection });
          },
          up() {
            availability?.up();
            event('valkey available', { connection });
          },
        };
      },
      onFence(state) {
        metrics?.fence(state);
        event('fence', { state });
      },
    },
  );
  let draining = false;
  const sinks: SummarySink[] = [requestLog({ app: 'gateway', level: () => logLevel, write: writeLine })];
  if (metrics) sinks.push(metrics.sink);
  const listener = createGateway({
    backend,
    tokens,
    scripts: allScripts,
    control: controlScripts,
    ...settings,
    draining: () => draining,
    observe: { observer: metrics?.observer, sinks },
    // /metrics is the gateway's, not a path-style command: 404 while off
    metrics: metricsEndpoint({ token: metricsToken, metrics }),
  });
  const { server, url } = await listen({ listener, host, port, limits, tls });

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      draining = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      });
      await backend.close();
      flushLines();
    })());
  process.stderr.write(`gateway: fronting ${redactUrl(valkeyUrl)} with ${tokens.size} token(s) over ${tls ? 'HTTPS' : 'plain HTTP'}\n`);
  return { url, stop };
}
