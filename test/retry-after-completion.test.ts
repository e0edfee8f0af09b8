// The soak's finding (docs/proof.md): a retried request whose first try landed, and whose job
// the library's consumer has completed since (its row is gone), must not run the job again.
// An id alone dedups only while the row exists (the library's rule), so the typed client sends
// each minted id as its Idempotency-Key too, and a batch item takes `idempotencyKey`. Each case
// loses the first answer after the job landed, completes the job with the library's consumer
// (test/support/consumer.ts), then lets the client's retry through: `emq producer`, glide, Valkey.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createProducerClient } from '../client/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const TOKEN = 'retry-after-completion-token-0123';
const GROUP = 'GRP0JZGkP8sq48';

describe('a retry after the job completed', () => {
  let producer: ProducerProcess;
  let admin: Admin;

  beforeAll(async () => {
    const valkey = inject('servers')[0]!.url;
    admin = await connectAdmin(valkey);
    producer = await startProducerProcess({
      VALKEY_URL: valkey,
      EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
    });
  });
  afterAll(async () => {
    admin?.close();
    await producer?.stop();
  });

  /** A fetch that forwards the first request, then completes what landed with the library's consumer, then answers 503: the answer was lost. */
  function losingFirstAnswer(queue: string) {
    const consumer = libraryConsumer(admin, queue);
    const sent: Array<Record<string, string>> = [];
    let calls = 0;
    const fetchImpl: typeof fetch = async (input, init) => {
      sent.push(Object.fromEntries(new Headers(init?.headers).entries()));
      const res = await fetch(input, init);
      if (calls++ > 0) return res;
      await res.arrayBuffer();
      await consumer.promote();
      for (let job = await consumer.claim(); job; job = await consumer.claim()) expect(await consumer.complete(job.id, job.token)).toBe('ok');
      for (let job = await consumer.gclaim(); job; job = await consumer.gclaim()) expect(await consumer.complete(job.id, job.token)).toBe('ok');
      return new Response('{"code":"unavailable"}', { status: 503, headers: { 'Retry-After': '0' } });
    };
    return { fetchImpl, sent };
  }
  const completed = async (queue: string) => Number((await admin.text('HGET', `emq:{${queue}}:metrics:completed`, 'count')) ?? 0);

  it('one job: the retry answers duplicate, with the same id, and writes nothing', async () => {
    const q = freshQueue('rac');
    const { fetchImpl, sent } = losingFirstAnswer(q);
    const client = createProducerClient({ url: producer.url, token: TOKEN, backoffMs: 1, fetch: fetchImpl });
    const result = await client.enqueue(q, 'run me once');
    expect(sent).toHaveLength(2);
    expect(sent[0]!['idempotency-key']).toBe(sent[0]!['emq-job-id']);
    expect(sent[1]).toEqual(sent[0]);
    expect(result).toEqual({ id: sent[0]!['emq-job-id'], queue: q, verdict: 'duplicate' });
    expect(await completed(q)).toBe(1);
    // no row and no pending entry: the job ran once and is gone
    expect(await admin.call('EXISTS', `emq:{${q}}:job:${result.id}`)).toBe(0);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(0);
  });

  it('a grouped job and a scheduled one (due at once) alike', async () => {
    for (const options of [{ group: GROUP }, { notBefore: Date.now() - 1_000 }]) {
      const q = freshQueue('rac');
      const { fetchImpl, sent } = losingFirstAnswer(q);
      const client = createProducerClient({ url: producer.url, token: TOKEN, backoffMs: 1, fetch: fetchImpl });
      const result = await client.enqueue(q, 'once', options);
      expect(result).toMatchObject({ id: sent[0]!['emq-job-id'], verdict: 'duplicate' });
      expect(await completed(q)).toBe(1);
      for (const set of ['schedule', 'pending', `g:${GROUP}:pending`]) expect(Number(await admin.call('ZCARD', `emq:{${q}}:${set}`))).toBe(0);
    }
  });

  it('a batch: each item carries its minted id as idempotencyKey, and the retry answers duplicate for each', async () => {
    const q = freshQueue('rac');
    const bodies: unknown[] = [];
    const { fetchImpl } = losingFirstAnswer(q);
    const client = createProducerClient({
      url: producer.url,
      token: TOKEN,
      backoffMs: 1,
      fetch: (input, init) => {
        bodies.push(JSON.parse(String(init?.body)));
        return fetchImpl(input, init);
      },
    });
    const results = await client.enqueueMany(q, [{ payload: 'a' }, { payload: 'b', group: GROUP }, { payload: 'c', idempotencyKey: 'mine' }]);
    const items = bodies[0] as Array<{ id: string; idempotencyKey: string }>;
    expect(items.map((i) => i.idempotencyKey)).toEqual([items[0]!.id, items[1]!.id, 'mine']);
    expect(bodies[1]).toEqual(bodies[0]);
    expect(results).toEqual(items.map((i) => ({ id: i.id, verdict: 'duplicate' })));
    expect(await completed(q)).toBe(3);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(0);
  });

  it("a flow needs no key: its parent's :dependencies, which the library's fan-in leaves behind, answers the retry duplicate", async () => {
    const q = freshQueue('rac');
    const { fetchImpl, sent } = losingFirstAnswer(q);
    const client = createProducerClient({ url: producer.url, token: TOKEN, backoffMs: 1, fetch: fetchImpl });
    const flow = await client.flow(q, { parent: { payload: 'P' }, children: [{ payload: 'a' }, { payload: 'b' }] });
    expect(sent).toHaveLength(2);
    expect(flow.verdict).toBe('duplicate');
    expect(await completed(q)).toBe(3); // both children, then the parent they released
    expect(await admin.call('EXISTS', `emq:{${q}}:job:${flow.parent.id}`)).toBe(0);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(0);
  });

  it('keyMintedJobs: false sends the id alone, which the library admits again once its row is gone (the documented rule)', async () => {
    const q = freshQueue('rac');
    const { fetchImpl, sent } = losingFirstAnswer(q);
    const client = createProducerClient({ url: producer.url, token: TOKEN, backoffMs: 1, fetch: fetchImpl, keyMintedJobs: false });
    const result = await client.enqueue(q, 'twice');
    expect(sent[0]!['idempotency-key']).toBeUndefined();
    expect(result.verdict).toBe('enqueued');
    expect(await completed(q)).toBe(1);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(1);
  });
});
