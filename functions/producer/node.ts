// The producer on Node (containers, Lambda-style hosts): the same app, over glide straight
// to Valkey when VALKEY_URL is set, else over REST like the Worker. `emq producer` runs it.
//   HOST (default 127.0.0.1), PORT (default 8787), and the Worker's EMQ_* variables;
//   EMQ_WIRE_VERSION (default echomq:3.0.0) fences the glide connection (shared/fence.ts).
//   Through a gateway, the gateway's own EMQ_WIRE_VERSION fences it.
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { connectRest } from '../../shared/connections/rest.js';
import { wireVersionFrom } from '../../shared/fence.js';
import type { Connection } from '../../shared/index.js';
import { createProducer } from './app.js';
import { configFrom } from './config.js';

export interface RunningProducer {
  url: string;
  via: 'glide' | 'rest';
  stop(): Promise<void>;
}

export async function startProducer(env: NodeJS.ProcessEnv = process.env): Promise<RunningProducer> {
  const config = configFrom(env); // fail at start, not on the first request
  const wireVersion = wireVersionFrom(env);
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
  const host = env.HOST || '127.0.0.1';
  const port = env.PORT ? Number(env.PORT) : 8787;
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    via: glide ? 'glide' : 'rest',
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await connection.close();
    },
  };
}
