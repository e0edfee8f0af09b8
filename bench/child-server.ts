// How each bench child server lives: it listens on a free loopback port, prints its URL as
// the first stdout line, and stops (idle keep-alive connections closed, then `cleanup`) on
// SIGTERM/SIGINT or when stdin closes (the bench is gone); past 3 s it exits anyway.
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function serveUntilTold(server: Server, cleanup: () => Promise<unknown> = async () => undefined): Promise<void> {
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  }
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), 3_000).unref();
    server.close(() => void cleanup().finally(() => process.exit(0)));
    server.closeIdleConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdin.on('end', stop).on('error', stop).resume();
}

/** serveUntilTold for a fetch handler (a Hono app) on @hono/node-server. */
export async function serveFetchUntilTold(fetch: (request: Request) => Response | Promise<Response>, cleanup?: () => Promise<unknown>): Promise<void> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server));
    s.once('error', reject);
  });
  await serveUntilTold(server, cleanup);
}
