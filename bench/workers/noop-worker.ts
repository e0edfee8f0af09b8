// The no-op floor: Hono, the producer's framework, on the producer's route, reading the body
// and answering 201 JSON; no auth, no upstream. Bundled by esbuild at bench time and served
// by bare `workerd serve`; the same app runs on Node in noop-server.ts.
import { Hono } from 'hono';

const app = new Hono();
app.post('/v1/queues/:queue/jobs', async (c) => {
  await c.req.arrayBuffer();
  return c.json({ id: 'noop', queue: c.req.param('queue'), verdict: 'enqueued' }, 201);
});

export default app;
