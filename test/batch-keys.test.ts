// A batch item's `idempotencyKey`: the header's Idempotency-Key, per item (the scripts' -once
// twins in the batch's one pipeline). Through `emq producer` over glide and over REST (the
// gateway), to one Valkey: the verdicts, the dedup keys the library reads, a key reused inside
// the batch and in a later one, a conflict (422, the other items atomic on their own), and a
// bad key refused with nothing written.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const TOKEN = 'batch-keys-token-0123456789abcd';
const GROUP = 'GRP0JZGkP8sq48';
const valkey = () => inject('servers')[0]!.url;

let admin: Admin;
let gateway: GatewayProcess;
const producers: Record<string, ProducerProcess> = {};

beforeAll(async () => {
  admin = await connectAdmin(valkey());
  gateway = await startGatewayProcess(valkey());
  const tokens = JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]);
  producers.glide = await startProducerProcess({ VALKEY_URL: valkey(), EMQ_TOKENS: tokens, EMQ_DEDUPE_TTL_SECONDS: '3600' });
  producers.rest = await startProducerProcess({
    EMQ_REST_URL: gateway.url,
    EMQ_REST_TOKEN: gateway.producer,
    EMQ_TOKENS: tokens,
    EMQ_DEDUPE_TTL_SECONDS: '3600',
  });
});
afterAll(async () => {
  await Promise.all(Object.values(producers).map((p) => p.stop()));
  await gateway?.stop();
  admin?.close();
});

describe.each(['glide', 'rest'])('POST …/batch with idempotencyKey, emq producer over %s', (way) => {
  const post = async (queue: string, items: unknown[]) => {
    const res = await fetch(`${producers[way]!.url}/v1/queues/${queue}/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(items),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & { results: Array<{ id: string; verdict?: string; code?: string }> } };
  };
  const keyed = [
    { payload: 'flat', idempotencyKey: 'key 1' },
    { payload: 'laned', group: GROUP, idempotencyKey: 'key-2' },
    { payload: 'later', delay: '1m', idempotencyKey: 'key-3' },
  ];

  it('admits each item once per key: within the batch, in a later batch, and as the header would', async () => {
    const q = freshQueue('bk');
    const first = await post(q, [...keyed, { payload: 'flat', idempotencyKey: 'key 1' }, { payload: 'plain' }]);
    expect(first.status).toBe(200);
    const ids = first.body.results.map((r) => r.id);
    expect(first.body.results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled', 'duplicate', 'enqueued']);
    expect(ids[3]).toBe(ids[0]); // the repeat inside the batch answers the first item's job
    expect(await admin.zmembers(`emq:{${q}}:pending`)).toEqual([ids[0], ids[4]].sort());
    expect(await admin.zmembers(`emq:{${q}}:g:${GROUP}:pending`)).toEqual([ids[1]]);
    expect(await admin.zmembers(`emq:{${q}}:schedule`)).toEqual([ids[2]]);
    // one dedup key per key, holding its job's id, with the configured life
    // every SCAN step (the test server holds other tests' keys)
    const parked: Buffer[] = [];
    let cursor = '0';
    do {
      const [next, keys] = (await admin.call('SCAN', cursor, 'MATCH', `emq:{${q}}:de:*`, 'COUNT', '1000')) as [Buffer, Buffer[]];
      parked.push(...keys);
      cursor = String(next);
    } while (cursor !== '0');
    const values = await Promise.all(parked.map(async (k) => String(await admin.text('GET', k))));
    expect(values.sort()).toEqual(ids.slice(0, 3).sort());
    for (const k of parked) expect(Number(await admin.call('TTL', k))).toBeGreaterThan(3500);

    // the same keys again (a retry of the request, under fresh ids): the original jobs, nothing written
    const before = await snapshot(admin, q);
    const again = await post(q, keyed);
    expect(again.body.results).toEqual([
      { id: ids[0], verdict: 'duplicate' },
      { id: ids[1], verdict: 'duplicate' },
      { id: ids[2], verdict: 'duplicate' },
    ]);
    expect(await snapshot(admin, q)).toEqual(before);

    // the header's key and an item's key are one key: the header's request answers the item's job
    const header = await fetch(`${producers[way]!.url}/v1/queues/${q}/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Idempotency-Key': 'key 1' },
      body: 'flat',
    });
    expect(header.status).toBe(200);
    expect(await header.json()).toMatchObject({ id: ids[0], verdict: 'duplicate' });
  });

  it('a key reused with another payload or group: 422 idempotency_conflict; the other items are atomic on their own', async () => {
    const q = freshQueue('bk');
    const first = await post(q, keyed);
    const conflict = await post(q, [
      { payload: 'new' },
      { payload: 'other', idempotencyKey: 'key 1' },
      { payload: 'laned', group: 'GRP0JZGkP8sq49', idempotencyKey: 'key-2' },
    ]);
    expect(conflict.status).toBe(422);
    expect(conflict.body).toMatchObject({ code: 'idempotency_conflict' });
    const [landed, ...refused] = conflict.body.results;
    expect(landed).toMatchObject({ verdict: 'enqueued' });
    expect(refused.map((r) => r.code)).toEqual(['idempotency_conflict', 'idempotency_conflict']);
    expect(String(await admin.text('HGET', `emq:{${q}}:job:${first.body.results[0]!.id}`, 'payload'))).toBe('flat');
    expect((await admin.zmembers(`emq:{${q}}:pending`)).sort()).toEqual([first.body.results[0]!.id, landed!.id].sort());
  });

  it('a bad idempotencyKey: 400 invalid_batch naming the item, and nothing written', async () => {
    const q = freshQueue('bk');
    await post(q, keyed);
    for (const bad of [' leading space', 'k'.repeat(256), 'tab\there', 'é', 42, '']) {
      const before = await snapshot(admin, q);
      const res = await post(q, [{ payload: 'ok' }, { payload: 'x', idempotencyKey: bad }]);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_batch', index: 1 });
      expect(String(res.body.detail)).toContain('idempotencyKey');
      expect(await snapshot(admin, q)).toEqual(before);
    }
  });
});
