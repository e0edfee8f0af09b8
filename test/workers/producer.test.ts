// The producer Worker inside workerd, against the real gateway process and a real Valkey
// (started Node-side by test/workers/global-setup.ts). Every refusal is checked for
// "nothing written" through the gateway's admin token.
import { describe, expect, inject, it } from 'vitest';
import { producerFor } from '../../functions/producer/worker.js';
import { mintId } from '../../shared/ids.js';
import { dedupIdOf, sha256Hex } from '../../shared/keyspace.js';
import { libraryConsumer } from '../support/consumer.js';

import { gatewayAdmin } from './gateway-admin.js';
const gw = inject('gateway');
const TOKEN = 'caller-token-0123456789abcdef';
const NARROW = 'narrow-token-0123456789abcdef';
const base = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([
    { token: TOKEN, queues: ['*'], rawPrefixes: true },
    { token: NARROW, queues: ['narrow', 'tenant-a.*'] },
  ]),
  EMQ_MAX_PAYLOAD_BYTES: '1048576',
  EMQ_QUEUE_GROUPS: JSON.stringify({ 'laned-*': 'ORG0KHTOWnGLuC' }),
};
const app = producerFor(base);

let n = 0;
const fresh = (label = 'wq') => `${label}-${Date.now().toString(36)}-${(n++).toString(36)}`;

function send(path: string, init: RequestInit & { token?: string | null } = {}, target = app): Promise<Response> {
  const { token = TOKEN, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token) headers.set('Authorization', `Bearer ${token}`);
  return Promise.resolve(target.fetch(new Request(`http://producer${path}`, { ...rest, headers }), base));
}

/** One command through the gateway's admin token; bulk replies as bytes. */
const admin = gatewayAdmin(gw);
const text = (b: unknown) => new TextDecoder().decode(b as Uint8Array);
/** The library consumer model, its commands sent through the gateway's admin token (bulk replies as Buffers, as glide gives them). */
const asBuffers = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v) : Array.isArray(v) ? v.map(asBuffers) : v);
const consumerOf = (q: string) => libraryConsumer({ call: async (...args) => asBuffers(await admin(...args.map(String))) as never }, q);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Every key of a queue: the whole footprint a request may have left. */
const footprint = async (q: string) => ((await admin('KEYS', `emq:{${q}}:*`)) as Uint8Array[]).map(text).sort();

async function expectProblem(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('Content-Type')).toBe('application/problem+json');
  const p = (await res.json()) as Record<string, unknown>;
  expect(p).toMatchObject({ type: `urn:emq:problem:${code}`, code, status });
  expect(typeof p.detail).toBe('string');
  return p;
}

