// Tenants whose ids are prefixes of each other (acme, acme.corp) over real HTTP against a real
// Valkey: `emq producer` with EMQ_TOKENS, and the app mounted behind a stand-in auth with
// trustedCaller on a node:http server. Neither tenant reaches the other's queues: enqueue,
// batch, a flow's child and a read are refused, and nothing is written.
import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { trustedCaller } from '../functions/producer/tokens.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const valkeyUrl = () => inject('servers')[0]!.url;
// fresh tenant ids per run: the servers outlive one file
const ACME = `acme${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const CORP = `${ACME}.corp`;
const ACME_TOKEN = 'tenant-acme-token-0123456789';
const CORP_TOKEN = 'tenant-corp-token-0123456789';

interface Answer {
  status: number;
  body: { code?: string; id?: string; detail?: string };
}

async function send(base: string, path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Answer> {
  const res = await fetch(`${base}${path}`, init);
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** The refusals acme must get for acme.corp's queue, each writing nothing there, and corp's own job unread. */
async function expectKeptApart(admin: Admin, base: string, acme: Record<string, string>, corp: Record<string, string>, label: string) {
  const theirs = `${CORP}.payroll-${label}`;
  const mine = `${ACME}.corp-${label}`;
  const forbidden = (a: Answer) => expect({ status: a.status, code: a.body.code }).toEqual({ status: 403, code: 'forbidden_queue' });
  forbidden(await send(base, `/v1/queues/${theirs}/jobs`, { method: 'POST', body: 'raise', headers: acme }));
  forbidden(await send(base, `/v1/queues/${theirs}/batch`, { method: 'POST', body: '[{"payload":"raise"}]', headers: acme }));
  const flow = { parent: { payload: 'p' }, children: [{ payload: 'c', queue: theirs }] };
  forbidden(await send(base, `/v1/queues/${mine}/flows`, { method: 'POST', body: JSON.stringify(flow), headers: acme }));
  expect(await admin.footprint(theirs)).toEqual({});
  expect(await admin.footprint(mine)).toEqual({});

  // corp's own job: corp reads it, acme may not
  const own = await send(base, `/v1/queues/${theirs}/jobs`, { method: 'POST', body: 'salary', headers: corp });
  expect(own.status).toBe(201);
  expect((await send(base, `/v1/queues/${theirs}/jobs/${own.body.id}`, { headers: corp })).status).toBe(200);
  forbidden(await send(base, `/v1/queues/${theirs}/jobs/${own.body.id}`, { headers: acme }));

  // each keeps its own: acme.corp-… is a queue of acme's, never one of acme.corp's
  forbidden(await send(base, `/v1/queues/${mine}/jobs`, { method: 'POST', body: 'x', headers: corp }));
  expect(await admin.footprint(mine)).toEqual({});
  expect((await send(base, `/v1/queues/${mine}/jobs`, { method: 'POST', body: 'mine', headers: acme })).status).toBe(201);
}

describe('finding 3 (second review): tenant acme never reaches tenant acme.corp', () => {
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(valkeyUrl());
  });
  afterAll(() => admin?.close());

  describe('emq producer with EMQ_TOKENS acme.* and acme.corp.*', () => {
    let producer: ProducerProcess;
    beforeAll(async () => {
      const tokens = [
        { token: ACME_TOKEN, queues: [`${ACME}.*`] },
        { token: CORP_TOKEN, queues: [`${CORP}.*`] },
      ];
      producer = await startProducerProcess({ VALKEY_URL: valkeyUrl(), EMQ_TOKENS: JSON.stringify(tokens) });
    }, 30_000);
    afterAll(async () => {
      await producer?.stop();
    });

    it("finding 3 (second review): acme → acme.corp.payroll is 403 and writes nothing; acme cannot read acme.corp's job", async () => {
      await expectKeptApart(admin, producer.url, { Authorization: `Bearer ${ACME_TOKEN}` }, { Authorization: `Bearer ${CORP_TOKEN}` }, 'tokens');
    });
  });

  describe('the app behind your own auth: trustedCaller on node:http', () => {
    let glide: GlideConnection;
    let server: Server;
    let base: string;
    beforeAll(async () => {
      glide = await connectGlide(valkeyUrl());
      const config = configFrom({}, { tokens: false });
      // the stand-in auth: X-Tenant names the tenant; the README's form, `${tenant}.*`
      const app = createProducerApp({
        config: () => config,
        connection: () => glide,
        caller: (c) => {
          const tenant = c.req.header('X-Tenant');
          return tenant ? trustedCaller({ queues: [`${tenant}.*`], scope: tenant }) : undefined;
        },
      });
      server = createServer(getRequestListener(app.fetch));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    afterAll(async () => {
      await new Promise((r) => server?.close(r));
      await glide?.close();
    });

    it("finding 3 (second review): trustedCaller with each tenant's <tenant>.*: acme → acme.corp's queue 403, nothing written, no read", async () => {
      await expectKeptApart(admin, base, { 'X-Tenant': ACME }, { 'X-Tenant': CORP }, 'trusted');
    });
  });

  it('finding 3 (second review): EMQ_TOKENS with "*" and no "rawPrefixes": true stops emq producer, naming the entry by position, never the token', async () => {
    const tokens = [
      { token: CORP_TOKEN, queues: [`${CORP}.*`] },
      { token: ACME_TOKEN, queues: ['orders', '*'] },
    ];
    const failed = await startProducerProcess({ VALKEY_URL: valkeyUrl(), EMQ_TOKENS: JSON.stringify(tokens) }).then(
      async (p) => {
        await p.stop();
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(failed).toMatch(/EMQ_TOKENS\[1\]\.queues\[1\] is \*, which allows every queue/);
    expect(failed).toMatch(/"rawPrefixes": true in EMQ_TOKENS\[1\]/);
    expect(failed).not.toContain(ACME_TOKEN);
    expect(failed).not.toContain(CORP_TOKEN);
  }, 30_000);
});
