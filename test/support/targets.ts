// The connections the conformance suite runs over: every transport against every server.
import { inject } from 'vitest';
import type { Connection } from '../../shared/connection.js';
import { connectGlide } from '../../shared/connections/glide.js';
import { connectRest } from '../../shared/connections/rest.js';
import { startGatewayProcess } from './gateway.js';

export interface Target {
  /** "glide → valkey 8.0.1" */
  name: string;
  /** The server behind it, for looking at the keyspace directly. */
  url: string;
  /** A connection; closing it also stops whatever was started for it (a gateway). */
  connect(): Promise<Connection>;
}

/** The REST connection through a real gateway process, with a producer token. */
async function viaGateway(valkeyUrl: string): Promise<Connection> {
  const gateway = await startGatewayProcess(valkeyUrl);
  const rest = connectRest({ url: gateway.url, token: gateway.producer });
  return {
    run: (c) => rest.run(c),
    pipeline: (c) => rest.pipeline(c),
    async close() {
      await rest.close();
      const code = await gateway.stop();
      if (code !== 0) throw new Error(`gateway exited with ${code}: ${gateway.stderr()}`);
    },
  };
}

export function targets(): Target[] {
  return inject('servers').flatMap((server) => [
    { name: `glide → ${server.name}`, url: server.url, connect: () => connectGlide(server.url) },
    { name: `rest → gateway → ${server.name}`, url: server.url, connect: () => viaGateway(server.url) },
  ]);
}
