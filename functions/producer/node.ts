// The producer on Node (containers, Lambda-style hosts): the same app, over glide straight
// to Valkey when VALKEY_URL is set, else over REST like the Worker. `emq producer` runs it.
// Its configuration (node-config.ts; the table: shared/config/variables.ts) is read whole
// before anything connects: a bad value stops the start, naming the variable, never its value.
// Over glide, EMQ_WIRE_VERSION fences the connection (shared/fence.ts); through a gateway,
// the gateway's own EMQ_WIRE_VERSION fences it.
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { connectRest } from '../../shared/connections/rest.js';
import type { Connection } from '../../shared/index.js';
import { createProducerApp } from './app.js';
import { listen } from '../http/listen.js';
import { nodeProducerConfigFrom } from './node-config.js';

export interface RunningProducer {
  url: string;
  via: 'glide' | 'rest';
  stop(): Promise<void>;
}

export async function startProducer(env: NodeJS.ProcessEnv = process.env): Promise<RunningProducer> {
  // fail at start, not on the first request, and before anything connects
  const { config, host, port, limits, wireVersion, via } = nodeProducerConfigFrom(env);
  let connection: Connection;
  let glide: GlideConnection | undefined;
  if ('valkeyUrl' in via) {
    connection = glide = await connectGlide({ url: via.valkeyUrl, wireVersion });
  } else {
    connection = connectRest({ url: via.restUrl, token: via.restToken, timeoutMs: config.restTimeoutMs });
  }
  const app = createProducerApp({ config: () => config, connection: () => connection });
  const { server, url } = await listen({ fetch: app.fetch, host, port, limits }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  return {
    url,
    via: glide ? 'glide' : 'rest',
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await connection.close();
    },
  };
}
