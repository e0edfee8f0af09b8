// `emq producer` over each transport against each test server, for the route tests: over glide
// (VALKEY_URL), and over REST through a real gateway with its control token. One describe block
// per case; the admin client reads the keyspace behind it.
import { afterAll, beforeAll, inject } from 'vitest';
import { connectAdmin, type Admin } from './admin.js';
import { startGatewayProcess, type GatewayProcess } from './gateway.js';
import { startProducerProcess, type ProducerProcess } from './producer.js';

export interface Transport {
  name: string;
  url: string;
  rest: boolean;
}

/** glide and REST, against every test server. */
export const transports = (): Transport[] =>
  inject('servers').flatMap((server) => [
    { name: `glide → ${server.name}`, url: server.url, rest: false },
    { name: `rest → gateway → ${server.name}`, url: server.url, rest: true },
  ]);

export interface ProducerOver {
  readonly producer: ProducerProcess;
  readonly admin: Admin;
  /** The gateway in front, over REST. */
  readonly gateway: GatewayProcess | undefined;
}

/** Starts `emq producer` with `env` over `transport` before the block's tests; stops it after. */
export function producerOver({ url, rest }: Transport, env: Record<string, string>): ProducerOver {
  const held = {} as { producer: ProducerProcess; admin: Admin; gateway: GatewayProcess | undefined };
  beforeAll(async () => {
    held.admin = await connectAdmin(url);
    held.gateway = rest ? await startGatewayProcess(url) : undefined;
    const via = held.gateway ? { EMQ_REST_URL: held.gateway.url, EMQ_REST_TOKEN: held.gateway.control } : { VALKEY_URL: url };
    held.producer = await startProducerProcess({ ...via, ...env });
  });
  afterAll(async () => {
    await held.producer?.stop();
    await held.gateway?.stop();
    held.admin?.close();
  });
  return held;
}
