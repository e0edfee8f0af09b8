// Webhook ingestion: deliveries signed by each provider's own library (plus hmac), through
// the producer app (in-process, over glide to the real Valkey). Refusals write nothing; a
// redelivery is the same job; the envelope gives the exact body back.
import { createHash, createHmac } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { dedupIdOf, mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';

const TOKEN = 'webhook-test-token-0123456789';
const q = freshQueue('hooks');
const STANDARD_OLD = `whsec_${Buffer.from('old-standard-secret-bytes').toString('base64')}`;
const STANDARD_NEW = `whsec_${Buffer.from('new-standard-secret-bytes').toString('base64')}`;
const SOURCES = {
  gh: { kind: 'github', secrets: ['gh-old-secret-0123456789', 'gh-new-secret-0123456789'], queue: q },
  st: { kind: 'stripe', secrets: ['whsec_stripe_old', 'whsec_stripe_new'], queue: q },
  sw: { kind: 'standard', secrets: [STANDARD_OLD, STANDARD_NEW], queue: q },
  hm: {
    kind: 'hmac',
    secrets: ['hmac-secret-0123456789'],
    queue: q,
    signatureHeader: 'X-Signature',
    encoding: 'base64',
    signaturePrefix: 'v=',
    idHeader: 'X-Delivery',
    eventHeader: 'X-Event',
  },
};

/**
 * Every key a queue holds is in the EchoMQ library's families and shaped as the library
 * reads it: rows (hashes at job:<branded JOB id>), the pending set, and dedup keys (strings
 * at de:<64 hex> holding exactly a bare JOB id, with a TTL). No once: marker, nothing else.
 */
async function expectLibraryFamilies(admin: Admin, queue: string): Promise<number> {
  const keys = await admin.footprint(queue);
  const prefix = `emq:{${queue}}:`;
  for (const [key, type] of Object.entries(keys)) {
    expect(key.startsWith(prefix), key).toBe(true);
    const rest = key.slice(prefix.length);
    if (rest === 'pending') expect(type).toBe('zset');
    else if (/^job:JOB[0-9A-Za-z]{11}$/.test(rest)) expect(type, key).toBe('hash');
    else if (/^de:[0-9a-f]{64}$/.test(rest)) {
      expect(type, key).toBe('string');
      expect(String(await admin.text('GET', key)), key).toMatch(/^JOB[0-9A-Za-z]{11}$/);
      expect(Number(await admin.call('TTL', key)), key).toBeGreaterThan(0);
    } else expect.fail(`${key} is not in the library's families (job:<id>, pending, de:<dedupId>)`);
  }
  return Object.keys(keys).length;
}

describe('POST /v1/webhooks/:source', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let glide: GlideConnection;
  let admin: Admin;
  let app: ReturnType<typeof createProducerApp>;
  const stripe = new Stripe('sk_test_unused');

  beforeAll(async () => {
    glide = await connectGlide(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
    const config = configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]), EMQ_SOURCES: JSON.stringify(SOURCES) });
    app = createProducerApp({ config: () => config, connection: () => glide });
    keysAtStart = Number(await admin.call('DBSIZE'));
  });
  afterAll(async () => {
    await glide?.close();
    admin?.close();
  });
  let keysAtStart = 0;

  const post = async (source: string, body: string | Uint8Array, headers: Record<string, string>) => {
    const res = await app.fetch(new Request(`http://producer/v1/webhooks/${source}`, { method: 'POST', body, headers }));
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const footprint = () => admin.footprint(q);
  const envelopeOf = async (id: string) =>
    JSON.parse(((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer).toString()) as Record<string, string>;

  it('github (@octokit/webhooks-methods sign): 201, an envelope with the exact body; old and new secrets both verify', async () => {
    for (const [secret, delivery] of [
      ['gh-old-secret-0123456789', crypto.randomUUID()],
      ['gh-new-secret-0123456789', crypto.randomUUID()],
    ] as const) {
      // a body of its own each time: one body is one job (finding 6)
      const body = JSON.stringify({ action: 'opened', n: Math.random() });
      const res = await post('gh', body, {
        'X-Hub-Signature-256': await githubSign(secret, body),
        'X-GitHub-Delivery': delivery,
        'X-GitHub-Event': 'pull_request',
        'Content-Type': 'application/json',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ queue: q, verdict: 'enqueued' });
      const env = await envelopeOf(res.body.id as string);
      expect(env).toMatchObject({ v: 1, source: 'gh', kind: 'github', event: 'pull_request', delivery, contentType: 'application/json' });
      expect(Buffer.from(env.body!, 'base64').toString()).toBe(body);
      expect(Date.parse(env.receivedAt!)).toBeGreaterThan(Date.now() - 60_000);
    }
  });

  it('a redelivery (new signature, same delivery id) is the same job: no second row, no second pending entry', async () => {
    const delivery = crypto.randomUUID();
    const body = '{"zen":"redelivered"}';
    const first = await post('gh', body, { 'X-Hub-Signature-256': await githubSign('gh-new-secret-0123456789', body), 'X-GitHub-Delivery': delivery });
    const pendingBefore = Number(await admin.call('ZCARD', `emq:{${q}}:pending`));
    const keysBefore = Object.keys(await footprint()).length;
    const again = await post('gh', body, { 'X-Hub-Signature-256': await githubSign('gh-old-secret-0123456789', body), 'X-GitHub-Delivery': delivery });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, queue: q, verdict: 'duplicate' });
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(pendingBefore);
    expect(Object.keys(await footprint()).length).toBe(keysBefore);
    // the job parks in the library's dedup family, holding its bare id: for github under the
    // signed body (the delivery id is an unsigned header; see finding 6)
    const parked = `emq:{${q}}:de:${await dedupIdOf('webhook-body:gh', createHash('sha256').update(body).digest('hex'))}`;
    expect(String(await admin.text('GET', parked))).toBe(first.body.id);
  });

  it('stripe (generateTestHeaderString): 201 keyed by the event id; a retry with a new timestamp is a duplicate', async () => {
    const event = { id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'invoice.paid', object: 'event' };
    const payload = JSON.stringify(event);
    const first = await post('st', payload, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_stripe_old' }) });
    expect(first.status).toBe(201);
    expect(await envelopeOf(first.body.id as string)).toMatchObject({ kind: 'stripe', event: 'invoice.paid', delivery: event.id });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_stripe_new', timestamp: Math.floor(Date.now() / 1000) - 60 });
    const retry = await post('st', payload, { 'Stripe-Signature': header });
    expect(retry).toEqual({ status: 200, body: { id: first.body.id, queue: q, verdict: 'duplicate' } });
  });

  it('standard (standardwebhooks Webhook.sign): 201; old and new secrets both verify', async () => {
    for (const secret of [STANDARD_OLD, STANDARD_NEW]) {
      const id = `msg_${crypto.randomUUID()}`;
      const body = JSON.stringify({ type: 'user.created', data: { id: 1 } });
      const now = new Date();
      const signature = new Webhook(secret).sign(id, now, body);
      const res = await post('sw', body, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature });
      expect(res.status).toBe(201);
      expect(await envelopeOf(res.body.id as string)).toMatchObject({ kind: 'standard', event: 'user.created', delivery: id });
    }
  });

  it('hmac: a body that is not UTF-8 comes back exactly from the envelope', async () => {
    const body = Uint8Array.from({ length: 256 }, (_, i) => 255 - i);
    const sig = createHmac('sha256', 'hmac-secret-0123456789').update(body).digest('base64');
    const res = await post('hm', body, { 'X-Signature': `v=${sig}`, 'X-Delivery': `d-${crypto.randomUUID()}`, 'X-Event': 'thing.happened' });
    expect(res.status).toBe(201);
    const env = await envelopeOf(res.body.id as string);
    expect(env).toMatchObject({ kind: 'hmac', event: 'thing.happened' });
    expect([...Buffer.from(env.body!, 'base64')]).toEqual([...body]);
  });

  describe('refusals: 401 (or 400/404), nothing written', () => {
    const bodyOf = () => JSON.stringify({ id: `evt_${crypto.randomUUID()}`, type: 'x' });
    const cases: Array<[string, () => Promise<[string, string | Uint8Array, Record<string, string>]>, number, string]> = [
      [
        'github: a tampered body',
        async () => [
          'gh',
          '{"a":2}',
          { 'X-Hub-Signature-256': await githubSign('gh-old-secret-0123456789', '{"a":1}'), 'X-GitHub-Delivery': crypto.randomUUID() },
        ],
        401,
        'invalid_signature',
      ],
      [
        'github: a wrong secret',
        async () => ['gh', '{}', { 'X-Hub-Signature-256': await githubSign('not-the-secret', '{}'), 'X-GitHub-Delivery': crypto.randomUUID() }],
        401,
        'invalid_signature',
      ],
      ['github: no signature', async () => ['gh', '{}', { 'X-GitHub-Delivery': crypto.randomUUID() }], 401, 'invalid_signature'],
      [
        'github: no delivery id',
        async () => ['gh', '{}', { 'X-Hub-Signature-256': await githubSign('gh-old-secret-0123456789', '{}') }],
        400,
        'invalid_delivery',
      ],
      [
        'stripe: a stale timestamp',
        async () => {
          const p = bodyOf();
          return [
            'st',
            p,
            {
              'Stripe-Signature': stripe.webhooks.generateTestHeaderString({
                payload: p,
                secret: 'whsec_stripe_old',
                timestamp: Math.floor(Date.now() / 1000) - 301,
              }),
            },
          ];
        },
        401,
        'invalid_signature', // the same answer as any signature refusal (finding 5, second review)
      ],
      [
        'stripe: a future timestamp',
        async () => {
          const p = bodyOf();
          return [
            'st',
            p,
            {
              'Stripe-Signature': stripe.webhooks.generateTestHeaderString({
                payload: p,
                secret: 'whsec_stripe_old',
                timestamp: Math.floor(Date.now() / 1000) + 301,
              }),
            },
          ];
        },
        401,
        'invalid_signature', // the same answer as any signature refusal (finding 5, second review)
      ],
      [
        'stripe: a wrong secret',
        async () => {
          const p = bodyOf();
          return ['st', p, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: p, secret: 'whsec_other' }) }];
        },
        401,
        'invalid_signature',
      ],
      [
        'stripe: a tampered body',
        async () => {
          const p = bodyOf();
          return ['st', p.replace('"x"', '"y"'), { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: p, secret: 'whsec_stripe_old' }) }];
        },
        401,
        'invalid_signature',
      ],
      [
        'standard: a stale timestamp',
        async () => {
          const id = crypto.randomUUID();
          const t = new Date(Date.now() - 400_000);
          return [
            'sw',
            '{}',
            { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(t.getTime() / 1000)), 'webhook-signature': new Webhook(STANDARD_OLD).sign(id, t, '{}') },
          ];
        },
        401,
        'invalid_signature', // the same answer as any signature refusal (finding 5, second review)
      ],
      [
        'standard: a future timestamp',
        async () => {
          const id = crypto.randomUUID();
          const t = new Date(Date.now() + 400_000);
          return [
            'sw',
            '{}',
            { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(t.getTime() / 1000)), 'webhook-signature': new Webhook(STANDARD_OLD).sign(id, t, '{}') },
          ];
        },
        401,
        'invalid_signature', // the same answer as any signature refusal (finding 5, second review)
      ],
      [
        'standard: a wrong secret',
        async () => {
          const id = crypto.randomUUID();
          const t = new Date();
          return [
            'sw',
            '{}',
            {
              'webhook-id': id,
              'webhook-timestamp': String(Math.floor(t.getTime() / 1000)),
              'webhook-signature': new Webhook(`whsec_${Buffer.from('nope').toString('base64')}`).sign(id, t, '{}'),
            },
          ];
        },
        401,
        'invalid_signature',
      ],
      [
        'hmac: a wrong secret',
        async () => ['hm', 'x', { 'X-Signature': `v=${createHmac('sha256', 'nope').update('x').digest('base64')}`, 'X-Delivery': 'd1' }],
        401,
        'invalid_signature',
      ],
      ['an unknown source (answered like any signature refusal, so names cannot be probed)', async () => ['nope', '{}', {}], 401, 'invalid_signature'],
      [
        'stripe: a signature entry of the wrong length',
        async () => ['st', '{}', { 'Stripe-Signature': `t=${Math.floor(Date.now() / 1000)},v1=00` }],
        401,
        'invalid_signature',
      ],
      [
        'stripe: six v1 entries',
        async () => [
          'st',
          '{}',
          {
            'Stripe-Signature': `t=${Math.floor(Date.now() / 1000)},${Array(6)
              .fill(`v1=${'0'.repeat(64)}`)
              .join(',')}`,
          },
        ],
        401,
        'invalid_signature',
      ],
      [
        'github: a signature of the wrong length',
        async () => ['gh', '{}', { 'X-Hub-Signature-256': 'sha256=00', 'X-GitHub-Delivery': 'd' }],
        401,
        'invalid_signature',
      ],
      [
        'standard: six signature entries',
        async () => [
          'sw',
          '{}',
          {
            'webhook-id': 'i',
            'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
            'webhook-signature': Array(6)
              .fill(`v1,${Buffer.alloc(32).toString('base64')}`)
              .join(' '),
          },
        ],
        401,
        'invalid_signature',
      ],
      [
        'a signature header over 1,024 characters',
        async () => ['hm', 'x', { 'X-Signature': `v=${'A'.repeat(1100)}`, 'X-Delivery': 'd1' }],
        401,
        'invalid_signature',
      ],
    ];
    it.each(cases)('%s', async (_, make, status, code) => {
      const before = await footprint();
      const [source, body, headers] = await make();
      const res = await post(source, body, headers);
      expect(res.status).toBe(status);
      expect(res.body.code).toBe(code);
      expect(await footprint()).toEqual(before);
    });
  });

  it("every key the webhook route wrote is in the library's families (rows, pending, de:), and none outside the queue", async () => {
    const inQueue = await expectLibraryFamilies(admin, q);
    expect(inQueue).toBeGreaterThan(0);
    expect(Number(await admin.call('DBSIZE')) - keysAtStart).toBe(inQueue);
  });
});

