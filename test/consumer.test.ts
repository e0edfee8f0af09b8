// What we write, served by (a model of) the library's consumer: jobs enqueued through HTTP
// (single, Idempotency-Key, batch), a webhook and the CLI are claimed in mint order, pass
// the library's id check, carry their exact bytes, and complete with their fencing token.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startProducer, type RunningProducer } from '../functions/producer/node.js';
import { decodeId } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { libraryAcceptsId, libraryConsumer, libraryJobKey } from './support/consumer.js';

const TOKEN = 'consumer-test-token-0123456789';
const HOOK_SECRET = 'consumer-test-hook-secret';

describe.each(inject('servers'))('the library consumer serves what we write: $name', ({ url: valkeyUrl }) => {
  const q = freshQueue('consumed');
  let producer: RunningProducer;
  let admin: Admin;

  beforeAll(async () => {
    admin = await connectAdmin(valkeyUrl);
    producer = await startProducer({
      VALKEY_URL: valkeyUrl,
      PORT: '0',
      EMQ_NODE_ID: '17',
      EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
      EMQ_SOURCES: JSON.stringify({ gh: { kind: 'github', secrets: [HOOK_SECRET], queue: q } }),
    });
  });
  afterAll(async () => {
    await producer?.stop();
    admin?.close();
  });

  const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    fetch(`${producer.url}${path}`, { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}`, ...headers } });

  it('every surface: claimed in mint order, the id check passes, exact bytes, token 1, completed, nothing left', async () => {
    const sent: Array<{ via: string; id: string; payload: Buffer }> = [];
    const single = Buffer.from([0, 1, 2, 0xff, 0xfe]);
    const r1 = (await (await post(`/v1/queues/${q}/jobs`, single)).json()) as { id: string };
    sent.push({ via: 'POST jobs', id: r1.id, payload: single });

    const keyed = Buffer.from('with an Idempotency-Key');
    const r2 = (await (await post(`/v1/queues/${q}/jobs`, keyed, { 'Idempotency-Key': `k-${q}` })).json()) as { id: string };
    sent.push({ via: 'Idempotency-Key', id: r2.id, payload: keyed });

    const batch = (await (
      await post(`/v1/queues/${q}/batch`, JSON.stringify([{ payload: 'batch-0' }, { payloadBase64: Buffer.from([0xc3, 0x28]).toString('base64') }]), {
        'Content-Type': 'application/json',
      })
    ).json()) as { results: Array<{ id: string }> };
    sent.push({ via: 'batch 0', id: batch.results[0]!.id, payload: Buffer.from('batch-0') });
    sent.push({ via: 'batch 1', id: batch.results[1]!.id, payload: Buffer.from([0xc3, 0x28]) });

    const hookBody = JSON.stringify({ action: 'opened' });
    const signature = `sha256=${createHmac('sha256', HOOK_SECRET).update(hookBody).digest('hex')}`;
    const hook = await fetch(`${producer.url}/v1/webhooks/gh`, {
      method: 'POST',
      body: hookBody,
      headers: { 'X-Hub-Signature-256': signature, 'X-GitHub-Delivery': crypto.randomUUID(), 'X-GitHub-Event': 'issues', 'Content-Type': 'application/json' },
    });
    expect(hook.status).toBe(201);
    const hookId = ((await hook.json()) as { id: string }).id;
    sent.push({ via: 'webhook', id: hookId, payload: (await admin.call('HGET', `emq:{${q}}:job:${hookId}`, 'payload')) as Buffer });

    const cliPayload = Buffer.from([0xde, 0xad, 0xbe, 0xef]);
    const run = await emq(['enqueue', q], cliPayload, { VALKEY_URL: valkeyUrl, EMQ_NODE_ID: '18' });
    expect(run.stderr).toBe('');
    sent.push({ via: 'CLI', id: (JSON.parse(run.stdout) as { id: string }).id, payload: cliPayload });

    for (const s of sent) {
      expect(libraryAcceptsId(s.id), `${s.via} ${s.id}`).toBe(true);
      expect(s.id.startsWith('JOB')).toBe(true);
      // a flat job is exactly the three fields: a group or parent field would reroute it
      expect(Object.keys(await admin.hgetall(libraryJobKey(q, s.id))).sort()).toEqual(['attempts', 'payload', 'state']);
    }
    expect(decodeId(sent[0]!.id).node).toBe(17);
    expect(decodeId(sent.at(-1)!.id).node).toBe(18);

    const consumer = libraryConsumer(admin, q);
    const claimed = [];
    for (let c = await consumer.claim(); c; c = await consumer.claim()) claimed.push(c);
    // byte order is mint order: the consumer takes them in the order they were sent
    expect(claimed.map((c) => c.id)).toEqual(sent.map((s) => s.id));
    for (const [i, c] of claimed.entries()) {
      expect([...c.payload], sent[i]!.via).toEqual([...sent[i]!.payload]);
      expect(c.token).toBe(1);
      expect(String(await admin.text('HGET', libraryJobKey(q, c.id), 'state'))).toBe('active');
    }
    // a stale token is refused; the right one completes; again: gone
    await expect(consumer.complete(claimed[0]!.id, 99)).rejects.toThrow(/EMQSTALE/);
    for (const c of claimed) expect(await consumer.complete(c.id, c.token)).toBe('ok');
    expect(await consumer.complete(claimed[0]!.id, 1)).toBe('gone');
    expect(Number(await admin.call('HGET', `emq:{${q}}:metrics:completed`, 'count'))).toBe(sent.length);
    const left = Object.keys(await admin.footprint(q)).filter((k) => !k.endsWith(':metrics:completed') && !k.includes(':de:'));
    expect(left).toEqual([]);
  });

  it('the model refuses what the library refuses: the old 29-byte ids and other malformed ones', () => {
    expect(libraryAcceptsId('JOB01m8ktkzg6eaatm9sqpt0r51n2')).toBe(false);
    expect(libraryAcceptsId('USRzzzzzzzzzzz')).toBe(false);
    expect(libraryAcceptsId('JOB0JZGkP8sq48')).toBe(true);
    expect(() => libraryJobKey(q, 'JOB01m8ktkzg6eaatm9sqpt0r51n2')).toThrow(/valid branded id/);
  });
});
