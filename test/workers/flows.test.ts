// POST /v1/queues/{q}/flows: the producer Worker inside workerd, through the real gateway
// process over REST to a real Valkey (started Node-side by test/workers/global-setup.ts).
// Flows with every child in the parent's queue and with children in other queues, payloads
// as text and as base64 (bytes that are not UTF-8), served by the library consumer model:
// the children claimable at once, the parent only once its last child completes, exactly
// once. The same flow again answers 200 duplicate; every refusal writes nothing.
import { describe, expect, inject, it } from 'vitest';
import { producerFor } from '../../functions/producer/worker.js';
import { mintId } from '../../shared/ids.js';
import { libraryConsumer } from '../support/consumer.js';

import { gatewayAdmin } from './gateway-admin.js';
const gw = inject('gateway');
const TOKEN = 'flows-caller-token-0123456789abcdef';
const NARROW = 'flows-narrow-token-0123456789abcdef';
const base = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([
    { token: TOKEN, queues: ['*'], rawPrefixes: true },
    { token: NARROW, queues: ['wf-own*'], rawPrefixes: true },
  ]),
  EMQ_MAX_PAYLOAD_BYTES: '4096',
  EMQ_MAX_BATCH_BYTES: '262144',
};
const app = producerFor(base);

let n = 0;
const fresh = (label = 'wf') => `${label}-${Date.now().toString(36)}-${(n++).toString(36)}`;

interface Sent {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON came back
  body: any;
  location: string | null;
  type: string | null;
}
async function postFlow(q: string, body: unknown, { token = TOKEN, env = base } = {}): Promise<Sent> {
  const target = env === base ? app : producerFor(env);
  const res = await Promise.resolve(
    target.fetch(
      new Request(`http://producer/v1/queues/${q}/flows`, {
        method: 'POST',
        body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      }),
      env,
    ),
  );
  return { status: res.status, body: await res.json(), location: res.headers.get('Location'), type: res.headers.get('Content-Type') };
}

/** One command through the gateway's admin token; bulk replies as bytes. */
const admin = gatewayAdmin(gw);
const latin1 = (b: unknown) => String.fromCharCode(...(b as Uint8Array));
const hex = (b: unknown) => [...(b as Uint8Array)].map((x) => x.toString(16).padStart(2, '0')).join('');
const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes));
const asBuffers = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v) : Array.isArray(v) ? v.map(asBuffers) : v);
const consumerOf = (q: string) => libraryConsumer({ call: async (...args) => asBuffers(await admin(...args.map(String))) as never }, q);

const rowKey = (q: string, id: string) => `emq:{${q}}:job:${id}`;
/** A row's fields in the server's order, each value as latin1 (bytes kept one for one). */
async function fields(q: string, id: string): Promise<Array<[string, string]>> {
  const flat = (await admin('HGETALL', rowKey(q, id))) as Uint8Array[];
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flat.length; i += 2) out.push([latin1(flat[i]), latin1(flat[i + 1])]);
  return out;
}
/** A sorted set as member@score, in order. */
async function zset(key: string): Promise<string[]> {
  const flat = (await admin('ZRANGE', key, '0', '-1', 'WITHSCORES')) as Uint8Array[];
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push(`${latin1(flat[i])}@${Number(latin1(flat[i + 1]))}`);
  return out;
}
/** Every key of the queues, with its type and its DUMP: whatever a request wrote shows. */
async function snapshot(...queues: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const q of queues) {
    for (const key of ((await admin('KEYS', `emq:{${q}}:*`)) as Uint8Array[]).map(latin1).sort()) {
      out[key] = `${latin1(await admin('TYPE', key))} ${hex(await admin('DUMP', key))}`;
    }
  }
  return out;
}

const PENDING = (payload: string, parent: string, policy: 'fp' | 'id', parentQueue?: string): Array<[string, string]> => [
  ['state', 'pending'],
  ['attempts', '0'],
  ['payload', payload],
  ['parent', parent],
  ...(parentQueue === undefined ? [] : ([['parent_queue', parentQueue]] as Array<[string, string]>)),
  ['parent_policy', policy],
];
const HELD = (payload: string): Array<[string, string]> => [
  ['state', 'awaiting_children'],
  ['attempts', '0'],
  ['payload', payload],
];

