// The HTTP peer for the bench: Hono on @hono/node-server with BullMQ's Queue.add per
// request (ioredis underneath), on the producer's route shape:
//   POST /v1/queues/:queue/jobs  Authorization: Bearer <BENCH_TOKEN>, JSON body → 201 {id, queue, verdict}
// The way a Hono + BullMQ app is usually written: c.req.json(), queue.add('job', data).
// Env: VALKEY_URL, BENCH_TOKEN. Prints its URL as the first stdout line; exits on
// SIGTERM/SIGINT (queues closed), and when stdin closes (the bench is gone).
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { serveFetchUntilTold } from './child-server.js';
import { parseValkeyUrl } from '../shared/connections/valkey-url.js';
import { BULL_PREFIX } from './peers.js';

const url = process.env.VALKEY_URL;
const token = process.env.BENCH_TOKEN;
if (!url || !token) throw new Error('set VALKEY_URL and BENCH_TOKEN');
const { host, port, db, username, password } = parseValkeyUrl(url);
const connection = { host, port, db, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };

const queues = new Map<string, Queue>();
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

await serveFetchUntilTold(app.fetch, () => Promise.allSettled([...queues.values()].map((q) => q.close())));
