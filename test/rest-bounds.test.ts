// The REST connection's bounds (shared/connections/rest-encode.ts), against the real gateway
// over real HTTP: a batch or a flow of payloads that are not UTF-8 travels in a few requests
// (base64 arguments, Emq-Arg-Encoding), not one per job; on an endpoint that does not read
// them (Upstash: here the gateway with the header stripped on its way) such calls go alone,
// at most maxRequests of them; whatever cannot fit is refused before anything is written.
// Over fetch and over undici (support/rest-sends.ts).
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom, restOptionsOf } from '../functions/producer/config.js';
import { connectRest } from '../shared/connections/rest.js';
import { TooLargeError, addFlow, enqueueMany, mintId } from '../shared/index.js';
import { freshQueue, type Admin } from './support/admin.js';
import { gatewayOn, type GatewayProcess } from './support/gateway.js';
import { SENDS, recording } from './support/rest-sends.js';

const binary = (i: number) => Uint8Array.from([0xff, i & 0xff, 0x00, 0xfe, (i >> 8) & 0xff]);

describe.each(SENDS)('REST connection bounds over $name', (via) => {
  const held = gatewayOn(inject('servers')[0]!.url);
  let gateway: GatewayProcess;
  let admin: Admin;
  beforeAll(async () => {
    ({ gw: gateway, admin } = held);
    // every script loaded, so the counts below are the steady state's (after SCRIPT FLUSH each
    // script costs one more request, once)
    const warm = connectRest({ url: gateway.url, token: gateway.producer, transport: via.transport() });
    await addFlow(warm, freshQueue('fw'), { parent: { payload: 'p' }, children: [{ payload: 'c', queue: freshQueue('fw') }] });
    await enqueueMany(warm, freshQueue('fw'), [{ payload: 'j' }]);
  });

  const payloadOf = async (q: string, id: string) => Buffer.from(((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer) ?? []);

  it('finding 4 (second review): a cross-queue flow of 1,000 children that are not UTF-8 takes a few requests (was 1,002), every byte exact', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport });
    const q = freshQueue('fo');
    const other = freshQueue('fo-x');
    const children = Array.from({ length: 1_000 }, (_, i) => ({ payload: binary(i), queue: i % 2 ? other : q }));
    const result = await addFlow(rest, q, { parent: { payload: binary(7) }, children });
    expect(result.verdict).toBe('enqueued');
    // the probe (once per connection), the children checked, the parent held, the children landed
    expect(rec.paths).toEqual(['/pipeline', '/pipeline', '/evalsha', '/pipeline']);
    for (const [i, c] of result.children.entries()) expect(Buffer.compare(await payloadOf(c.queue, c.id), Buffer.from(binary(i))), `child ${i}`).toBe(0);
    expect(Buffer.compare(await payloadOf(q, result.parent.id), Buffer.from(binary(7)))).toBe(0);
  });

  it('finding 4 (second review): a batch of 500 payloads that are not UTF-8 is one /pipeline request; the endpoint is probed once per connection', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport });
    const q = freshQueue('fb');
    const jobs = Array.from({ length: 500 }, (_, i) => ({ id: mintId(), payload: binary(i) }));
    expect((await enqueueMany(rest, q, jobs.slice(0, 250))).every((r) => r.verdict === 'enqueued')).toBe(true);
    expect(rec.paths).toEqual(['/pipeline', '/pipeline']);
    rec.paths.length = 0;
    // a view for another request shares what was learned
    const view = rest.withRequest({ headers: { 'X-Request-Id': 'r2' } });
    expect((await enqueueMany(view, q, jobs.slice(250))).every((r) => r.verdict === 'enqueued')).toBe(true);
    expect(rec.paths).toEqual(['/pipeline']);
    for (const [i, job] of jobs.entries()) expect(Buffer.compare(await payloadOf(q, job.id), Buffer.from(binary(i))), `job ${i}`).toBe(0);
  });

  it('finding 4 (second review): without base64 arguments (Upstash), such calls go alone, at most 8 requests; more are refused before anything is written', async () => {
    const rec = recording(via.transport(), true);
    // the producer's bound (restOptionsOf); a connection of the library's own has none
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport, maxRequests: 8 });
    const q = freshQueue('fu');
    const few = [{ id: mintId(), payload: 'text' }, ...Array.from({ length: 6 }, (_, i) => ({ id: mintId(), payload: binary(i) }))];
    expect((await enqueueMany(rest, q, few)).every((r) => r.verdict === 'enqueued')).toBe(true);
    expect(rec.paths.filter((p) => p === '/evalsha')).toHaveLength(6);
    for (const [i, job] of few.entries()) expect(Buffer.compare(await payloadOf(q, job.id), Buffer.from(few[i]!.payload))).toBe(0);

    const many = freshQueue('fu');
    rec.paths.length = 0;
    const jobs = Array.from({ length: 9 }, (_, i) => ({ id: mintId(), payload: binary(i) }));
    const err = await enqueueMany(rest, many, jobs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLargeError);
    expect((err as Error).message).toMatch(/9 requests/);
    expect(rec.paths).toEqual([]);
    expect(await admin.footprint(many)).toEqual({});

    // a cross-queue flow: refused before its parent is held
    const fq = freshQueue('fu');
    const fx = freshQueue('fu-x');
    const flow = { parent: { payload: 'p' }, children: Array.from({ length: 20 }, (_, i) => ({ payload: binary(i), queue: fx })) };
    await expect(addFlow(rest, fq, flow)).rejects.toBeInstanceOf(TooLargeError);
    expect(await admin.footprint(fq)).toEqual({});
    expect(await admin.footprint(fx)).toEqual({});
  });

  it("finding 6 (second review): a same-queue flow past one request's body is refused before it is sent; the endpoint's own 413 is told apart", async () => {
    const rec = recording(via.transport());
    // the gateway's producer cap, as the producer tells its connection (restOptionsOf)
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport, maxBodyBytes: 2 * 1024 * 1024 });
    const q = freshQueue('fs');
    const big = { parent: { payload: 'p' }, children: Array.from({ length: 3 }, () => ({ payload: new Uint8Array(900 * 1024).fill(0x61) })) };
    const err = await addFlow(rest, q, big).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLargeError);
    expect(rec.paths).toEqual([]);
    expect(await admin.footprint(q)).toEqual({});

    // a connection not told the endpoint's limit: the gateway's 413, in fixed words
    const loose = connectRest({ url: gateway.url, token: gateway.producer, transport: via.transport() });
    const refused = await addFlow(loose, q, big).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TooLargeError);
    // the endpoint's words, for the operator's log only (the producer hides them: error-problems.ts)
    expect((refused as TooLargeError).byEndpoint).toBe(true);
    expect((err as TooLargeError).byEndpoint).toBe(false);
    expect(await admin.footprint(q)).toEqual({});
  });

  it('finding 6 (second review): the producer answers such a flow 413 payload_too_large, naming neither the gateway nor its words, nothing written', async () => {
    const config = configFrom({ EMQ_TOKENS: JSON.stringify([{ token: 'bounds-token-0123456789', queues: ['fp*'], rawPrefixes: true }]) });
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: via.transport(), ...restOptionsOf(config) });
    const app = createProducerApp({ config: () => config, connection: () => rest });
    const q = freshQueue('fp');
    const chunk = Buffer.alloc(900 * 1024, 0x62).toString();
    const res = await app.fetch(
      new Request(`http://producer/v1/queues/${q}/flows`, {
        method: 'POST',
        headers: { Authorization: 'Bearer bounds-token-0123456789', 'Content-Type': 'application/json' },
        body: JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: chunk }, { payload: chunk }, { payload: chunk }] }),
      }),
    );
    const text = await res.text();
    expect(res.status).toBe(413);
    expect(JSON.parse(text).code).toBe('payload_too_large');
    expect(text).not.toMatch(/http:|127\.0\.0\.1|localhost|:\d{4,5}\b/);
    expect(await admin.footprint(q)).toEqual({});
  });

  it('the gateway reads Emq-Arg-Encoding: base64 arguments, echoes it, refuses bad base64 or another encoding (nothing written), and its policy still applies', async () => {
    const post = (body: string, encoding: string | undefined, token = gateway.producer) =>
      fetch(`${gateway.url}/pipeline`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...(encoding ? { 'Emq-Arg-Encoding': encoding } : {}) },
        body,
      });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const ok = await post(JSON.stringify([[b64('PING')]]), 'base64');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('Emq-Arg-Encoding')).toBe('base64');
    expect(await ok.json()).toEqual([{ result: 'PONG' }]);
    const q = freshQueue('fg');
    const key = `emq:{${q}}:x`;
    for (const [body, encoding] of [
      [JSON.stringify([[b64('SET'), b64(key), 'not base64!']]), 'base64'],
      [JSON.stringify([[b64('SET'), b64(key), b64('v')]]), 'base32'],
    ] as const) {
      const res = await post(body, encoding, gateway.admin);
      expect(res.status).toBe(400);
      expect(res.headers.get('Emq-Arg-Encoding')).toBeNull();
    }
    expect(await admin.footprint(q)).toEqual({});
    const refused = await post(JSON.stringify([[b64('SET'), b64(key), b64('v')]]), 'base64');
    expect(refused.status).toBe(403);
    expect(await admin.footprint(q)).toEqual({});
  });
});