describe('finding 1 (security review): webhook verification does bounded work whatever the header holds', () => {
  const SOURCES1 = { st: { kind: 'stripe', secrets: ['whsec_first-secret-0123', 'whsec_second-secret-012'], queue: 'f1' } };
  const config = configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]), EMQ_SOURCES: JSON.stringify(SOURCES1) });
  const app = createProducerApp({
    config: () => config,
    connection: () => {
      throw new Error('a refusal must not reach Valkey');
    },
  });
  const body = new Uint8Array(1024 * 1024).fill(0x61);
  /** The answer, and how many HMACs (Web Crypto sign or verify calls) it cost. */
  const hostile = async (header: string) => {
    const sign = vi.spyOn(crypto.subtle, 'sign');
    const verify = vi.spyOn(crypto.subtle, 'verify');
    try {
      const res = await app.fetch(new Request('http://p/v1/webhooks/st', { method: 'POST', body, headers: { 'Stripe-Signature': header } }));
      return { status: res.status, code: ((await res.json()) as { code: string }).code, hmacs: sign.mock.calls.length + verify.mock.calls.length };
    } finally {
      sign.mockRestore();
      verify.mockRestore();
    }
  };
  const now = () => Math.floor(Date.now() / 1000);

  // every signature refusal costs as many HMACs as the costliest wrong signature (the most
  // secrets of any source: two here), so its timing does not tell what it was refused for
  it('2,600 short v1 entries on a 1 MiB body: refused (401) for no more HMACs than any refusal', async () => {
    // the review's repro: 3.8 s of CPU for one 401 before the fix (5.1 s here, two secrets)
    const header = `t=${now()},${Array(2600).fill('v1=00').join(',')}`;
    // before: 2 secrets × 2,600 entries = 5,200 HMACs of the 1 MiB body
    expect(await hostile(header)).toEqual({ status: 401, code: 'invalid_signature', hmacs: 2 });
  });

  it('five well-formed entries cost one HMAC per secret, not one per entry and secret', async () => {
    const many = await hostile(
      `t=${now()},${Array(5)
        .fill(`v1=${'0'.repeat(64)}`)
        .join(',')}`,
    );
    expect(many).toEqual({ status: 401, code: 'invalid_signature', hmacs: 2 });
  });

  it('a stale timestamp is refused for no more HMACs than any refusal, whatever the entries, and answered as one', async () => {
    const res = await hostile(
      `t=${now() - 3600},${Array(5)
        .fill(`v1=${'0'.repeat(64)}`)
        .join(',')}`,
    );
    expect(res).toEqual({ status: 401, code: 'invalid_signature', hmacs: 2 });
  });
});

