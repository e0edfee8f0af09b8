// POST /v1/queues/{q}/flows through the producer app on Node, over glide and over REST through
// a real gateway, on each server; served by the model of the library's consumer: the children
// are claimable at once, the parent only once the last child completes. The same parent id
// again is a 200 duplicate; every refusal (the body, the token's queues, a child that exists)
// writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import type { Connection } from '../shared/connection.js';
import { mintId } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { connectedTo, targets } from './support/targets.js';

const TOKEN = 'flows-test-token-0123456789';
const NARROW = 'flows-narrow-token-0123456789';

describe.each(targets())('POST /v1/queues/{q}/flows: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  let app: ReturnType<typeof createProducerApp>;
  beforeAll(() => {
    ({ conn, admin } = held);
    const config = configFrom({
      EMQ_TOKENS: JSON.stringify([
        { token: TOKEN, queues: ['*'], rawPrefixes: true },
        { token: NARROW, queues: ['fl-own*'], rawPrefixes: true },
      ]),
      EMQ_MAX_PAYLOAD_BYTES: '64',
      EMQ_MAX_BATCH_BYTES: '4096',
    });
    app = createProducerApp({ config: () => config, connection: () => conn });
  });
  afterAll(() => undefined);

  const post = async (q: string, body: unknown, token = TOKEN) => {
    const res = await app.fetch(
      new Request(`http://producer/v1/queues/${q}/flows`, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      }),
    );
    // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON came back
    return { status: res.status, location: res.headers.get('Location'), body: (await res.json()) as Record<string, any> };
  };

  it('a same-queue flow: 201, the children claimable, the parent released when the last completes; the same parent again: 200 duplicate', async () => {
    const q = freshQueue('fl');
    const consumer = libraryConsumer(admin, q);
    const res = await post(q, { parent: { payload: 'sum' }, children: [{ payload: 'a' }, { payloadBase64: '/wA=', onFailure: 'ignore' }] });
    expect(res.status).toBe(201);
    const { parent, children } = res.body;
    expect(res.body).toEqual({
      queue: q,
      parent: { id: parent.id },
      children: [
        { queue: q, id: children[0].id },
        { queue: q, id: children[1].id },
      ],
      verdict: 'enqueued',
    });
    expect(res.location).toBe(`/v1/queues/${q}/jobs/${parent.id}`);
    const row = await admin.hgetall(`emq:{${q}}:job:${children[1].id}`);
    expect(row.payload).toEqual(Buffer.from([0xff, 0]));
    expect(row.parent_policy?.toString()).toBe('id');

    const first = await consumer.claim();
    const second = await consumer.claim();
    expect([first?.id, second?.id].sort()).toEqual([children[0].id, children[1].id].sort());
    expect(await consumer.claim()).toBeNull();
    await consumer.complete(first!.id, first!.token);
    expect(await consumer.claim()).toBeNull();
    await consumer.complete(second!.id, second!.token);
    const released = await consumer.claim();
    expect(released?.id).toBe(parent.id);
    expect(released?.payload.toString()).toBe('sum');

    const again = await post(q, { parent: { payload: 'other', id: parent.id }, children: [{ payload: 'x' }] });
    expect(again.status).toBe(200);
    expect(again.body.verdict).toBe('duplicate');
    expect(again.body.parent.id).toBe(parent.id);
  });

  it('children in other queues: each in its own queue with parent_queue; the parent released once all complete', async () => {
    const q = freshQueue('fl');
    const [q2, q3] = [freshQueue('fl2'), freshQueue('fl3')];
    const ids = [mintId(), mintId(), mintId(), mintId()];
    const flow = {
      parent: { payload: 'P', id: ids[0] },
      children: [
        { payload: 'here', id: ids[1] },
        { payload: 'there', id: ids[2], queue: q2 },
        { payload: 'yonder', id: ids[3], queue: q3, onFailure: 'ignore' },
      ],
    };
    const res = await post(q, flow);
    expect(res.status).toBe(201);
    expect(res.body.children).toEqual([
      { queue: q, id: ids[1] },
      { queue: q2, id: ids[2] },
      { queue: q3, id: ids[3] },
    ]);
    expect((await admin.hgetall(`emq:{${q2}}:job:${ids[2]}`)).parent_queue?.toString()).toBe(q);
    expect((await admin.hgetall(`emq:{${q}}:job:${ids[1]}`)).parent_queue).toBeUndefined();
    // sent again whole: nothing doubled
    const again = await post(q, flow);
    expect([again.status, again.body.verdict]).toEqual([200, 'duplicate']);

    const [here, there, yonder] = [libraryConsumer(admin, q), libraryConsumer(admin, q2), libraryConsumer(admin, q3)];
    for (const consumer of [there, yonder]) {
      const job = await consumer.claim();
      await consumer.complete(job!.id, job!.token);
      await consumer.pump();
    }
    const child = await here.claim();
    expect(child?.id).toBe(ids[1]);
    expect(await here.claim()).toBeNull();
    await here.complete(child!.id, child!.token);
    expect((await here.claim())?.id).toBe(ids[0]);
  });

  it.each([
    ['not JSON', '{', 400, 'invalid_flow', undefined],
    ['no children', { parent: { payload: 'p' }, children: [] }, 400, 'invalid_flow', undefined],
    ['a nested child', { parent: { payload: 'p' }, children: [{ payload: 'c' }, { payload: 'c', children: [{ payload: 'g' }] }] }, 400, 'invalid_flow', 1],
    ['a child over the payload limit', { parent: { payload: 'p' }, children: [{ payload: 'x'.repeat(65) }] }, 400, 'invalid_flow', 0],
    ['a bad child queue', { parent: { payload: 'p' }, children: [{ payload: 'c', queue: '{x}' }] }, 400, 'invalid_flow', 0],
    ['a parent id of another kind', { parent: { payload: 'p', id: 'ACC0JZGkP8sq48' }, children: [{ payload: 'c' }] }, 400, 'invalid_flow', undefined],
    [
      'a body over EMQ_MAX_BATCH_BYTES',
      { parent: { payload: 'p' }, children: Array.from({ length: 200 }, () => ({ payload: 'c'.repeat(30) })) },
      413,
      'payload_too_large',
      undefined,
    ],
  ])('%s: refused, nothing written', async (_, body, status, code, index) => {
    const q = freshQueue('flbad');
    const before = await snapshot(admin, q);
    const res = await post(q, body);
    expect([res.status, res.body.code, res.body.index]).toEqual([status, code, index]);
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('a child in a queue the token may not use: 403 naming the child, nothing written in either queue', async () => {
    const q = freshQueue('fl-own');
    const other = freshQueue('fl-else');
    const before = await snapshot(admin, q, other);
    const res = await post(q, { parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', queue: other }] }, NARROW);
    expect([res.status, res.body.code, res.body.index]).toEqual([403, 'forbidden_queue', 1]);
    expect(res.body.detail).toContain(other);
    expect(await snapshot(admin, q, other)).toEqual(before);
    const own = await post(q, { parent: { payload: 'p' }, children: [{ payload: 'a' }] }, NARROW);
    expect(own.status).toBe(201);
  });

  it('a child id that names another job: 409 job_exists with its index, nothing written (same queue and across queues)', async () => {
    const q = freshQueue('fl');
    const other = freshQueue('fl2');
    const taken = mintId();
    await admin.call('HSET', `emq:{${q}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
    await admin.call('HSET', `emq:{${other}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
    const before = await snapshot(admin, q, other);
    const same = await post(q, { parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', id: taken }] });
    expect([same.status, same.body.code, same.body.index]).toEqual([409, 'job_exists', 1]);
    const across = await post(q, { parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', id: taken, queue: other }] });
    expect([across.status, across.body.code, across.body.index]).toEqual([409, 'job_exists', 1]);
    expect(await snapshot(admin, q, other)).toEqual(before);
  });
});
