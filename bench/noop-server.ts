// The no-op baseline for the gateway: the same stack (Hono on @hono/node-server, one Node
// process) answering every POST with {"result":1} after reading the body, and nothing else:
// no auth, no parsing, no Valkey. Prints its URL as the first stdout line; exits 0 on
// SIGTERM/SIGINT, and on its own when stdin closes (the bench that started it is gone).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';

const app = new Hono();
app.post('/*', async (c) => {
  await c.req.arrayBuffer();
  return c.json({ result: 1 });
});

const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
  const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  s.once('error', reject);
});
const { port } = server.address() as AddressInfo;
process.stdout.write(`http://127.0.0.1:${port}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  const forced = setTimeout(() => process.exit(1), 5_000);
  forced.unref();
  server.close(() => process.exit(0));
  (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop).on('error', stop).resume();