describe('POST /v1/queues/{q}/flows: the producer Worker in workerd, through the gateway', () => {
  it('every child in the parent queue, text and base64 payloads: 201, exactly these keys; the parent claimable only after its last child completes, once; again: 200 duplicate', async () => {
    const q = fresh();
    const parentId = mintId();
    const res = await postFlow(q, {
      parent: { payloadBase64: b64([0xff, 0, 0xfe]), id: parentId },
      children: [
        { payload: 'text ✓' },
        { payloadBase64: b64([0x80, 0xc3]), onFailure: 'ignore' },
        { payloadBase64: '' },
        { payload: 'fp', onFailure: 'fail-parent' },
      ],
    });
    expect(res.status).toBe(201);
    const kids = (res.body.children as Array<{ queue: string; id: string }>).map((c) => c.id);
    expect(res.body).toEqual({ queue: q, parent: { id: parentId }, children: kids.map((id) => ({ queue: q, id })), verdict: 'enqueued' });
    expect(new Set(kids).size).toBe(4);
    for (const id of kids) expect(id).toMatch(/^JOB[0-9A-Za-z]{11}$/);
    expect(res.location).toBe(`/v1/queues/${q}/jobs/${parentId}`);
    const [a, b, c, d] = kids as [string, string, string, string];

    expect(await fields(q, parentId)).toEqual(HELD('\xff\x00\xfe'));
    expect(latin1(await admin('GET', `${rowKey(q, parentId)}:dependencies`))).toBe('4');
    expect(await fields(q, a)).toEqual(PENDING(latin1(new TextEncoder().encode('text ✓')), parentId, 'fp'));
    expect(await fields(q, b)).toEqual(PENDING('\x80\xc3', parentId, 'id'));
    expect(await fields(q, c)).toEqual(PENDING('', parentId, 'fp'));
    expect(await fields(q, d)).toEqual(PENDING('fp', parentId, 'fp'));
    expect(await zset(`emq:{${q}}:pending`)).toEqual([...kids].sort().map((id) => `${id}@0`));
    const keys = Object.keys(await snapshot(q));
    expect(keys).toEqual([`${rowKey(q, parentId)}:dependencies`, `emq:{${q}}:pending`, ...[parentId, ...kids].map((id) => rowKey(q, id))].sort());

    // sent again (another payload, other children): the parent's id is in use; nothing written
    const before = await snapshot(q);
    const again = await postFlow(q, { parent: { payload: 'other', id: parentId }, children: [{ payload: 'x' }] });
    expect([again.status, again.body.verdict, again.body.parent]).toEqual([200, 'duplicate', { id: parentId }]);
    expect(await snapshot(q)).toEqual(before);

    const consumer = consumerOf(q);
    const claimed = [];
    for (let i = 0; i < 4; i++) claimed.push((await consumer.claim())!);
    expect(claimed.map((j) => j.id).sort()).toEqual([...kids].sort());
    expect(hex(claimed.find((j) => j.id === b)!.payload)).toBe('80c3');
    expect(await consumer.claim()).toBeNull();
    for (const job of claimed.slice(0, 3)) {
      expect(await consumer.complete(job.id, job.token)).toBe('ok');
      expect(await consumer.claim()).toBeNull(); // the parent still waits
    }
    expect(await consumer.complete(claimed[3]!.id, claimed[3]!.token)).toBe('ok');
    const parent = await consumer.claim();
    expect(parent?.id).toBe(parentId);
    expect(hex(parent!.payload)).toBe('ff00fe');
    expect(await consumer.claim()).toBeNull();
    expect(await consumer.complete(parentId, parent!.token)).toBe('ok');
    expect(await consumer.claim()).toBeNull();

    // the flow done: the same parent id is still a duplicate (its count outlives it)
    const after = await postFlow(q, { parent: { payload: 'p', id: parentId }, children: [{ payload: 'x' }] });
    expect([after.status, after.body.verdict]).toEqual([200, 'duplicate']);
  });

  it('children in other queues (a binary child in the parent queue too): each in its queue, parent_queue only when another; the parent released once all complete and the pumps deliver; again: 200 duplicate', async () => {
    const [q, q2, q3] = [fresh('wfp'), fresh('wfc'), fresh('wfc')];
    const [p, a, b, c, d] = [mintId(), mintId(), mintId(), mintId(), mintId()];
    const flow = {
      parent: { payload: 'the parent', id: p },
      children: [
        { payloadBase64: b64([0xff, 0x00]), id: a },
        { payloadBase64: b64([0xfe]), id: b, queue: q2 },
        { payload: 'yonder', id: c, queue: q3, onFailure: 'ignore' },
        { payloadBase64: b64([0xc0, 0x80]), id: d, queue: q2, onFailure: 'ignore' },
      ],
    };
    const res = await postFlow(q, flow);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      queue: q,
      parent: { id: p },
      children: [
        { queue: q, id: a },
        { queue: q2, id: b },
        { queue: q3, id: c },
        { queue: q2, id: d },
      ],
      verdict: 'enqueued',
    });
    expect(await fields(q, p)).toEqual(HELD('the parent'));
    expect(latin1(await admin('GET', `${rowKey(q, p)}:dependencies`))).toBe('4');
    expect(await fields(q, a)).toEqual(PENDING('\xff\x00', p, 'fp'));
    expect(await fields(q2, b)).toEqual(PENDING('\xfe', p, 'fp', q));
    expect(await fields(q3, c)).toEqual(PENDING('yonder', p, 'id', q));
    expect(await fields(q2, d)).toEqual(PENDING('\xc0\x80', p, 'id', q));
    expect(await zset(`emq:{${q}}:pending`)).toEqual([`${a}@0`]);
    expect(await zset(`emq:{${q2}}:pending`)).toEqual([b, d].sort().map((id) => `${id}@0`));
    expect(await zset(`emq:{${q3}}:pending`)).toEqual([`${c}@0`]);
    expect(Object.keys(await snapshot(q)).sort()).toEqual([`${rowKey(q, p)}:dependencies`, `emq:{${q}}:pending`, rowKey(q, a), rowKey(q, p)].sort());
    expect(Object.keys(await snapshot(q2, q3)).sort()).toEqual(
      [`emq:{${q2}}:pending`, rowKey(q2, b), rowKey(q2, d), `emq:{${q3}}:pending`, rowKey(q3, c)].sort(),
    );

    const before = await snapshot(q, q2, q3);
    const again = await postFlow(q, flow);
    expect([again.status, again.body.verdict]).toEqual([200, 'duplicate']);
    expect(again.body.children).toEqual(res.body.children);
    expect(await snapshot(q, q2, q3)).toEqual(before);

    const [here, there, yonder] = [consumerOf(q), consumerOf(q2), consumerOf(q3)];
    const child = (await here.claim())!;
    expect([child.id, hex(child.payload)]).toEqual([a, 'ff00']);
    expect(await here.complete(a, child.token)).toBe('ok');
    expect(await here.claim()).toBeNull();
    for (const [consumer, count] of [
      [there, 2],
      [yonder, 1],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const job = (await consumer.claim())!;
        expect(await consumer.complete(job.id, job.token)).toBe('ok');
        expect(await here.claim()).toBeNull(); // not yet delivered
      }
      expect(await consumer.pump()).toBe(count);
    }
    const parent = (await here.claim())!;
    expect([parent.id, latin1(parent.payload)]).toEqual([p, 'the parent']);
    expect(await here.claim()).toBeNull();
    // a pump run again delivers nothing twice
    expect(await there.pump()).toBe(0);
    expect(await here.claim()).toBeNull();
  });

  it('past ~100 children in the parent queue the call goes as REST JSON, with base64 arguments when a payload is not UTF-8: every byte lands, in one call', async () => {
    const q = fresh('wfmany');
    const children = Array.from({ length: 200 }, (_, i) => ({ payload: `child ${i} ✓` }));
    const res = await postFlow(q, { parent: { payload: 'many' }, children });
    expect(res.status).toBe(201);
    expect(res.body.children).toHaveLength(200);
    const parentId = res.body.parent.id as string;
    expect(latin1(await admin('GET', `${rowKey(q, parentId)}:dependencies`))).toBe('200');
    expect(await admin('ZCARD', `emq:{${q}}:pending`)).toBe(200);
    const last = (res.body.children as Array<{ id: string }>)[199]!.id;
    expect(await fields(q, last)).toEqual(PENDING(latin1(new TextEncoder().encode('child 199 ✓')), parentId, 'fp'));

    const binaryQ = fresh('wfmany');
    const binary = [...children.slice(0, 150), { payloadBase64: b64([0xff]) }, ...children.slice(150)];
    const yes = await postFlow(binaryQ, { parent: { payloadBase64: b64([0xfe, 0xff]) }, children: binary });
    expect(yes.status).toBe(201);
    expect(await admin('ZCARD', `emq:{${binaryQ}}:pending`)).toBe(201);
    expect(await fields(binaryQ, yes.body.children[150].id)).toEqual(PENDING('\xff', yes.body.parent.id, 'fp'));
    expect(latin1(await admin('HGET', rowKey(binaryQ, yes.body.parent.id), 'payload'))).toBe('\xfe\xff');
  });

  describe('refusals write nothing', () => {
    const id = mintId();
    const cases: Array<[string, unknown, number, string, number | undefined]> = [
      ['not JSON', '{"parent":', 400, 'invalid_flow', undefined],
      ['not UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 400, 'invalid_flow', undefined],
      ['an array', [{ payload: 'p' }], 400, 'invalid_flow', undefined],
      ['an unknown field', { parent: { payload: 'p' }, children: [{ payload: 'c' }], extra: 1 }, 400, 'invalid_flow', undefined],
      ['an unknown parent field', { parent: { payload: 'p', queue: 'x' }, children: [{ payload: 'c' }] }, 400, 'invalid_flow', undefined],
      ['no children', { parent: { payload: 'p' }, children: [] }, 400, 'invalid_flow', undefined],
      ['children not a list', { parent: { payload: 'p' }, children: { payload: 'c' } }, 400, 'invalid_flow', undefined],
      ['1001 children', { parent: { payload: 'p' }, children: Array.from({ length: 1001 }, () => ({ payload: '' })) }, 400, 'invalid_flow', undefined],
      ['a nested child', { parent: { payload: 'p' }, children: [{ payload: 'c' }, { payload: 'c', children: [{ payload: 'g' }] }] }, 400, 'invalid_flow', 1],
      ['children under the parent', { parent: { payload: 'p', children: [{ payload: 'c' }] }, children: [{ payload: 'c' }] }, 400, 'invalid_flow', undefined],
      ['an unknown child field', { parent: { payload: 'p' }, children: [{ payload: 'c' }, { payload: 'c', group: 'x' }] }, 400, 'invalid_flow', 1],
      [
        'a repeated child id',
        {
          parent: { payload: 'p' },
          children: [
            { payload: 'a', id },
            { payload: 'b', id },
          ],
        },
        400,
        'invalid_flow',
        1,
      ],
      ['a child with the parent id', { parent: { payload: 'p', id }, children: [{ payload: 'a', id }] }, 400, 'invalid_flow', 0],
      ['a bad child queue', { parent: { payload: 'p' }, children: [{ payload: 'c', queue: 'a{b}' }] }, 400, 'invalid_flow', 0],
      ['the reserved queue', { parent: { payload: 'p' }, children: [{ payload: 'c', queue: 'emq' }] }, 400, 'invalid_flow', 0],
      ['a child id of another kind', { parent: { payload: 'p' }, children: [{ payload: 'c', id: 'ORD0NgWEfAEJfs' }] }, 400, 'invalid_flow', 0],
      ['a parent id of another kind', { parent: { payload: 'p', id: 'ACC0JZGkP8sq48' }, children: [{ payload: 'c' }] }, 400, 'invalid_flow', undefined],
      ['an id not a string', { parent: { payload: 'p' }, children: [{ payload: 'c', id: 7 }] }, 400, 'invalid_flow', 0],
      ['both payloads', { parent: { payload: 'p' }, children: [{ payload: 'c', payloadBase64: 'YQ==' }] }, 400, 'invalid_flow', 0],
      ['no payload', { parent: { payload: 'p' }, children: [{ id }] }, 400, 'invalid_flow', 0],
      ['a payload not a string', { parent: { payload: 1 }, children: [{ payload: 'c' }] }, 400, 'invalid_flow', undefined],
      ['bad base64', { parent: { payload: 'p' }, children: [{ payload: 'c' }, { payloadBase64: 'YQ' }] }, 400, 'invalid_flow', 1],
      ['a lone surrogate', { parent: { payload: 'p' }, children: [{ payload: 'a\ud800' }] }, 400, 'invalid_flow', 0],
      ['a bad onFailure', { parent: { payload: 'p' }, children: [{ payload: 'c', onFailure: 'retry' }] }, 400, 'invalid_flow', 0],
      ['a parent over the payload limit', { parent: { payload: 'p'.repeat(4097) }, children: [{ payload: 'c' }] }, 400, 'invalid_flow', undefined],
      ['a child over the payload limit', { parent: { payload: 'p' }, children: [{ payloadBase64: b64(Array(4097).fill(1)) }] }, 400, 'invalid_flow', 0],
    ];
    it.each(cases)('%s: 400 invalid_flow naming the child, nothing written', async (_, body, status, code, index) => {
      const q = fresh('wfbad');
      const other = fresh('wfbad');
      const res = await postFlow(q, body);
      expect([res.status, res.body.code, res.body.index, res.type]).toEqual([status, code, index, 'application/problem+json']);
      expect(await snapshot(q, other, 'a{b}', 'emq')).toEqual({});
    });

    it('413: a body over EMQ_MAX_BATCH_BYTES, nothing written', async () => {
      const env = { ...base, EMQ_MAX_BATCH_BYTES: '1024' };
      const q = fresh('wfbig');
      const over = { parent: { payload: 'p' }, children: Array.from({ length: 40 }, () => ({ payload: 'c'.repeat(30) })) };
      const res = await postFlow(q, over, { env });
      expect([res.status, res.body.code]).toEqual([413, 'payload_too_large']);
      expect(await snapshot(q)).toEqual({});
      const within = await postFlow(q, { parent: { payload: 'p' }, children: over.children.slice(0, 10) }, { env });
      expect(within.status).toBe(201);
    });

    it('403: a child in a queue the token may not use, named by index; nothing written in either queue', async () => {
      const q = fresh('wf-own');
      const other = fresh('wf-else');
      const res = await postFlow(q, { parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', queue: other }] }, { token: NARROW });
      expect([res.status, res.body.code, res.body.index]).toEqual([403, 'forbidden_queue', 1]);
      expect(await snapshot(q, other)).toEqual({});
      const parentForbidden = await postFlow(other, { parent: { payload: 'p' }, children: [{ payload: 'a', queue: q }] }, { token: NARROW });
      expect([parentForbidden.status, parentForbidden.body.code, parentForbidden.body.index]).toEqual([403, 'forbidden_queue', undefined]);
      expect(await snapshot(q, other)).toEqual({});
      const own = await postFlow(q, { parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', queue: `${q}.two` }] }, { token: NARROW });
      expect(own.status).toBe(201);
    });

    it('409: a child id that names another job, in the parent queue or another, named by index; nothing written', async () => {
      const q = fresh('wftaken');
      const other = fresh('wftaken');
      const taken = mintId();
      await admin('HSET', rowKey(q, taken), 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
      await admin('HSET', rowKey(other, taken), 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
      const before = await snapshot(q, other);
      const same = await postFlow(q, { parent: { payload: 'p' }, children: [{ payloadBase64: b64([0xff]) }, { payload: 'b', id: taken }] });
      expect([same.status, same.body.code, same.body.index]).toEqual([409, 'job_exists', 1]);
      const across = await postFlow(q, {
        parent: { payload: 'p' },
        children: [{ payload: 'a' }, { payloadBase64: b64([0xfe]) }, { payload: 'b', id: taken, queue: other }],
      });
      expect([across.status, across.body.code, across.body.index]).toEqual([409, 'job_exists', 2]);
      expect(await snapshot(q, other)).toEqual(before);
    });
  });
});
