// The floor of any REST-backed Worker, for the bench: the no-op Worker plus one fetch
// per request, a POST of the body to UPSTREAM_URL (a node:http no-op server) with a bearer
// token, its answer read in full, then 201 JSON. No retries, no timeout signal, no parsing:
// just the one outbound round trip the producer's REST path cannot avoid.
import { Hono } from 'hono';

type Env = { Bindings: { UPSTREAM_URL: string; UPSTREAM_TOKEN: string } };

const app = new Hono<Env>();
app.post('/v1/queues/:queue/jobs', async (c) => {
  const body = await c.req.arrayBuffer();
  const res = await fetch(c.env.UPSTREAM_URL, {
    method: 'POST',
    headers: { Authorization: `Bearer ${c.env.UPSTREAM_TOKEN}`, 'Content-Type': 'application/octet-stream' },
    body,
  });
  await res.text();
  if (res.status !== 200) return c.json({ error: `upstream answered ${res.status}` }, 502);
  return c.json({ id: 'noop', queue: c.req.param('queue'), verdict: 'enqueued' }, 201);
});

export default app;