describe('finding 6 (security review): a delivery with no signed timestamp (github, hmac) is one job per signed body, whatever its unsigned headers; the envelope says what is signed', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  const GH = 'gh-f6-secret-0123456789';
  const HM = 'hm-f6-secret-0123456789';
  const ST = 'whsec_f6-stripe-0123456';
  let glide: GlideConnection;
  let admin: Admin;
  beforeAll(async () => {
    glide = await connectGlide(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
  });
  afterAll(async () => {
    await glide?.close();
    admin?.close();
  });

  /** A producer whose four sources all feed one fresh queue, and a poster for it. */
  const fresh = () => {
    const queue = freshQueue('f6');
    const sources = {
      gh: { kind: 'github', secrets: [GH], queue },
      hm: { kind: 'hmac', secrets: [HM], queue, signatureHeader: 'X-Signature', encoding: 'hex', idHeader: 'X-Delivery', eventHeader: 'X-Event' },
      st: { kind: 'stripe', secrets: [ST], queue },
      sw: { kind: 'standard', secrets: [STANDARD_NEW], queue },
    };
    const config = configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]), EMQ_SOURCES: JSON.stringify(sources) });
    const app = createProducerApp({ config: () => config, connection: () => glide });
    const post = async (source: string, body: string | Uint8Array, headers: Record<string, string>) => {
      const res = await app.fetch(new Request(`http://producer/v1/webhooks/${source}`, { method: 'POST', body, headers }));
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const envelopeOf = async (id: unknown) =>
      JSON.parse(((await admin.call('HGET', `emq:{${queue}}:job:${String(id)}`, 'payload')) as Buffer).toString()) as Record<string, unknown>;
    return { queue, post, envelopeOf };
  };
  const hmacHex = (body: string | Uint8Array) => createHmac('sha256', HM).update(body).digest('hex');
  const standardHeaders = (id: string, body: string, at = new Date()) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(STANDARD_NEW).sign(id, at, body),
  });

  it('one signed github delivery replayed with 5 fresh X-GitHub-Delivery ids is one job: each replay answers 200 duplicate with the first id and writes nothing', async () => {
    const { queue, post, envelopeOf } = fresh();
    const body = JSON.stringify({ action: 'opened', nonce: crypto.randomUUID() });
    const signature = await githubSign(GH, body);
    const delivery = crypto.randomUUID();
    const first = await post('gh', body, {
      'X-Hub-Signature-256': signature,
      'X-GitHub-Delivery': delivery,
      'X-GitHub-Event': 'issues',
      'Content-Type': 'application/json',
    });
    expect(first.status).toBe(201);
    const before = await snapshot(admin, queue);
    for (let i = 0; i < 5; i++) {
      // the replayer sets every unsigned header: a fresh delivery id, another event, another content type
      const again = await post('gh', body, {
        'X-Hub-Signature-256': signature,
        'X-GitHub-Delivery': crypto.randomUUID(),
        'X-GitHub-Event': `push-${i}`,
        'Content-Type': 'text/plain',
      });
      expect(again).toEqual({ status: 200, body: { id: first.body.id, queue, verdict: 'duplicate' } });
    }
    // before the fix: 5 more rows, pending entries and dedup keys
    expect(await snapshot(admin, queue)).toEqual(before);
    expect(Object.keys(await admin.footprint(queue))).toHaveLength(3); // one row, pending, one dedup key
    expect(await envelopeOf(first.body.id)).toMatchObject({ event: 'issues', delivery, contentType: 'application/json' });
  });

  it('one signed hmac delivery replayed with 5 fresh delivery ids is one job: each replay answers 200 duplicate with the first id and writes nothing', async () => {
    const { queue, post } = fresh();
    const body = Uint8Array.from([0xff, 0x00, ...new TextEncoder().encode(crypto.randomUUID())]);
    const signature = hmacHex(body);
    const first = await post('hm', body, { 'X-Signature': signature, 'X-Delivery': 'd-1', 'X-Event': 'thing.happened' });
    expect(first.status).toBe(201);
    const before = await snapshot(admin, queue);
    for (let i = 0; i < 5; i++) {
      const again = await post('hm', body, { 'X-Signature': signature, 'X-Delivery': `d-replay-${crypto.randomUUID()}`, 'X-Event': 'other.thing' });
      expect(again).toEqual({ status: 200, body: { id: first.body.id, queue, verdict: 'duplicate' } });
    }
    expect(await snapshot(admin, queue)).toEqual(before);
    expect(Object.keys(await admin.footprint(queue))).toHaveLength(3);
  });

  it('the job parks at de:<dedupIdOf("webhook-body:<source>", the body\'s SHA-256 in hex)>, in the library\'s family; the delivery id parks nothing', async () => {
    const { queue, post } = fresh();
    const body = JSON.stringify({ zen: crypto.randomUUID() });
    const delivery = crypto.randomUUID();
    const first = await post('gh', body, { 'X-Hub-Signature-256': await githubSign(GH, body), 'X-GitHub-Delivery': delivery });
    expect(first.status).toBe(201);
    const parked = `emq:{${queue}}:de:${await dedupIdOf('webhook-body:gh', createHash('sha256').update(body).digest('hex'))}`;
    expect(String(await admin.text('GET', parked))).toBe(first.body.id);
    const ttl = Number(await admin.call('TTL', parked));
    expect(ttl).toBeGreaterThan(7 * 24 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(7 * 24 * 3600);
    expect(await admin.call('EXISTS', `emq:{${queue}}:de:${await dedupIdOf('webhook:gh', delivery)}`)).toBe(0);
    await expectLibraryFamilies(admin, queue);
  });

  it('a genuinely new body is a new job, even under a delivery id already seen (github and hmac)', async () => {
    const { queue, post } = fresh();
    const delivery = crypto.randomUUID();
    const ids = new Set<unknown>();
    for (const body of ['{"n":1}', '{"n":2}', '{"n":1} ']) {
      const res = await post('gh', body, { 'X-Hub-Signature-256': await githubSign(GH, body), 'X-GitHub-Delivery': delivery });
      expect(res.status).toBe(201);
      ids.add(res.body.id);
    }
    for (const body of ['a', 'b']) {
      const res = await post('hm', body, { 'X-Signature': hmacHex(body), 'X-Delivery': 'd-same' });
      expect(res.status).toBe(201);
      ids.add(res.body.id);
    }
    expect(ids.size).toBe(5);
    expect(Number(await admin.call('ZCARD', `emq:{${queue}}:pending`))).toBe(5);
  });

  it('Stripe and Standard Webhooks still dedupe on their signed ids: a new signed id is a new job, the same id re-signed is a duplicate', async () => {
    const { queue, post } = fresh();
    const stripe = new Stripe('sk_test_unused');
    const stripeEvent = (id: string) => JSON.stringify({ id, type: 'invoice.paid', object: 'event' });
    const a = stripeEvent(`evt_${crypto.randomUUID()}`);
    const first = await post('st', a, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: a, secret: ST }) });
    expect(first.status).toBe(201);
    const resigned = stripe.webhooks.generateTestHeaderString({ payload: a, secret: ST, timestamp: Math.floor(Date.now() / 1000) - 30 });
    expect(await post('st', a, { 'Stripe-Signature': resigned })).toEqual({ status: 200, body: { id: first.body.id, queue, verdict: 'duplicate' } });
    const b = stripeEvent(`evt_${crypto.randomUUID()}`);
    const other = await post('st', b, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: b, secret: ST }) });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);

    // one body under two signed webhook-ids: two deliveries, two jobs
    const body = JSON.stringify({ type: 'user.created', data: { id: 7 } });
    const [m1, m2] = [`msg_${crypto.randomUUID()}`, `msg_${crypto.randomUUID()}`];
    const one = await post('sw', body, standardHeaders(m1, body));
    const two = await post('sw', body, standardHeaders(m2, body));
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.body.id).not.toBe(one.body.id);
    const retry = await post('sw', body, standardHeaders(m1, body, new Date(Date.now() - 30_000)));
    expect(retry).toEqual({ status: 200, body: { id: one.body.id, queue, verdict: 'duplicate' } });
    expect(Number(await admin.call('ZCARD', `emq:{${queue}}:pending`))).toBe(4);
  });

  it('the envelope lists the fields its signature covers: github and hmac the body; stripe the body, delivery and event; standard the body, delivery and the event when the body names one', async () => {
    const { post, envelopeOf } = fresh();
    const stripe = new Stripe('sk_test_unused');
    const signedOf = async (res: { status: number; body: Record<string, unknown> }) => {
      expect(res.status).toBe(201);
      return (await envelopeOf(res.body.id)).signed;
    };
    const gh = '{"action":"closed"}';
    expect(
      await signedOf(await post('gh', gh, { 'X-Hub-Signature-256': await githubSign(GH, gh), 'X-GitHub-Delivery': 'g1', 'X-GitHub-Event': 'issues' })),
    ).toEqual(['body']);
    expect(await signedOf(await post('hm', 'h', { 'X-Signature': hmacHex('h'), 'X-Delivery': 'h1', 'X-Event': 'e' }))).toEqual(['body']);
    const typed = JSON.stringify({ id: `evt_${crypto.randomUUID()}`, type: 'charge.failed' });
    expect(await signedOf(await post('st', typed, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: typed, secret: ST }) }))).toEqual([
      'body',
      'delivery',
      'event',
    ]);
    const untyped = JSON.stringify({ id: `evt_${crypto.randomUUID()}` });
    expect(
      await signedOf(await post('st', untyped, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: untyped, secret: ST }) })),
    ).toEqual(['body', 'delivery']);
    const named = JSON.stringify({ type: 'user.deleted' });
    expect(await signedOf(await post('sw', named, standardHeaders(`msg_${crypto.randomUUID()}`, named)))).toEqual(['body', 'delivery', 'event']);
    expect(await signedOf(await post('sw', 'not json', standardHeaders(`msg_${crypto.randomUUID()}`, 'not json')))).toEqual(['body', 'delivery']);
  });
});

