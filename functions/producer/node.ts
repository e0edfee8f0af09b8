// The producer on Node (containers, Lambda-style hosts): the same app, over glide straight
// to Valkey when VALKEY_URL is set, else over REST like the Worker. `emq producer` runs it.
//   HOST (default 127.0.0.1), PORT (default 8787), and the Worker's EMQ_* variables;
//   EMQ_WIRE_VERSION (default echomq:3.0.0) fences the glide connection (shared/fence.ts).
//   Through a gateway, the gateway's own EMQ_WIRE_VERSION fences it.
//   EMQ_PRODUCER_HEADERS_TIMEOUT_MS, _REQUEST_TIMEOUT_MS, _KEEPALIVE_TIMEOUT_MS, _MAX_CONNECTIONS:
//   the HTTP server's caps (../http/limits.ts), default 10000, 30000, 5000, 1024.
//   A bad value stops the start, naming the variable, never its value.
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { connectRest } from '../../shared/connections/rest.js';
import { wireVersionFrom } from '../../shared/fence.js';
import type { Connection } from '../../shared/index.js';
import { createProducer } from './app.js';
import { limitsFrom } from '../http/limits.js';
import { listen } from '../http/listen.js';
import { wholeNumber } from '../http/settings.js';
import { configFrom } from './config.js';

export interface RunningProducer {
  url: string;
  via: 'glide' | 'rest';
  stop(): Promise<void>;
}

export async function startProducer(env: NodeJS.ProcessEnv = process.env): Promise<RunningProducer> {
  // fail at start, not on the first request, and before anything connects
  const config = configFrom(env);
  const wireVersion = wireVersionFrom(env);
  const host = env.HOST || '127.0.0.1';
  const port = wholeNumber(env, 'PORT', 8787, 0, 65_535);
  const limits = limitsFrom(env, 'EMQ_PRODUCER');
  let connection: Connection;
  let glide: GlideConnection | undefined;
  if (env.VALKEY_URL) {
    connection = glide = await connectGlide({ url: env.VALKEY_URL, wireVersion });
  } else if (env.EMQ_REST_URL && env.EMQ_REST_TOKEN) {
    connection = connectRest({ url: env.EMQ_REST_URL, token: env.EMQ_REST_TOKEN });
  } else {
    throw new Error('set VALKEY_URL (glide, straight to Valkey) or EMQ_REST_URL and EMQ_REST_TOKEN (through a gateway)');
  }
  const app = createProducer({ config: () => config, connection: () => connection });
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
