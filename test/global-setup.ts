// Starts the servers the suites run against: a private valkey-server (installed from the
// distribution's packages when missing), and redis-server 7 too where the machine has it
// or can install it. VALKEY_URL instead runs everything against that one server.
import type { TestProject } from 'vitest/node';
import { ensureServer, findServer, startServer, type RunningServer } from '../scripts/valkey.js';

export interface ServerInfo {
  name: string;
  url: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    servers: ServerInfo[];
  }
}

export default async function setup(project: TestProject) {
  if (process.env.VALKEY_URL) {
    project.provide('servers', [{ name: 'VALKEY_URL', url: process.env.VALKEY_URL }]);
    return;
  }
  const main = ensureServer({ peers: true });
  const running: RunningServer[] = [await startServer({ binary: main })];
  const redis = findServer('redis');
  if (main.flavor === 'valkey' && redis) running.push(await startServer({ binary: redis }));
  else process.stderr.write('[setup] redis-server 7+ not available: the suites run against one server only\n');
  project.provide(
    'servers',
    running.map((s) => ({ name: s.name, url: s.url })),
  );
  return async () => {
    await Promise.all(running.map((s) => s.stop()));
  };
}