describe('finding 12 (security review): webhook sources are validated at start', () => {
  it.each([
    [{ s: { kind: 'standard', secrets: ['whsec_'], queue: 'q' } }, /EMQ_SOURCES\.s\.secrets\[0\] is shorter than 16 bytes \(decoded\)/],
    [{ s: { kind: 'standard', secrets: [`whsec_${Buffer.from('short').toString('base64')}`], queue: 'q' } }, /shorter than 16 bytes/],
    [{ s: { kind: 'github', secrets: ['too-short'], queue: 'q' } }, /EMQ_SOURCES\.s\.secrets\[0\] is shorter than 16 bytes/],
    [{ s: { kind: 'github', secrets: Array(5).fill('long-enough-secret-0123'), queue: 'q' } }, /1 to 4 strings/],
    [
      { s: { kind: 'stripe', secrets: ['long-enough-secret-0123'], queue: 'q', toleranceSeconds: 700_000 } },
      /toleranceSeconds must be below EMQ_DEDUPE_TTL_SECONDS/,
    ],
  ])('%j is refused, naming the field and never the secret', (sources, why) => {
    const make = () => configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]), EMQ_SOURCES: JSON.stringify(sources) });
    expect(make).toThrow(why);
    try {
      make();
    } catch (err) {
      expect((err as Error).message).not.toMatch(/too-short|long-enough|whsec_c2hvcnQ/);
    }
  });

  it('EMQ_DEDUPE_TTL_SECONDS past what a dedup key can hold (or not a whole number) stops the start, naming the variable only', () => {
    for (const value of ['99999999999', '1.5', '-3', 'week']) {
      const make = () => configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]), EMQ_DEDUPE_TTL_SECONDS: value });
      expect(make).toThrow(/^EMQ_DEDUPE_TTL_SECONDS is not a whole number from 1 to 9999999999$/);
    }
  });

  it('a tolerance below a shorter dedupe TTL is checked against that TTL', () => {
    const sources = JSON.stringify({ s: { kind: 'stripe', secrets: ['long-enough-secret-0123'], queue: 'q', toleranceSeconds: 300 } });
    expect(() =>
      configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]), EMQ_SOURCES: sources, EMQ_DEDUPE_TTL_SECONDS: '200' }),
    ).toThrow(/below EMQ_DEDUPE_TTL_SECONDS/);
  });
});

