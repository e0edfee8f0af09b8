// A user's own Hono app on Node: the producer mounted under /api/emq behind the user's own auth
// (a tenant key; no EMQ_TOKENS at all), over the glide connection. Prints its URL.
import { serve } from '@hono/node-server';
import { connectGlide } from 'echomq-edge/glide';
import { configFrom, createProducerApp, trustedCaller } from 'echomq-edge/producer';
import { Hono } from 'hono';

const valkey = await connectGlide(process.env.VALKEY_URL!);
const config = configFrom({ EMQ_MAX_PAYLOAD_BYTES: '65536' }, { tokens: false });

const app = new Hono<{ Variables: { tenant: string } }>();
app.use('/api/emq/*', async (c, next) => {
  if (c.req.header('X-Tenant-Key') !== process.env.TENANT_KEY) return c.json({ error: 'not signed in' }, 401);
  c.set('tenant', 'tenant-a');
  await next();
});
app.route(
  '/api/emq',
  createProducerApp({
    config: () => config,
    connection: () => valkey,
    // what the auth above set: this tenant's queues (tenant-a.<one segment>), and its own Idempotency-Key scope
    caller: (c) => trustedCaller({ tenant: c.get('tenant'), queues: ['*'], scope: c.get('tenant') }),
  }),
);

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, ({ port }) => console.log(`http://127.0.0.1:${port}`));
