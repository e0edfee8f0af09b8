// The control routes (issue 25) over real HTTP: `emq producer` over glide and over REST through
// a real gateway (a control token), against every test server. After each route the library's
// own consumer transitions (test/support/consumer.ts: @claim, @gclaim, @promote, @complete)
// run on what it left: a removed job is never delivered, a refused one still completes, a
// promoted one is claimed at attempts 1, a lane at its limit or paused is skipped, a paused
// queue claims nothing while admission answers 201. Every refusal writes nothing.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess } from './support/producer.js';
import { producerOver, transports } from './support/producer-over.js';
import { until } from './support/listeners.js';

const ALL = 'control-all-token-0123456789abcd';
const READER = 'control-reader-token-0123456789a';
const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';
const TOKENS = JSON.stringify([
  { token: ALL, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
  { token: READER, queues: ['*'], rawPrefixes: true, can: ['read'] },
]);

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

describe.each(transports())('the control routes: $name', (transport) => {
  const over = producerOver(transport, { EMQ_TOKENS: TOKENS });

  const send = async (method: string, path: string, init: { body?: string; headers?: Record<string, string>; token?: string } = {}): Promise<Reply> => {
    const res = await fetch(`${over.producer.url}${path}`, {
      method,
      ...(init.body !== undefined && { body: init.body }),
      headers: { Authorization: `Bearer ${init.token ?? ALL}`, ...init.headers },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const post = async (q: string, payload: string, headers: Record<string, string> = {}) => {
    const answer = await send('POST', `/v1/queues/${q}/jobs`, { body: payload, headers });
    expect(answer.status).toBeLessThan(300);
    return answer.body.id as string;
  };
  /** A refusal: its status and code, and nothing written to these queues. */
  const refused = async (queues: string[], status: number, code: string, request: () => Promise<Reply>) => {
    const before = await snapshot(over.admin, ...queues);
    const answer = await request();
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
    expect(await snapshot(over.admin, ...queues)).toEqual(before);
  };

  it('DELETE removes a pending, a laned and a scheduled job; the consumer never sees them, and the lane leaves the ring', async () => {
    const q = freshQueue('ctl-rm');
    const consumer = libraryConsumer(over.admin, q);
    const flat = await post(q, 'flat');
    const laned = await post(q, 'laned', { 'Emq-Group': A });
    const later = await post(q, 'later', { 'Emq-Delay': '1h' });
    const kept = await post(q, 'kept');
    expect(await over.admin.list(`emq:{${q}}:ring`)).toEqual([A]);
    for (const [id, state] of [
      [flat, 'pending'],
      [laned, 'pending'],
      [later, 'scheduled'],
    ]) {
      expect(await send('DELETE', `/v1/queues/${q}/jobs/${id}`)).toEqual({ status: 200, body: { id, queue: q, verdict: 'removed', state } });
      expect((await send('GET', `/v1/queues/${q}/jobs/${id}`)).status).toBe(404);
    }
    expect(await over.admin.list(`emq:{${q}}:ring`)).toEqual([]);
    expect(await consumer.gclaim()).toBeNull();
    expect((await consumer.claim())?.id).toBe(kept);
    expect(await consumer.claim()).toBeNull();
    expect(Object.keys(await over.admin.footprint(q)).filter((k) => k.includes(':job:'))).toEqual([`emq:{${q}}:job:${kept}`]);
    await refused([q], 404, 'not_found', () => send('DELETE', `/v1/queues/${q}/jobs/${flat}`));
  });

  it('DELETE of a claimed job is 409 job_active and writes nothing; its worker then completes it', async () => {
    const q = freshQueue('ctl-active');
    const consumer = libraryConsumer(over.admin, q);
    const id = await post(q, 'busy', { 'Emq-Group': A });
    const claimed = await consumer.gclaim();
    expect(claimed?.id).toBe(id);
    await refused([q], 409, 'job_active', () => send('DELETE', `/v1/queues/${q}/jobs/${id}`));
    expect(await consumer.complete(id, claimed!.token)).toBe('ok');
    expect(await over.admin.footprint(q)).not.toHaveProperty(`emq:{${q}}:gactive`);
  });

  it("DELETE with the caller's Idempotency-Key frees it: the same key then makes a new job", async () => {
    const q = freshQueue('ctl-key');
    const first = await post(q, 'once', { 'Idempotency-Key': 'order-7' });
    expect(await post(q, 'once', { 'Idempotency-Key': 'order-7' })).toBe(first);
    const removed = await send('DELETE', `/v1/queues/${q}/jobs/${first}`, { headers: { 'Idempotency-Key': 'order-7' } });
    expect(removed.body.verdict).toBe('removed');
    const second = await post(q, 'once', { 'Idempotency-Key': 'order-7' });
    expect(second).not.toBe(first);
    // another job's key is left alone: it names that job, not this one
    const other = await post(q, 'other', { 'Idempotency-Key': 'order-8' });
    const plain = await post(q, 'plain');
    expect((await send('DELETE', `/v1/queues/${q}/jobs/${plain}`, { headers: { 'Idempotency-Key': 'order-8' } })).body.verdict).toBe('removed');
    expect(await post(q, 'other', { 'Idempotency-Key': 'order-8' })).toBe(other);
  });

  it('promote: a scheduled job is claimed next at attempts 1, in its lane too; a pending one is 409 not_scheduled', async () => {
    const q = freshQueue('ctl-promote');
    const consumer = libraryConsumer(over.admin, q);
    const flat = await post(q, 'later', { 'Emq-Delay': '1h' });
    const laned = await post(q, 'lane later', { 'Emq-Delay': '1h', 'Emq-Group': B });
    for (const id of [flat, laned])
      expect(await send('POST', `/v1/queues/${q}/jobs/${id}/promote`)).toEqual({ status: 200, body: { id, queue: q, verdict: 'promoted' } });
    expect(await consumer.claim()).toMatchObject({ id: flat, token: 1 });
    expect(await consumer.gclaim()).toMatchObject({ id: laned, token: 1, group: B });
    const pending = await post(q, 'now');
    await refused([q], 409, 'not_scheduled', () => send('POST', `/v1/queues/${q}/jobs/${pending}/promote`));
    await refused([q], 404, 'not_found', () => send('POST', `/v1/queues/${q}/jobs/${mintId()}/promote`));
  });

  it("PATCH moves a scheduled job's due time by Emq-Delay or Emq-Not-Before; a bad or missing time is 400, a pending job 409", async () => {
    const q = freshQueue('ctl-resched');
    const consumer = libraryConsumer(over.admin, q);
    const id = await post(q, 'later', { 'Emq-Delay': '1h' });
    const at = Date.now() + 2 * 3_600_000;
    const moved = await send('PATCH', `/v1/queues/${q}/jobs/${id}`, { headers: { 'Emq-Not-Before': String(at) } });
    expect(moved).toEqual({ status: 200, body: { id, queue: q, verdict: 'rescheduled', runAt: at } });
    expect(Number(await over.admin.text('ZSCORE', `emq:{${q}}:schedule`, id))).toBe(at);
    expect((await send('GET', `/v1/queues/${q}/jobs/${id}`)).body).toMatchObject({ state: 'scheduled', runAt: at });
    const soon = await send('PATCH', `/v1/queues/${q}/jobs/${id}`, { headers: { 'Emq-Delay': '50ms' } });
    expect(soon.body.verdict).toBe('rescheduled');
    for (const end = Date.now() + 3_000; (await consumer.promote()) === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    expect(await consumer.claim()).toMatchObject({ id, token: 1 });
    await refused([q], 400, 'invalid_delay', () => send('PATCH', `/v1/queues/${q}/jobs/${id}`));
    await refused([q], 400, 'invalid_delay', () => send('PATCH', `/v1/queues/${q}/jobs/${id}`, { headers: { 'Emq-Delay': 'soon' } }));
    await refused([q], 409, 'not_scheduled', () => send('PATCH', `/v1/queues/${q}/jobs/${id}`, { headers: { 'Emq-Delay': '1h' } }));
  });

  it('GET the queue: counts as the library reads them, every group (a pending-only one too), paged', async () => {
    const q = freshQueue('ctl-queue');
    const consumer = libraryConsumer(over.admin, q);
    await post(q, 'a1', { 'Emq-Group': A });
    await post(q, 'a2', { 'Emq-Group': A });
    await post(q, 'b1', { 'Emq-Group': B });
    await post(q, 'flat');
    await post(q, 'later', { 'Emq-Delay': '1h' });
    const claimed = await consumer.gclaim(); // A's first
    expect(claimed?.group).toBe(A);
    const view = await send('GET', `/v1/queues/${q}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ queue: q, paused: false, counts: { pending: 1, active: 1, scheduled: 1, dead: 0, completed: 0, failed: 0 } });
    expect(view.body.groups).toEqual([
      { group: A, pending: 1, active: 1, paused: false, ringed: true },
      { group: B, pending: 1, active: 0, paused: false, ringed: true },
    ]);
    const first = await send('GET', `/v1/queues/${q}?count=1`);
    expect([(first.body.groups as Array<{ group: string }>).map((g) => g.group), first.body.cursor]).toEqual([[A], A]);
    const next = await send('GET', `/v1/queues/${q}?count=1&cursor=${A}`);
    expect((next.body.groups as Array<{ group: string }>).map((g) => g.group)).toEqual([B]);
    expect((await send('GET', `/v1/queues/${freshQueue('ctl-none')}`)).body).toMatchObject({ paused: false, groups: [], counts: { pending: 0 } });
    await refused([q], 400, 'invalid_query', () => send('GET', `/v1/queues/${q}?count=0`));
  });

  it('pause: claims stop while admission answers 201; resume: claims go on', async () => {
    const q = freshQueue('ctl-pause');
    const consumer = libraryConsumer(over.admin, q);
    const held = await send('POST', `/v1/queues/${q}/pause`);
    expect(held).toMatchObject({ status: 200, body: { queue: q, paused: true } });
    const id = await post(q, 'while paused');
    expect((await send('GET', `/v1/queues/${q}`)).body).toMatchObject({ paused: true, counts: { pending: 1 } });
    expect(await consumer.claim()).toBeNull();
    expect(await send('POST', `/v1/queues/${q}/resume`)).toEqual({ status: 200, body: { queue: q, paused: false } });
    expect((await consumer.claim())?.id).toBe(id);
  });

  it('PUT a group: limit 1 holds the second claim until complete; paused keeps its depth and is skipped; a bad body is 400', async () => {
    const q = freshQueue('ctl-group');
    const consumer = libraryConsumer(over.admin, q);
    const set = (body: unknown) => send('PUT', `/v1/queues/${q}/groups/${A}`, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
    expect(await set({ limit: 1, weight: 3 })).toEqual({
      status: 200,
      body: { group: A, pending: 0, active: 0, limit: 1, weight: 3, paused: false, ringed: false },
    });
    await post(q, 'a1', { 'Emq-Group': A });
    await post(q, 'a2', { 'Emq-Group': A });
    const one = await consumer.gclaim();
    expect(one?.group).toBe(A);
    expect(await consumer.gclaim()).toBeNull();
    expect(await consumer.complete(one!.id, one!.token)).toBe('ok');
    const two = await consumer.gclaim();
    expect(two?.group).toBe(A);
    await post(q, 'a3', { 'Emq-Group': A });
    expect(await consumer.complete(two!.id, two!.token)).toBe('ok');
    expect((await set({ paused: true })).body).toMatchObject({ group: A, pending: 1, paused: true, ringed: false });
    expect(await consumer.gclaim()).toBeNull();
    expect((await send('GET', `/v1/queues/${q}/groups/${A}`)).body).toMatchObject({ pending: 1, paused: true });
    expect((await set({ paused: false })).body).toMatchObject({ paused: false, ringed: true });
    expect((await consumer.gclaim())?.group).toBe(A);
    for (const bad of [{}, { limit: 0 }, { weight: 1.5 }, { paused: 'yes' }, { colour: 'red' }, [1]]) {
      await refused([q], 400, 'invalid_body', () => set(bad));
    }
    await refused([q], 400, 'invalid_group', () => send('PUT', `/v1/queues/${q}/groups/lane-a`, { body: '{"limit":1}' }));
  });

  it('a token without control is 403 forbidden_action on every control route, and writes nothing', async () => {
    const q = freshQueue('ctl-forbidden');
    const id = await post(q, 'x', { 'Emq-Delay': '1h', 'Emq-Group': A });
    const as = { token: READER };
    for (const [method, path, init] of [
      ['DELETE', `/v1/queues/${q}/jobs/${id}`, as],
      ['POST', `/v1/queues/${q}/jobs/${id}/promote`, as],
      ['PATCH', `/v1/queues/${q}/jobs/${id}`, { ...as, headers: { 'Emq-Delay': '1m' } }],
      ['POST', `/v1/queues/${q}/pause`, as],
      ['POST', `/v1/queues/${q}/resume`, as],
      ['PUT', `/v1/queues/${q}/groups/${A}`, { ...as, body: '{"limit":1}' }],
    ] as const) {
      await refused([q], 403, 'forbidden_action', () => send(method, path, init));
    }
    // reads are the reader's
    expect((await send('GET', `/v1/queues/${q}/jobs/${id}?payload=1`, as)).body).toMatchObject({ id, state: 'scheduled', group: A, payload: 'x' });
    expect((await send('GET', `/v1/queues/${q}`, as)).status).toBe(200);
  });
});

describe.each(inject('servers').map((s) => ({ name: s.name, url: s.url })))('through a gateway token of the producer scope: $name', ({ url }) => {
  let gateway: GatewayProcess;
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(url);
    gateway = await startGatewayProcess(url);
  });
  afterAll(async () => {
    await gateway?.stop();
    admin?.close();
  });

  it('a control route is 502 upstream_auth, and nothing is written', async () => {
    const narrow = await startProducerProcess({ EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer, EMQ_TOKENS: TOKENS });
    try {
      const q = freshQueue('ctl-scope');
      const id = mintId();
      await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'pending', 'attempts', '0', 'payload', 'x');
      await admin.call('ZADD', `emq:{${q}}:pending`, '0', id);
      const before = await snapshot(admin, q);
      const res = await fetch(`${narrow.url}/v1/queues/${q}/jobs/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${ALL}` } });
      expect({ status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({ status: 502, code: 'upstream_auth' });
      expect(await snapshot(admin, q)).toEqual(before);
      // the reason goes to its stderr under the request id (which may land after the answer)
      await until(() => narrow.stderr().includes('a control script: the producer needs a control token'), 10_000, "the gateway's reason in the log");
    } finally {
      await narrow.stop();
    }
  });
});