describe('producer Worker in workerd', () => {
  it('runs in workerd', () => {
    expect(navigator.userAgent).toBe('Cloudflare-Workers');
  });

  it('POST /v1/queues/:q/jobs: 201, Location, the row born with the exact bytes', async () => {
    const q = fresh();
    const payload = Uint8Array.from({ length: 256 }, (_, i) => i);
    const res = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: payload });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; queue: string; verdict: string };
    expect(body).toMatchObject({ queue: q, verdict: 'enqueued' });
    expect(body.id).toMatch(/^JOB[0-9A-Za-z]{11}$/);
    expect(res.headers.get('Location')).toBe(`/v1/queues/${q}/jobs/${body.id}`);
    const stored = (await admin('HGET', `emq:{${q}}:job:${body.id}`, 'payload')) as Uint8Array;
    expect([...stored]).toEqual([...payload]);
    expect(text(await admin('HGET', `emq:{${q}}:job:${body.id}`, 'state'))).toBe('pending');
    // a bulk reply, base64 as Upstash sends it with Upstash-Encoding (the gateway speaks RESP2: the server's own form)
    expect(Number(text(await admin('ZSCORE', `emq:{${q}}:pending`, body.id)))).toBe(0);
  });

  it('Emq-Job-Id: a retry answers 200 duplicate with the same shape, and the first payload stays', async () => {
    const q = fresh();
    const id = mintId();
    const first = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'first', headers: { 'Emq-Job-Id': id } });
    expect(first.status).toBe(201);
    const again = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'second', headers: { 'Emq-Job-Id': id } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id, queue: q, verdict: 'duplicate' });
    expect(text(await admin('HGET', `emq:{${q}}:job:${id}`, 'payload'))).toBe('first');
    expect(await admin('ZCARD', `emq:{${q}}:pending`)).toBe(1);
  });

  it('GET /v1/queues/:q/jobs/:id: state and attempts, no payload; 404 for none', async () => {
    const q = fresh();
    const id = mintId();
    await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'secret cargo', headers: { 'Emq-Job-Id': id } });
    const res = await send(`/v1/queues/${q}/jobs/${id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id, queue: q, state: 'pending', attempts: 0 });
    await expectProblem(await send(`/v1/queues/${q}/jobs/${mintId()}`), 404, 'not_found');
  });

  it('POST batch: 1,000 items in one request, verdicts in request order, text and base64 exact', async () => {
    const q = fresh();
    const ids = Array.from({ length: 999 }, () => mintId());
    const items: Array<Record<string, string>> = ids.map((id, i) =>
      i % 2 ? { id, payload: `job ${i} ✓` } : { id, payloadBase64: btoa(String.fromCharCode(0, 255, i % 256)) },
    );
    items.push({ id: ids[0]!, payload: 'a repeat' });
    const res = await send(`/v1/queues/${q}/batch`, { method: 'POST', body: JSON.stringify(items) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { queue: string; results: Array<{ id: string; verdict: string }> };
    expect(body.queue).toBe(q);
    expect(body.results).toHaveLength(1000);
    expect(body.results.map((r) => r.id)).toEqual([...ids, ids[0]]);
    expect(body.results.slice(0, 999).every((r) => r.verdict === 'enqueued')).toBe(true);
    expect(body.results[999]!.verdict).toBe('duplicate');
    expect(await admin('ZCARD', `emq:{${q}}:pending`)).toBe(999);
    expect([...((await admin('HGET', `emq:{${q}}:job:${ids[4]}`, 'payload')) as Uint8Array)]).toEqual([0, 255, 4]);
    expect(text(await admin('HGET', `emq:{${q}}:job:${ids[5]}`, 'payload'))).toBe('job 5 ✓');
  });

  it('a batch item without an id gets a minted one', async () => {
    const q = fresh();
    const res = await send(`/v1/queues/${q}/batch`, { method: 'POST', body: JSON.stringify([{ payload: 'a' }, { payload: 'b' }]) });
    const { results } = (await res.json()) as { results: Array<{ id: string; verdict: string }> };
    expect(results[0]!.id < results[1]!.id).toBe(true);
    expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued']);
  });

  describe('refusals write nothing', () => {
    it('401: no token, a wrong token', async () => {
      const q = fresh();
      await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', token: null }), 401, 'unauthorized');
      await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', token: `${TOKEN}x` }), 401, 'unauthorized');
      await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', token: TOKEN.slice(0, -1) }), 401, 'unauthorized');
      await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', token: TOKEN.toUpperCase() }), 401, 'unauthorized');
      await expectProblem(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: '[{"payload":"x"}]', token: null }), 401, 'unauthorized');
      await expectProblem(await send(`/v1/queues/${q}/jobs/${mintId()}`, { token: 'nope' }), 401, 'unauthorized');
      expect(await footprint(q)).toEqual([]);
    });

    it('403: a queue the token may not use (exact names and prefixes)', async () => {
      const q = fresh('other');
      await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', token: NARROW }), 403, 'forbidden_queue');
      await expectProblem(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: '[{"payload":"x"}]', token: NARROW }), 403, 'forbidden_queue');
      expect(await footprint(q)).toEqual([]);
      const allowed = `tenant-a.${fresh()}`;
      expect((await send(`/v1/queues/${allowed}/jobs`, { method: 'POST', body: 'x', token: NARROW })).status).toBe(201);
    });

    it('400: an invalid queue name, an invalid or foreign-kind id', async () => {
      await expectProblem(await send(`/v1/queues/${encodeURIComponent('a{b}')}/jobs`, { method: 'POST', body: 'x' }), 400, 'invalid_queue');
      expect(await footprint('a{b}')).toEqual([]);
      const q = fresh();
      const bad = await expectProblem(
        await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { 'Emq-Job-Id': 'JOBnope' } }),
        400,
        'invalid_id',
      );
      expect(bad.detail).toMatch(/7 characters long; a branded id is exactly 14/);
      await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { 'Emq-Job-Id': 'task-1' } }), 400, 'invalid_id');
      // the old 29-character format is not a branded id
      const old = await expectProblem(
        await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { 'Emq-Job-Id': 'JOB01m8ktkzg6eaatm9sqpt0r51n2' } }),
        400,
        'invalid_id',
      );
      expect(old.detail).toMatch(/29 characters long/);
      // shape first, kind second: a well-formed id of another namespace is the wire's EMQKIND refusal
      const kind = await expectProblem(
        await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { 'Emq-Job-Id': 'ORD0NgWEfAEJfs' } }),
        400,
        'invalid_id',
      );
      expect(kind.detail).toMatch(/^EMQKIND: .*namespace ORD; a job id must be JOB-namespaced/);
      const kindGet = await expectProblem(await send(`/v1/queues/${q}/jobs/ORD0NgWEfAEJfs`), 400, 'invalid_id');
      expect(kindGet.detail).toMatch(/^EMQKIND: /);
      await expectProblem(await send(`/v1/queues/emq/jobs`, { method: 'POST', body: 'x' }), 400, 'invalid_queue');
      expect(await footprint('emq')).toEqual([]);
      expect(await footprint(q)).toEqual([]);
    });

    it('400: a bad batch item, named by index; nothing of the batch is written', async () => {
      const q = fresh();
      const cases: Array<[unknown, RegExp]> = [
        [[{ payload: 'ok' }, { payloadBase64: 'not base64!' }], /item 1: /],
        [[{ payload: 'ok' }, { payload: 'x', id: 'JOB1' }], /item 1: /],
        [[{ payload: 'ok' }, { nope: 1 }], /item 1: /],
        [[{ payload: 'a', payloadBase64: 'YQ==' }], /item 0: /],
        [Array.from({ length: 1001 }, () => ({ payload: 'x' })), /at most 1000/],
        [[], /non-empty/],
        [{ payload: 'x' }, /array/],
      ];
      for (const [body, why] of cases) {
        const p = await expectProblem(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: JSON.stringify(body) }), 400, 'invalid_batch');
        expect(p.detail).toMatch(why);
      }
      const lone = await send(`/v1/queues/${q}/batch`, { method: 'POST', body: '[{"payload":"ok"},{"payload":"\\ud800"}]' });
      expect((await expectProblem(lone, 400, 'invalid_batch')).detail).toMatch(/item 1: .*lone surrogate/);
      const notUtf8 = new Uint8Array([0x5b, 0x7b, 0x22, 0x70, 0x61, 0x79, 0x6c, 0x6f, 0x61, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x5d]);
      await expectProblem(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: notUtf8 }), 400, 'invalid_batch');
      await expectProblem(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: '{not json' }), 400, 'invalid_batch');
      expect(await footprint(q)).toEqual([]);
    });

    it('413: a payload over EMQ_MAX_PAYLOAD_BYTES, declared or streamed', async () => {
      const env = { ...base, EMQ_MAX_PAYLOAD_BYTES: '1024' };
      const small = producerFor(env);
      const q = fresh();
      const over = new Uint8Array(1025);
      const viaSmall = (init: RequestInit) =>
        Promise.resolve(small.fetch(new Request(`http://producer/v1/queues/${q}/jobs`, { ...init, headers: { Authorization: `Bearer ${TOKEN}` } }), env));
      await expectProblem(await viaSmall({ method: 'POST', body: over }), 413, 'payload_too_large');
      const stream = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 64; i++) controller.enqueue(new Uint8Array(512));
          controller.close();
        },
      });
      await expectProblem(await viaSmall({ method: 'POST', body: stream, duplex: 'half' } as RequestInit), 413, 'payload_too_large');
      expect((await viaSmall({ method: 'POST', body: new Uint8Array(1024) })).status).toBe(201);
      expect(await footprint(q)).toHaveLength(2); // only the last, within the cap
    });

    it('503 with Retry-After when the Valkey path is down; /readyz too; /healthz stays 200', async () => {
      const env = { ...base, EMQ_REST_URL: 'http://127.0.0.1:9', EMQ_REST_TIMEOUT_MS: '1000' };
      const down = producerFor(env);
      const q = fresh();
      const res = await Promise.resolve(
        down.fetch(new Request(`http://producer/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { Authorization: `Bearer ${TOKEN}` } }), env),
      );
      await expectProblem(res, 503, 'unavailable');
      expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
      await expectProblem(await Promise.resolve(down.fetch(new Request('http://producer/readyz'), env)), 503, 'unavailable');
      expect((await Promise.resolve(down.fetch(new Request('http://producer/healthz'), env))).status).toBe(200);
      expect(await footprint(q)).toEqual([]);
    });

    it('500 misconfigured, without secrets, when EMQ_TOKENS is missing or broken', async () => {
      // the last: finding 3 (second review), "*" without "rawPrefixes": true
      const every = JSON.stringify([{ token: TOKEN, queues: ['*'] }]);
      for (const EMQ_TOKENS of [undefined, 'not json', '[{"token":"short","queues":["*"]}]', every]) {
        const env = { ...base, EMQ_TOKENS };
        const broken = producerFor(env);
        const res = await Promise.resolve(
          broken.fetch(new Request('http://producer/v1/queues/q/jobs', { method: 'POST', body: 'x', headers: { Authorization: `Bearer ${TOKEN}` } }), env),
        );
        const p = await expectProblem(res, 500, 'misconfigured');
        expect(JSON.stringify(p)).not.toContain(TOKEN);
        expect(p.detail).toMatch(/EMQ_TOKENS/);
      }
    });
  });

  it('a webhook verified with Web Crypto inside workerd: 201, a redelivery 200 duplicate, a bad signature 401 writing nothing', async () => {
    const q = fresh('hook');
    const env = {
      ...base,
      EMQ_SOURCES: JSON.stringify({
        hk: { kind: 'hmac', secrets: ['edge-secret-0123456789'], queue: q, signatureHeader: 'X-Sig', encoding: 'hex', idHeader: 'X-Id' },
      }),
    };
    const hooks = producerFor(env);
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode('edge-secret-0123456789'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const body = new Uint8Array([0xff, 0x00, 0x7b, 0x7d]);
    const sig = [...new Uint8Array(await crypto.subtle.sign('HMAC', key, body))].map((b) => b.toString(16).padStart(2, '0')).join('');
    const deliver = (signature: string) =>
      Promise.resolve(
        hooks.fetch(new Request('http://producer/v1/webhooks/hk', { method: 'POST', body, headers: { 'X-Sig': signature, 'X-Id': 'delivery-7' } }), env),
      );
    await expectProblem(await deliver('00'.repeat(32)), 401, 'invalid_signature');
    expect(await footprint(q)).toEqual([]);
    const first = await deliver(sig);
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: string };
    const again = await deliver(sig);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id, queue: q, verdict: 'duplicate' });
    // only the library's families: the row, the pending set, the dedup key holding the bare id
    // (an hmac delivery id is an unsigned header: the key is the signed body's)
    const de = `emq:{${q}}:de:${await dedupIdOf('webhook-body:hk', await sha256Hex(body))}`;
    expect(await footprint(q)).toEqual([de, `emq:{${q}}:job:${id}`, `emq:{${q}}:pending`].sort());
    expect(text(await admin('GET', de))).toBe(id);
    const envelope = JSON.parse(text(await admin('HGET', `emq:{${q}}:job:${id}`, 'payload'))) as { body: string };
    expect([...Uint8Array.from(atob(envelope.body), (c) => c.charCodeAt(0))]).toEqual([...body]);
  });

  it("Idempotency-Key in workerd: 201 then 200 duplicate; only the row, the pending set and the library's de: key are written", async () => {
    const q = fresh('idem');
    const post = (body: string) => send(`/v1/queues/${q}/jobs`, { method: 'POST', body, headers: { 'Idempotency-Key': 'order-77' } });
    const first = await post('one');
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: string };
    const again = await post('one');
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id, queue: q, verdict: 'duplicate' });
    await expectProblem(await post('two'), 422, 'idempotency_conflict');
    const keys = await footprint(q);
    expect(keys).toHaveLength(3);
    expect(keys.filter((k) => !/^emq:\{[^}]+\}:(job:JOB[0-9A-Za-z]{11}|pending|de:[0-9a-f]{64})$/.test(k))).toEqual([]);
    expect(text(await admin('GET', keys.find((k) => k.includes(':de:'))!))).toBe(id);
  });

  it('through the gateway (its producer policy allows @schedule and @genqueue): Emq-Delay is promoted only once due', async () => {
    const q = fresh('delay');
    const consumer = consumerOf(q);
    const res = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'later', headers: { 'Emq-Delay': '150ms' } });
    expect(res.status).toBe(201);
    const { id, verdict } = (await res.json()) as { id: string; verdict: string };
    expect(verdict).toBe('scheduled');
    expect(await consumer.promote()).toBe(0);
    expect(await consumer.claim()).toBeNull();
    await sleep(250);
    expect(await consumer.promote()).toBe(1);
    const claimed = await consumer.claim();
    expect(claimed?.id).toBe(id);
    expect(await consumer.complete(id, claimed!.token)).toBe('ok');
  });

  it('Emq-Group a,a,b,b is claimed a,b,a,b; a grouped, delayed job (Idempotency-Key: the -once twin) reaches its lane when due', async () => {
    const q = fresh('lanes');
    const consumer = consumerOf(q);
    const [A, B] = ['PRT0KHTOWnGLuC', 'USR0NgWEfAEJfs'];
    const ids: string[] = [];
    for (const g of [A, A, B, B]) {
      const res = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: g, headers: { 'Emq-Group': g } });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const claimed = [];
    for (let i = 0; i < 4; i++) claimed.push(await consumer.gclaim());
    expect(claimed.map((c) => c?.group)).toEqual([A, B, A, B]);
    expect(claimed.map((c) => c?.id)).toEqual([ids[0], ids[2], ids[1], ids[3]]);

    // Emq-Group with Idempotency-Key: @genqueue-once through the gateway
    const once = { 'Emq-Group': A, 'Idempotency-Key': 'lane-1' };
    const first = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'once', headers: once });
    expect(first.status).toBe(201);
    const onceId = ((await first.json()) as { id: string }).id;
    const repeat = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'once', headers: once });
    expect([repeat.status, ((await repeat.json()) as { id: string }).id]).toEqual([200, onceId]);
    expect(await consumer.gclaim()).toMatchObject({ id: onceId, group: A });

    const headers = { 'Emq-Group': B, 'Emq-Delay': '100ms', 'Idempotency-Key': 'late-1' };
    const late = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'late', headers });
    expect(late.status).toBe(201);
    const { id, verdict } = (await late.json()) as { id: string; verdict: string };
    expect(verdict).toBe('scheduled');
    const again = await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'late', headers });
    expect([again.status, ((await again.json()) as { id: string }).id]).toEqual([200, id]);
    await sleep(200);
    expect(await consumer.promote()).toBe(1);
    expect(await consumer.gclaim()).toMatchObject({ id, group: B });
  });

  it('EMQ_QUEUE_GROUPS puts an ungrouped job in its lane; a batch mixes flat, lane and scheduled items', async () => {
    const lq = fresh('laned');
    const res = await send(`/v1/queues/${lq}/jobs`, { method: 'POST', body: 'x' });
    const { id } = (await res.json()) as { id: string };
    expect(await consumerOf(lq).gclaim()).toMatchObject({ id, group: 'ORG0KHTOWnGLuC' });

    const q = fresh('mixed');
    const consumer = consumerOf(q);
    const items = [{ payload: 'flat' }, { payload: 'lane', group: 'PRT0KHTOWnGLuC' }, { payload: 'later', delay: '100ms' }];
    const batch = await send(`/v1/queues/${q}/batch`, { method: 'POST', body: JSON.stringify(items) });
    const results = ((await batch.json()) as { results: Array<{ id: string; verdict: string }> }).results;
    expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled']);
    expect((await consumer.claim())?.id).toBe(results[0]!.id);
    expect((await consumer.gclaim())?.id).toBe(results[1]!.id);
    await sleep(200);
    expect(await consumer.promote()).toBe(1);
    expect((await consumer.claim())?.id).toBe(results[2]!.id);
  });

  it('bad Emq-Delay, Emq-Not-Before, Emq-Group and batch items: 400 naming them, nothing written', async () => {
    const q = fresh('refused');
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'Emq-Delay': '100' }, 'invalid_delay'],
      [{ 'Emq-Delay': '-1s' }, 'invalid_delay'],
      [{ 'Emq-Delay': '366d' }, 'invalid_delay'],
      [{ 'Emq-Not-Before': 'soon' }, 'invalid_not_before'],
      [{ 'Emq-Not-Before': String(Date.now() + 400 * 86_400_000) }, 'invalid_not_before'],
      [{ 'Emq-Group': 'tenant' }, 'invalid_group'],
      [{ 'Emq-Delay': '1s', 'Emq-Not-Before': String(Date.now()) }, 'invalid_delay'],
    ];
    for (const [headers, code] of cases) {
      const p = await expectProblem(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers }), 400, code);
      expect(p.detail).toMatch(Object.keys(headers)[0]!);
    }
    const batch = JSON.stringify([{ payload: 'ok' }, { payload: 'bad', delay: '5' }]);
    expect(await expectProblem(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: batch }), 400, 'invalid_batch')).toMatchObject({ index: 1 });
    expect(await footprint(q)).toEqual([]);
  });

  it('/healthz and /readyz answer 200', async () => {
    expect(await (await send('/healthz', { token: null })).json()).toEqual({ status: 'ok' });
    expect(await (await send('/readyz', { token: null })).json()).toEqual({ status: 'ready' });
  });

  it('405 and 404 are problem documents too', async () => {
    await expectProblem(await send(`/v1/queues/${fresh()}/jobs`, { method: 'PUT', body: 'x' }), 405, 'not_allowed');
    await expectProblem(await send('/nowhere', { token: null }), 404, 'not_found');
  });
});
