// The bench's Node servers, one per process (`node dist/bench/servers.js <kind>`), each on a
// free loopback port, its URL the first stdout line, stopped on SIGTERM/SIGINT or when stdin
// closes (the bench is gone), past 3 s anyway. noop: the no-op Worker's app
// (workers/noop-worker.ts) on @hono/node-server, the stack the Hono + BullMQ peer runs on.
// tiny: the one-fetch Worker's upstream, plain node:http, 200 {"result":1}. bullmq: the HTTP
// peer, Hono + BullMQ's Queue.add on the producer's route, as such an app is usually written
// (c.req.json(), queue.add('job', data)); env VALKEY_URL, BENCH_TOKEN (its bearer token).
import { serve } from '@hono/node-server';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Prints `server`'s URL once it listens, and stops it (then `cleanup`) when told. */
async function serveUntilTold(server: Server, cleanup: () => Promise<unknown> = async () => undefined): Promise<void> {
  if (!server.listening) await once(server, 'listening');
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

const onHono = (fetch: (request: Request) => Response | Promise<Response>) => serve({ fetch, hostname: '127.0.0.1', port: 0 }) as Server;

const kind = process.argv[2];
if (kind === 'noop') {
  const { default: app } = await import('./workers/noop-worker.js');
  await serveUntilTold(onHono(app.fetch));
} else if (kind === 'tiny') {
  const reply = Buffer.from('{"result":1}');
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': reply.length });
      res.end(reply);
    });
  });
  server.keepAliveTimeout = 60_000;
  await serveUntilTold(server.listen(0, '127.0.0.1'));
} else if (kind === 'bullmq') {
  const [{ Queue }, { Hono }, { parseValkeyUrl }, { BULL_PREFIX, bullConnection }] = await Promise.all([
    import('bullmq'),
    import('hono'),
    import('../shared/connections/valkey-url.js'),
    import('./rows/peer.js'),
  ]);
  const url = process.env.VALKEY_URL;
  const token = process.env.BENCH_TOKEN;
  if (!url || !token) throw new Error('set VALKEY_URL and BENCH_TOKEN');
  const connection = bullConnection(parseValkeyUrl(url));
  const queues = new Map<string, InstanceType<typeof Queue>>();
  const queueOf = (name: string) => {
    let q = queues.get(name);
    if (!q) queues.set(name, (q = new Queue(name, { connection, prefix: BULL_PREFIX })));
    return q;
  };
  await queueOf('bench').waitUntilReady();
  const expected = `Bearer ${token}`;
  const app = new Hono();
  app.post('/v1/queues/:queue/jobs', async (c) => {
    if (c.req.header('Authorization') !== expected) return c.json({ error: 'unauthorized' }, 401);
    const queue = c.req.param('queue');
    const data: unknown = await c.req.json();
    const job = await queueOf(queue).add('job', data);
    return c.json({ id: job.id, queue, verdict: 'enqueued' }, 201);
  });
  await serveUntilTold(onHono(app.fetch), () => Promise.allSettled([...queues.values()].map((q) => q.close())));
} else {
  throw new Error(`usage: servers.js noop|tiny|bullmq (got ${kind})`);
}
