// The producer on Node (containers, Lambda-style hosts): the same app, over glide straight
// to Valkey when VALKEY_URL is set, else over REST like the Worker (through undici, not fetch:
// rest-node.ts). `emq producer` runs it.
// Its configuration (node-config.ts; the table: shared/config/variables.ts) is read whole
// before anything connects: a bad value stops the start, naming the variable, never its value.
// Over glide, EMQ_WIRE_VERSION fences the connection (shared/fence.ts); through a gateway,
// the gateway's own EMQ_WIRE_VERSION fences it. Each request logs a JSON line (EMQ_LOG);
// with EMQ_METRICS_TOKEN, GET /metrics serves Prometheus metrics (functions/http/metrics.ts).
// The core's routes (routes.ts) are served by a node:http listener (node-http.ts). Its cron
// schedules (EMQ_CRONS) fire on its own timers (cron-timers.ts), logged and counted as requests.
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { connectNodeRest } from '../../shared/connections/rest-node.js';
import type { Connection } from '../../shared/index.js';
import { createProducerCore, minterOf } from './core.js';
import { producerListener } from './node-http.js';
import { listen } from '../http/listen.js';
import { flushLines, writeLine } from '../http/log-lines.js';
import { createMetrics, metricsEndpoint } from '../http/metrics.js';
import type { SummarySink } from '../http/request-record.js';
import { eventLine, requestLog } from '../http/request-log.js';
import { nodeProducerConfigFrom } from './node-config.js';
import { restOptionsOf } from './config.js';
import { fire, type Fired } from './cron-fire.js';
import { startCronTimers } from './cron-timers.js';

export interface RunningProducer {
  url: string;
  via: 'glide' | 'rest';
  /**
   * Fires now the schedules that fire in the minute holding `scheduledTime`, as their timers
   * would (each once per minute across every replica): a catch-up after an outage, or a test.
   */
  fire(scheduledTime: number): Promise<Fired[]>;
  stop(): Promise<void>;
}

export async function startProducer(env: NodeJS.ProcessEnv = process.env): Promise<RunningProducer> {
  // fail at start, not on the first request, and before anything connects
  const { config, host, port, limits, wireVersion, metricsToken, via } = nodeProducerConfigFrom(env);
  const metrics = metricsToken === undefined ? undefined : createMetrics();
  const event = (msg: string, fields: Record<string, unknown>) => {
    const line = eventLine('producer', config.logLevel, msg, fields);
    if (line !== undefined) writeLine(line);
  };
  let connection: Connection;
  let glide: GlideConnection | undefined;
  if ('valkeyUrl' in via) {
    const availability = metrics?.availability('glide');
    let lost = false;
    connection = glide = await connectGlide({
      url: via.valkeyUrl,
      wireVersion,
      onFence(state) {
        metrics?.fence(state);
        event('fence', { state });
      },
      onLost() {
        availability?.down();
        if (!lost) event('valkey unavailable', { connection: 'glide' });
        lost = true;
      },
      onReached() {
        availability?.up();
        if (lost) event('valkey available', { connection: 'glide' });
        lost = false;
      },
    });
  } else {
    connection = connectNodeRest({ url: via.restUrl, token: via.restToken, ...restOptionsOf(config) });
  }
  const sinks: SummarySink[] = [requestLog({ app: 'producer', level: () => config.logLevel, write: writeLine })];
  if (metrics) sinks.push(metrics.sink);
  const minter = minterOf(config);
  const observer = metrics?.observer;
  const core = createProducerCore({ config: () => config, connection: () => connection, minter, observe: { observer, sinks } });
  const options = { config, connection: () => connection, mint: minter, observer, sinks };
  let draining = false;
  const listener = producerListener(core, metricsEndpoint({ token: metricsToken, metrics }), () => draining);
  const { server, url } = await listen({ listener, host, port, limits }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  const timers = startCronTimers(config.crons, (schedule, at) => fire([schedule], at, options));
  return {
    url,
    via: glide ? 'glide' : 'rest',
    fire: (at) =>
      fire(
        config.crons.filter((s) => s.cron.firesIn(at)),
        at,
        options,
      ),
    async stop() {
      await timers.stop();
      draining = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await connection.close();
      flushLines();
    },
  };
}
