// The producer app's `caller` option (its seam for a user's own auth, when mounted in their
// app) and trustedCaller: in-process, over glide to the real Valkey. The mounted app as a
// user installs it is test/package.test.ts.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { trustedCaller } from '../functions/producer/tokens.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';

describe('createProducerApp({ caller })', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let glide: GlideConnection;
  let admin: Admin;
  // no EMQ_TOKENS anywhere: the caller is whoever X-Tenant names (the stand-in for a user's auth)
  const config = configFrom({}, { tokens: false });
  let app: ReturnType<typeof createProducerApp>;

  beforeAll(async () => {
    glide = await connectGlide(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
    app = createProducerApp({
      config: () => config,
      connection: () => glide,
      caller: (c) => {
        const tenant = c.req.header('X-Tenant');
        return tenant ? trustedCaller({ queues: [`${tenant}.*`], scope: tenant }) : undefined;
      },
    });
  });
  afterAll(async () => {
    await glide?.close();
    admin?.close();
  });

  const post = (queue: string, headers: Record<string, string>, body = 'x') =>
    app.fetch(new Request(`http://producer/v1/queues/${queue}/jobs`, { method: 'POST', body, headers }));

  it('no caller: 401 unauthorized, nothing written; a bearer token counts for nothing', async () => {
    const q = freshQueue('a.caller');
    const res = await post(q, { Authorization: 'Bearer any-token-0123456789' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('unauthorized');
    expect(await admin.footprint(q)).toEqual({});
  });

  it("the caller's queues hold: 201 for its own, 403 forbidden_queue for another's", async () => {
    const mine = freshQueue('a.caller');
    expect((await post(mine, { 'X-Tenant': 'a' })).status).toBe(201);
    const theirs = freshQueue('b.caller');
    const res = await post(theirs, { 'X-Tenant': 'a' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('forbidden_queue');
    expect(await admin.footprint(theirs)).toEqual({});
  });

  it("an Idempotency-Key lives in its caller's scope: the same key is one job per scope", async () => {
    const q = freshQueue('shared.caller');
    // both tenants may use shared.*: trustedCaller with a pattern each
    const both = createProducerApp({
      config: () => config,
      connection: () => glide,
      caller: (c) => trustedCaller({ queues: ['shared.*'], scope: c.req.header('X-Tenant')! }),
    });
    const send = async (tenant: string) => {
      const res = await both.fetch(
        new Request(`http://producer/v1/queues/${q}/jobs`, { method: 'POST', body: 'same', headers: { 'X-Tenant': tenant, 'Idempotency-Key': 'order-1' } }),
      );
      return { status: res.status, ...((await res.json()) as { id: string; verdict: string }) };
    };
    const a = await send('a');
    const again = await send('a');
    const b = await send('b');
    expect(a.verdict).toBe('enqueued');
    expect(again).toMatchObject({ status: 200, id: a.id, verdict: 'duplicate' });
    expect(b.verdict).toBe('enqueued');
    expect(b.id).not.toBe(a.id);
  });

  it('read with tokens: false and given no caller: 500 misconfigured on the queue routes, naming EMQ_TOKENS', async () => {
    const bare = createProducerApp({ config: () => config, connection: () => glide });
    const q = freshQueue('a.caller');
    const res = await bare.fetch(new Request(`http://producer/v1/queues/${q}/jobs`, { method: 'POST', body: 'x' }));
    expect(res.status).toBe(500);
    const p = (await res.json()) as { code: string; detail: string };
    expect(p.code).toBe('misconfigured');
    expect(p.detail).toMatch(/EMQ_TOKENS/);
    expect(await admin.footprint(q)).toEqual({});
  });

  it('trustedCaller refuses no queues, an empty pattern or an empty scope', () => {
    expect(() => trustedCaller({ queues: [], scope: 's' })).toThrow(/queues/);
    expect(() => trustedCaller({ queues: [''], scope: 's' })).toThrow(/queues/);
    expect(() => trustedCaller({ queues: ['*'], scope: '' })).toThrow(/scope/);
  });
});
