// The no-op floor of Hono on Node: the very app of the no-op Worker (workers/noop-worker.ts:
// the producer's route, the body read, 201 JSON, nothing else) on @hono/node-server, the
// stack `emq producer` and the Hono + BullMQ peer run on. Prints its URL as the first stdout
// line; exits 0 on SIGTERM/SIGINT, and on its own when stdin closes (the bench is gone).
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import app from './workers/noop-worker.js';

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
  setTimeout(() => process.exit(1), 3_000).unref();
  server.close(() => process.exit(0));
  (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop).on('error', stop).resume();