describe('Idempotency-Key on POST /v1/queues/:queue/jobs', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let glide: GlideConnection;
  let admin: Admin;
  let app: ReturnType<typeof createProducerApp>;
  const OTHER = 'another-caller-token-0123456789';
  beforeAll(async () => {
    glide = await connectGlide(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
    const config = configFrom({
      EMQ_TOKENS: JSON.stringify([
        { token: TOKEN, queues: ['*'], rawPrefixes: true },
        { token: OTHER, queues: ['*'], rawPrefixes: true },
      ]),
    });
    app = createProducerApp({ config: () => config, connection: () => glide });
  });
  afterAll(async () => {
    await glide?.close();
    admin?.close();
  });
  const post = async (queue: string, body: string, key: string, token = TOKEN, jobId?: string) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, 'Idempotency-Key': key, ...(jobId ? { 'Emq-Job-Id': jobId } : {}) };
    const res = await app.fetch(new Request(`http://producer/v1/queues/${queue}/jobs`, { method: 'POST', body, headers }));
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, location: res.headers.get('Location') };
  };

  it('the same key and payload answer the same job; another payload answers 422 and writes nothing', async () => {
    const queue = freshQueue('idem');
    const first = await post(queue, 'order #1', 'key-1');
    expect(first.status).toBe(201);
    const again = await post(queue, 'order #1', 'key-1');
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, queue, verdict: 'duplicate' }, location: first.location });
    const before = await admin.footprint(queue);
    const other = await post(queue, 'order #2', 'key-1');
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_conflict');
    expect(await admin.footprint(queue)).toEqual(before);
  });

  it("keys are scoped to the caller's token and the queue", async () => {
    const queue = freshQueue('idem');
    const mine = await post(queue, 'p', 'shared-key');
    const theirs = await post(queue, 'p', 'shared-key', OTHER);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    const elsewhere = await post(freshQueue('idem'), 'p', 'shared-key');
    expect(elsewhere.status).toBe(201);
  });

  it("Emq-Job-Id with an Idempotency-Key: the caller's id is the job's; an id that names another job answers it as duplicate", async () => {
    const queue = freshQueue('idem');
    const mine = mintId();
    const first = await post(queue, 'p', 'key-a', TOKEN, mine);
    expect(first).toMatchObject({ status: 201, body: { id: mine, queue, verdict: 'enqueued' }, location: `/v1/queues/${queue}/jobs/${mine}` });
    expect(await post(queue, 'p', 'key-a', TOKEN, mintId())).toMatchObject({ status: 200, body: { id: mine, verdict: 'duplicate' } });
    // another key, the same existing id: that job, as duplicate, and no dedup key for key-b
    const keys = Object.keys(await admin.footprint(queue)).length;
    expect(await post(queue, 'q', 'key-b', TOKEN, mine)).toMatchObject({ status: 200, body: { id: mine, verdict: 'duplicate' } });
    expect(Object.keys(await admin.footprint(queue)).length).toBe(keys);
  });

  it("every key the Idempotency-Key route writes is in the library's families, and none outside the queue", async () => {
    const queue = freshQueue('idem');
    const dbBefore = Number(await admin.call('DBSIZE'));
    const first = await post(queue, 'order #1', 'key-1');
    await post(queue, 'order #1', 'key-1');
    await post(queue, 'order #2', 'key-1');
    await post(queue, 'x', 'key-2', OTHER);
    await post(queue, 'y', 'key-3', TOKEN, mintId());
    const inQueue = await expectLibraryFamilies(admin, queue);
    expect(inQueue).toBe(1 + 3 + 3); // pending, three rows, three dedup keys
    expect(Number(await admin.call('DBSIZE')) - dbBefore).toBe(inQueue);
    const scope = createHash('sha256').update(TOKEN).digest('hex');
    expect(String(await admin.text('GET', `emq:{${queue}}:de:${await dedupIdOf(`key:${scope}`, 'key-1')}`))).toBe(first.body.id);
  });

  it('a malformed key: 400, nothing written', async () => {
    const queue = freshQueue('idem');
    const res = await post(queue, 'p', 'x'.repeat(256));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_idempotency_key');
    expect(await admin.footprint(queue)).toEqual({});
  });
});
