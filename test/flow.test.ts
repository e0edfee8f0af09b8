// Flows (addFlow: @flow, @flow-parent, @flow-child) through each connection against each real
// server: the children claimable with their parent and policy, the parent held with its count;
// a flow with a child in another queue landed parent first, each child in its own queue; the
// same flow sent again completes a flow cut off halfway and duplicates nothing; minted ids
// that collide are minted again; and every refusal writes nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Outcome, ScriptCommand } from '../shared/connection.js';
import {
  ConflictError,
  ConnectionError,
  FLOW_MAX_CHILDREN,
  InvalidFlowError,
  InvalidIdError,
  InvalidPayloadError,
  InvalidQueueError,
  KindError,
  WrongTypeError,
  addFlow,
  createMinter,
  decodeId,
  dependenciesKey,
  flowChildScript,
  flowOutboxKey,
  flowParentScript,
  flowScript,
  mintId,
  processedKey,
  type FlowChildInput,
  type FlowInput,
  type PartlyLanded,
} from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { connectedTo, targets } from './support/targets.js';

describe('flow keys', () => {
  it('dependencies, processed and the outbox are built from checked parts', () => {
    expect(dependenciesKey('orders', 'JOB0JZGkP8sq48')).toBe('emq:{orders}:job:JOB0JZGkP8sq48:dependencies');
    expect(processedKey('orders', 'JOB0JZGkP8sq48')).toBe('emq:{orders}:job:JOB0JZGkP8sq48:processed');
    expect(flowOutboxKey('orders')).toBe('emq:{orders}:flow:outbox');
    expect(() => dependenciesKey('a:b', 'JOB0JZGkP8sq48')).toThrow(InvalidQueueError);
    expect(() => processedKey('orders', 'ORD0NgWEfAEJfs')).toThrow(KindError);
    expect(() => flowOutboxKey('emq')).toThrow(InvalidQueueError);
  });
});

describe.each(targets())('flows: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  const row = (q: string, id: string) => `emq:{${q}}:job:${id}`;
  /** A row's fields in the server's order, values as latin1. */
  const fields = async (q: string, id: string) => Object.entries(await admin.hgetall(row(q, id))).map(([k, v]) => [k, v.toString('latin1')]);
  const zset = async (key: string) => {
    const flat = ((await admin.call('ZRANGE', key, '0', '-1', 'WITHSCORES')) as unknown[]).flatMap((e) =>
      Array.isArray(e)
        ? e
        : e !== null && typeof e === 'object' && 'key' in e
          ? [(e as { key: unknown }).key, (e as unknown as { value: unknown }).value]
          : [e],
    );
    const out: string[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push(`${String(flat[i])}@${Number(String(flat[i + 1]))}`);
    return out;
  };
  const text = async (...args: string[]) => {
    const v = await admin.call(...args);
    return v === null ? null : String(v);
  };
  const ids = (n: number) => Array.from({ length: n }, () => mintId());

  describe('every child in the parent queue: one atomic call', () => {
    it("the children claimable (row with parent and policy, pending at 0), the parent held in no set, its count; the flow's whole footprint", async () => {
      const q = freshQueue('flow');
      const [p, a, b, c] = ids(4);
      const r = await addFlow(conn, q, {
        parent: { id: p, payload: 'P' },
        children: [
          { id: a, payload: 'A' },
          { id: b, payload: 'B', onFailure: 'ignore' },
          { id: c, payload: 'C', queue: q, onFailure: 'fail-parent' },
        ],
      });
      expect(r).toEqual({
        verdict: 'enqueued',
        parent: { queue: q, id: p },
        children: [a, b, c].map((id) => ({ queue: q, id })),
      });
      expect(await fields(q, a!)).toEqual([
        ['state', 'pending'],
        ['attempts', '0'],
        ['payload', 'A'],
        ['parent', p],
        ['parent_policy', 'fp'],
      ]);
      expect((await fields(q, b!)).at(-1)).toEqual(['parent_policy', 'id']);
      expect((await fields(q, c!)).at(-1)).toEqual(['parent_policy', 'fp']);
      expect(await fields(q, p!)).toEqual([
        ['state', 'awaiting_children'],
        ['attempts', '0'],
        ['payload', 'P'],
      ]);
      expect(await text('GET', dependenciesKey(q, p!))).toBe('3');
      expect(await zset(`emq:{${q}}:pending`)).toEqual([`${a}@0`, `${b}@0`, `${c}@0`]);
      expect(await admin.footprint(q)).toEqual({
        [row(q, p!)]: 'hash',
        [dependenciesKey(q, p!)]: 'string',
        [row(q, a!)]: 'hash',
        [row(q, b!)]: 'hash',
        [row(q, c!)]: 'hash',
        [`emq:{${q}}:pending`]: 'zset',
      });
    });

    it('payload bytes are stored exactly, the parent and each child (one argument carries them all)', async () => {
      const q = freshQueue('flow');
      const payloads = [
        new Uint8Array([0xff, 0, 0xfe, 0xc3]),
        new Uint8Array(0),
        'text ✓',
        Uint8Array.from({ length: 256 }, (_, i) => i),
        Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7919) & 255),
        '',
      ];
      const r = await addFlow(conn, q, { parent: { payload: payloads[0]! }, children: payloads.slice(1).map((payload) => ({ payload })) });
      const stored = await Promise.all([r.parent, ...r.children].map(async (j) => (await admin.call('HGET', row(q, j.id), 'payload')) as Buffer));
      stored.forEach((s, i) => {
        const want = payloads[i]!;
        expect(Buffer.compare(s, typeof want === 'string' ? Buffer.from(want) : want), `payload ${i}`).toBe(0);
      });
    });

    it('minted ids: distinct, of this minter, in the order given; the flow lands under them', async () => {
      const q = freshQueue('flow');
      const minter = createMinter({ node: 321 });
      const r = await addFlow(conn, q, { parent: { payload: 'P' }, children: [{ payload: 'a' }, { id: mintId(), payload: 'b' }, { payload: 'c' }] }, minter);
      const all = [r.parent.id, ...r.children.map((c) => c.id)];
      expect(new Set(all).size).toBe(4);
      for (const id of [r.parent.id, r.children[0]!.id, r.children[2]!.id]) expect(decodeId(id).node).toBe(321);
      expect(await zset(`emq:{${q}}:pending`)).toEqual(r.children.map((c) => `${c.id}@0`).sort());
      expect((await fields(q, r.children[1]!.id)).find(([k]) => k === 'payload')).toEqual(['payload', 'b']);
    });

    it('sent again: duplicate, nothing written; a parent id in use (a job, a count left by a finished parent): duplicate, nothing written', async () => {
      const q = freshQueue('flow');
      const flow: FlowInput = { parent: { id: mintId(), payload: 'P' }, children: [{ id: mintId(), payload: 'a' }] };
      expect((await addFlow(conn, q, flow)).verdict).toBe('enqueued');
      let before = await snapshot(admin, q);
      expect((await addFlow(conn, q, flow)).verdict).toBe('duplicate');
      expect((await addFlow(conn, q, { ...flow, children: [{ id: mintId(), payload: 'other' }] })).verdict).toBe('duplicate');
      expect(await snapshot(admin, q)).toEqual(before);

      const q2 = freshQueue('flow');
      const [job, done] = ids(2);
      await admin.call('SET', row(q2, job!), 'not even a hash');
      await admin.call('SET', dependenciesKey(q2, done!), '0');
      before = await snapshot(admin, q2);
      for (const id of [job!, done!]) {
        expect((await addFlow(conn, q2, { parent: { id, payload: 'P' }, children: [{ payload: 'a' }] })).verdict).toBe('duplicate');
      }
      expect(await snapshot(admin, q2)).toEqual(before);
    });

    it('a child id that names a job: ConflictError naming the child, nothing written; a pending set of another type: WrongTypeError', async () => {
      const q = freshQueue('flow');
      const [taken, str] = ids(2);
      await admin.call('HSET', row(q, taken!), 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
      await admin.call('SET', row(q, str!), 'x');
      const before = await snapshot(admin, q);
      for (const [i, id] of [
        [1, taken!],
        [2, str!],
      ] as const) {
        const children = [{ id: mintId(), payload: 'a' }, { payload: 'b' }, { payload: 'c' }];
        children[i] = { id, payload: 'x' };
        const err = await addFlow(conn, q, { parent: { payload: 'P' }, children }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConflictError);
        expect((err as Error).message).toMatch(new RegExp(`^child ${i}: job ${id} exists already`));
      }
      expect(await snapshot(admin, q)).toEqual(before);

      const q2 = freshQueue('flow');
      await admin.call('SET', `emq:{${q2}}:pending`, 'x');
      const before2 = await snapshot(admin, q2);
      await expect(addFlow(conn, q2, { parent: { payload: 'P' }, children: [{ payload: 'a' }] })).rejects.toBeInstanceOf(WrongTypeError);
      expect(await snapshot(admin, q2)).toEqual(before2);
    });

    it('a flow too big for a REST request line, with bytes that are not UTF-8, lands whole over every connection (over REST as base64 arguments)', async () => {
      const q = freshQueue('flow');
      const children = Array.from({ length: 400 }, (_, i) => ({ payload: i === 399 ? new Uint8Array([0xff]) : `child ${i}` }));
      const r = await addFlow(conn, q, { parent: { payload: 'P' }, children });
      expect(r.verdict).toBe('enqueued');
      expect([...((await admin.call('HGET', row(q, r.children[399]!.id), 'payload')) as Buffer)]).toEqual([0xff]);
      expect(String(await admin.text('HGET', row(q, r.children[398]!.id), 'payload'))).toBe('child 398');
    });

    it(`${FLOW_MAX_CHILDREN} children land in one call`, async () => {
      const q = freshQueue('flow');
      const children = Array.from({ length: FLOW_MAX_CHILDREN }, (_, i) => ({ payload: `child ${i}` }));
      const r = await addFlow(conn, q, { parent: { payload: 'P' }, children });
      expect(r.verdict).toBe('enqueued');
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(FLOW_MAX_CHILDREN);
      expect(await text('GET', dependenciesKey(q, r.parent.id))).toBe(String(FLOW_MAX_CHILDREN));
      expect(String(await admin.text('HGET', row(q, r.children[999]!.id), 'payload'))).toBe('child 999');
    });
  });

  describe('a child in another queue: parent first, each child in its own queue', () => {
    /** A flow over the parent's queue q and two others: children 0 and 1 in c1, 2 in q, 3 in c2. */
    const spread = (q: string, c1: string, c2: string, p = mintId(), kids = ids(4)): FlowInput => ({
      parent: { id: p, payload: 'P' },
      children: [
        { id: kids[0], payload: 'a', queue: c1 },
        { id: kids[1], payload: new Uint8Array([0, 0xff]), queue: c1, onFailure: 'ignore' },
        { id: kids[2], payload: 'c', queue: q },
        { id: kids[3], payload: 'd', queue: c2 },
      ],
    });

    it('the parent held with the count of every child; each child in its queue, parent_queue only when another', async () => {
      const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
      const flow = spread(q, c1, c2);
      const p = flow.parent.id!;
      const [a, b, c, d] = flow.children.map((k) => k.id!) as [string, string, string, string];
      const r = await addFlow(conn, q, flow);
      expect(r).toEqual({
        verdict: 'enqueued',
        parent: { queue: q, id: p },
        children: [
          { queue: c1, id: a },
          { queue: c1, id: b },
          { queue: q, id: c },
          { queue: c2, id: d },
        ],
      });
      expect(await fields(q, p)).toEqual([
        ['state', 'awaiting_children'],
        ['attempts', '0'],
        ['payload', 'P'],
      ]);
      expect(await text('GET', dependenciesKey(q, p))).toBe('4');
      expect(await fields(c1, a)).toEqual([
        ['state', 'pending'],
        ['attempts', '0'],
        ['payload', 'a'],
        ['parent', p],
        ['parent_queue', q],
        ['parent_policy', 'fp'],
      ]);
      expect(await fields(c1, b)).toEqual([
        ['state', 'pending'],
        ['attempts', '0'],
        ['payload', '\u0000\u00ff'],
        ['parent', p],
        ['parent_queue', q],
        ['parent_policy', 'id'],
      ]);
      expect(await fields(q, c)).toEqual([
        ['state', 'pending'],
        ['attempts', '0'],
        ['payload', 'c'],
        ['parent', p],
        ['parent_policy', 'fp'],
      ]);
      expect((await fields(c2, d)).slice(3)).toEqual([
        ['parent', p],
        ['parent_queue', q],
        ['parent_policy', 'fp'],
      ]);
      expect(await zset(`emq:{${c1}}:pending`)).toEqual([`${a}@0`, `${b}@0`]);
      expect(await zset(`emq:{${q}}:pending`)).toEqual([`${c}@0`]);
      expect(await zset(`emq:{${c2}}:pending`)).toEqual([`${d}@0`]);
      expect(await admin.footprint(q)).toEqual({ [row(q, p)]: 'hash', [dependenciesKey(q, p)]: 'string', [row(q, c)]: 'hash', [`emq:{${q}}:pending`]: 'zset' });
      expect(Object.keys(await admin.footprint(c1)).sort()).toEqual([row(c1, a), row(c1, b), `emq:{${c1}}:pending`].sort());
    });

    it('a child in the parent queue with bytes that are not UTF-8 lands whole over every connection (it once went as REST JSON after the parent was held)', async () => {
      const [q, c1] = ['flowp', 'flowc'].map((l) => freshQueue(l)) as [string, string];
      const [p, a, b] = ids(3) as [string, string, string];
      const flow: FlowInput = {
        parent: { id: p, payload: new Uint8Array([0xfe, 0]) },
        children: [
          { id: a, payload: new Uint8Array([0xff, 0, 0xc3]), onFailure: 'ignore' },
          { id: b, payload: new Uint8Array([0x80]), queue: c1 },
        ],
      };
      expect((await addFlow(conn, q, flow)).verdict).toBe('enqueued');
      expect(await fields(q, a)).toEqual([
        ['state', 'pending'],
        ['attempts', '0'],
        ['payload', '\u00ff\u0000\u00c3'],
        ['parent', p],
        ['parent_policy', 'id'],
      ]);
      expect((await fields(c1, b)).slice(2)).toEqual([
        ['payload', '\u0080'],
        ['parent', p],
        ['parent_queue', q],
        ['parent_policy', 'fp'],
      ]);
      expect(await zset(`emq:{${q}}:pending`)).toEqual([`${a}@0`]);
      const before = await snapshot(admin, q, c1);
      expect((await addFlow(conn, q, flow)).verdict).toBe('duplicate');
      expect(await snapshot(admin, q, c1)).toEqual(before);
    });

    it('sent again whole: duplicate, nothing written; the parent in another state or with another payload: duplicate, nothing written', async () => {
      const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
      const flow = spread(q, c1, c2);
      await addFlow(conn, q, flow);
      let before = await snapshot(admin, q, c1, c2);
      expect((await addFlow(conn, q, flow)).verdict).toBe('duplicate');
      expect(await snapshot(admin, q, c1, c2)).toEqual(before);

      const other = { ...flow, parent: { ...flow.parent, payload: 'another' } };
      expect((await addFlow(conn, q, other)).verdict).toBe('duplicate');
      expect(await snapshot(admin, q, c1, c2)).toEqual(before);

      // the same flow whose parent was released (state pending): the flow ran; duplicate
      await admin.call('HSET', row(q, flow.parent.id!), 'state', 'pending');
      before = await snapshot(admin, q, c1, c2);
      expect((await addFlow(conn, q, flow)).verdict).toBe('duplicate');
      // another flow naming a job as its parent
      const job = mintId();
      await admin.call('HSET', row(q, job), 'state', 'pending', 'attempts', '0', 'payload', 'P');
      const before2 = await snapshot(admin, q, c1, c2);
      expect((await addFlow(conn, q, spread(q, c1, c2, job))).verdict).toBe('duplicate');
      expect(await snapshot(admin, q, c1, c2)).toEqual(before2);
    });

    it('cut off halfway (the transport failed after some children landed): the error carries the ids; the same flow sent again completes it, then is a duplicate', async () => {
      const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
      const flow = spread(q, c1, c2);
      /** The real connection, except that a landing pipeline lands only its first `k` calls, then fails. */
      const cut = (k: number): Connection => ({
        run: (c) => conn.run(c),
        async pipeline(calls: readonly ScriptCommand[]): Promise<Outcome[]> {
          if (!calls.some((c) => c.args[4] === 'land')) return conn.pipeline(calls);
          await conn.pipeline(calls.slice(0, k));
          throw new ConnectionError('the link dropped');
        },
        close: async () => {},
      });
      const err = await addFlow(cut(2), q, flow).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as Error).message).toMatch(/partly landed: its parent .* is held until every child lands/);
      expect((err as PartlyLanded).flow.parent).toEqual({ queue: q, id: flow.parent.id });
      expect((err as PartlyLanded).flow.children.map((c) => c.id)).toEqual(flow.children.map((c) => c.id));
      expect((await fields(q, flow.parent.id!))[0]).toEqual(['state', 'awaiting_children']);
      expect(await zset(`emq:{${c1}}:pending`)).toHaveLength(2);
      expect(await admin.footprint(c2)).toEqual({});

      // sent again: the missing children land, those there are skipped
      const r = await addFlow(conn, q, flow);
      expect(r.verdict).toBe('enqueued');
      expect(await zset(`emq:{${c1}}:pending`)).toHaveLength(2);
      expect(await zset(`emq:{${q}}:pending`)).toEqual([`${flow.children[2]!.id}@0`]);
      expect(await zset(`emq:{${c2}}:pending`)).toEqual([`${flow.children[3]!.id}@0`]);
      expect(await text('GET', dependenciesKey(q, flow.parent.id!))).toBe('4');
      const before = await snapshot(admin, q, c1, c2);
      expect((await addFlow(conn, q, flow)).verdict).toBe('duplicate');
      expect(await snapshot(admin, q, c1, c2)).toEqual(before);

      // held by an earlier send, but this one mints its children: they cannot be told from that send's
      const q3 = freshQueue('flowp');
      const partial = spread(q3, c1, c2);
      await addFlow(cut(0), q3, partial).catch(() => undefined);
      const before3 = await snapshot(admin, q3, c1, c2);
      const minted = { ...partial, children: partial.children.map(({ id: _, ...c }) => c) };
      expect((await addFlow(conn, q3, minted)).verdict).toBe('duplicate');
      expect(await snapshot(admin, q3, c1, c2)).toEqual(before3);
    });

    it('another flow naming a held parent with its payload: duplicate, nothing written, when it has another number of children or omits a child the parent counted done', async () => {
      const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
      const flow = spread(q, c1, c2);
      // held, one child landed, then cut off
      const cut: Connection = {
        run: (c) => conn.run(c),
        async pipeline(calls: readonly ScriptCommand[]): Promise<Outcome[]> {
          if (!calls.some((c) => c.args[4] === 'land')) return conn.pipeline(calls);
          await conn.pipeline(calls.slice(0, 1));
          throw new ConnectionError('the link dropped');
        },
        close: async () => {},
      };
      await addFlow(cut, q, flow).catch(() => undefined);
      const fresh = (n: number) => Array.from({ length: n }, (_, i) => ({ id: mintId(), payload: `other ${i}`, queue: i % 2 ? c2 : c1 }));
      let before = await snapshot(admin, q, c1, c2);
      // one child fewer, one more: another flow
      for (const n of [flow.children.length - 1, flow.children.length + 1]) {
        expect((await addFlow(conn, q, { parent: flow.parent, children: fresh(n) })).verdict).toBe('duplicate');
        expect(await snapshot(admin, q, c1, c2)).toEqual(before);
      }
      // the landed child completes (the library's complete: DECR, recorded in :processed); a flow
      // of as many children that does not name it is another flow's
      const done = flow.children[0]!;
      await admin.call('DEL', `emq:{${c1}}:job:${done.id}`);
      await admin.call('ZREM', `emq:{${c1}}:pending`, done.id!);
      await admin.call('DECR', dependenciesKey(q, flow.parent.id!));
      await admin.call('HSET', processedKey(q, flow.parent.id!), done.id!, 'ok');
      before = await snapshot(admin, q, c1, c2);
      expect((await addFlow(conn, q, { parent: flow.parent, children: fresh(flow.children.length) })).verdict).toBe('duplicate');
      expect(await snapshot(admin, q, c1, c2)).toEqual(before);
      // the same flow again: the rest land, the done one does not
      expect((await addFlow(conn, q, flow)).verdict).toBe('enqueued');
      expect(await admin.footprint(c1)).not.toHaveProperty(`emq:{${c1}}:job:${done.id}`);
    });

    it('a child id held by another job (another parent, none, not a hash): ConflictError naming the child, nothing written, the parent not held', async () => {
      const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
      const [x, y, z] = ids(3);
      await admin.call('HSET', row(c1, x!), 'state', 'pending', 'attempts', '0', 'payload', 'a', 'parent', mintId(), 'parent_queue', q);
      await admin.call('HSET', row(q, y!), 'state', 'pending', 'attempts', '0', 'payload', 'c');
      await admin.call('SET', row(c2, z!), 'x');
      const before = await snapshot(admin, q, c1, c2);
      for (const [i, id] of [
        [1, x!],
        [2, y!],
        [3, z!],
      ] as const) {
        const flow = spread(q, c1, c2);
        (flow.children[i] as FlowChildInput).id = id;
        const err = await addFlow(conn, q, flow).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConflictError);
        expect((err as Error).message).toMatch(new RegExp(`^child ${i}: job ${id} exists and is not a child of ${flow.parent.id}.*Nothing was written$`));
      }
      // a parent of its own minting, and a child of that id there already: refused too
      const flow = spread(q, c1, c2);
      delete flow.parent.id;
      await expect(addFlow(conn, q, { ...flow, children: [{ id: y!, payload: 'c' }, ...flow.children.slice(1)] })).rejects.toBeInstanceOf(ConflictError);
      expect(await snapshot(admin, q, c1, c2)).toEqual(before);
    });

    it("a child queue's pending set or outbox of another type: WrongTypeError naming it, nothing written", async () => {
      for (const key of ['pending', 'flow:outbox']) {
        const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
        await admin.call('SET', `emq:{${c2}}:${key}`, 'x');
        const before = await snapshot(admin, q, c1, c2);
        const err = await addFlow(conn, q, spread(q, c1, c2)).catch((e: unknown) => e);
        expect(err, key).toBeInstanceOf(WrongTypeError);
        expect((err as Error).message).toMatch(new RegExp(`^child 3: .*emq:\\{${c2}\\}:${key}`));
        expect(await snapshot(admin, q, c1, c2)).toEqual(before);
      }
    });

    it(`${FLOW_MAX_CHILDREN} children over three queues, ids minted`, async () => {
      const [q, c1, c2] = ['flowp', 'flowc', 'flowc'].map((l) => freshQueue(l)) as [string, string, string];
      const queues = [q, c1, c2];
      const children = Array.from({ length: FLOW_MAX_CHILDREN }, (_, i) => ({ payload: `child ${i}`, queue: queues[i % 3] }));
      const r = await addFlow(conn, q, { parent: { payload: 'P' }, children });
      expect(r.verdict).toBe('enqueued');
      expect(await Promise.all(queues.map(async (x) => Number(await admin.call('ZCARD', `emq:{${x}}:pending`))))).toEqual([334, 333, 333]);
      expect(await text('GET', dependenciesKey(q, r.parent.id))).toBe(String(FLOW_MAX_CHILDREN));
    });
  });

  describe('refused before anything is sent', () => {
    it('the queue, ids, payloads, the number of children, a repeated id, a nested flow, a policy: each names what is wrong', async () => {
      const q = freshQueue('flow');
      const c = freshQueue('flowc');
      const before = await snapshot(admin, q, c);
      const one = [{ payload: 'a' }];
      const cases: Array<[string, FlowInput, new (...a: never[]) => Error, RegExp]> = [
        ['a{b}', { parent: { payload: 'P' }, children: one }, InvalidQueueError, /queue name/],
        [q, { parent: { payload: 'P' }, children: [{ payload: 'a', queue: 'x:y' }] }, InvalidQueueError, /^child 0: queue name/],
        [q, { parent: { id: 'ORD0NgWEfAEJfs', payload: 'P' }, children: one }, KindError, /^parent: /],
        [q, { parent: { payload: 'P' }, children: [{ payload: 'a' }, { id: 'JOB01m8ktkzg6eaatm9sqpt0r51n2', payload: 'b' }] }, InvalidIdError, /^child 1: /],
        [q, { parent: { payload: '\udfff' }, children: one }, InvalidPayloadError, /^parent: /],
        [q, { parent: { payload: 'P' }, children: [{ payload: 'a' }, { payload: 7 as never }] }, InvalidPayloadError, /^child 1: /],
        [q, { parent: { payload: 'P' }, children: [] }, InvalidFlowError, /1 to 1000 children; this one has 0/],
        [q, { parent: { payload: 'P' }, children: Array.from({ length: 1001 }, () => ({ payload: 'a' })) }, InvalidFlowError, /has 1001 children/],
        [q, { parent: { payload: 'P' }, children: undefined as never }, InvalidFlowError, /no children list/],
        [q, { parent: undefined as never, children: one }, InvalidFlowError, /needs a parent/],
        [q, { parent: { payload: 'P' }, children: [{ payload: 'a', children: one } as never] }, InvalidFlowError, /^child 0: has children of its own/],
        [q, { parent: { payload: 'P' }, children: [null as never] }, InvalidFlowError, /^child 0: must be an object/],
        [q, { parent: { payload: 'P' }, children: [{ payload: 'a', onFailure: 'fp' as never }] }, InvalidFlowError, /^child 0: onFailure is "fp"/],
        [
          q,
          { parent: { id: 'JOB0JZGkP8sq48', payload: 'P' }, children: [{ payload: 'a', queue: c, id: 'JOB0JZGkP8sq48' }] },
          InvalidFlowError,
          /^child 0: repeats the id of the parent/,
        ],
        [
          q,
          { parent: { payload: 'P' }, children: [{ payload: 'a', id: 'JOB0JZGkP8sq49' }, { payload: 'b' }, { payload: 'c', id: 'JOB0JZGkP8sq49', queue: c }] },
          InvalidFlowError,
          /^child 2: repeats the id of child 0/,
        ],
      ];
      for (const [queue, flow, type, why] of cases) {
        const err = await addFlow(conn, queue, flow).catch((e: unknown) => e);
        expect(err, String(why)).toBeInstanceOf(type);
        expect((err as Error).message).toMatch(why);
      }
      expect(await snapshot(admin, q, c)).toEqual(before);
    });
  });

  describe("the scripts' own gates (EMQKIND, EMQLAYOUT): nothing written", () => {
    const evalOf = (script: { text: string }, keys: string[], args: Array<string | Uint8Array>) => conn.run({ op: 'eval', script: script.text, keys, args });
    it('@flow, @flow-parent, @flow-child', async () => {
      const q = freshQueue('flow');
      const c = freshQueue('flowc');
      const [p, a, b] = ids(3);
      const flowKeys = [row(q, p!), dependenciesKey(q, p!), `emq:{${q}}:pending`, row(q, a!), row(q, b!)];
      const flowArgs = [p!, '1', a!, 'fp', '1', b!, 'id', '1', 'PAB'];
      const parentKeys = [row(q, p!), dependenciesKey(q, p!), processedKey(q, p!)];
      const childKeys = [row(c, a!), `emq:{${c}}:pending`, flowOutboxKey(c)];
      const swap = <T>(list: T[], i: number, v: T) => list.map((x, j) => (j === i ? v : x));
      const cases: Array<[{ text: string }, string[], string[], RegExp]> = [
        [flowScript, flowKeys, swap(flowArgs, 0, 'ORD0NgWEfAEJfs'), /^EMQKIND/],
        [flowScript, flowKeys, swap(flowArgs, 5, 'USR0NgWEfAEJfs'), /^EMQKIND/],
        [flowScript, flowKeys.slice(0, 3), flowArgs.slice(0, 3), /^EMQLAYOUT:? expected 4 to 1003 keys/],
        [flowScript, flowKeys, flowArgs.slice(0, -1), /^EMQLAYOUT:? expected 9 arguments/],
        [flowScript, flowKeys, swap(flowArgs, 3, 'xx'), /^EMQLAYOUT.*policy/],
        [flowScript, flowKeys, swap(flowArgs, 4, '01'), /^EMQLAYOUT.*ARGV\[5\] must be a size/],
        [flowScript, flowKeys, swap(flowArgs, 8, 'PA'), /^EMQLAYOUT:? the sizes add up to 3 bytes, the payloads are 2/],
        [flowScript, swap(flowKeys, 4, row(q, a!)), swap(flowArgs, 5, a!), /^EMQLAYOUT:? child 2 repeats the id/],
        [flowScript, swap(flowKeys, 3, row(q, p!)), swap(flowArgs, 2, p!), /^EMQLAYOUT:? child 1 repeats the id/],
        [flowScript, swap(flowKeys, 4, row(c, b!)), flowArgs, /^EMQLAYOUT:? KEYS\[5\]/],
        [flowScript, swap(flowKeys, 1, processedKey(q, p!)), flowArgs, /^EMQLAYOUT:? KEYS\[1\] and KEYS\[2\]/],
        [flowScript, swap(flowKeys, 2, `emq:{emq}:pending`), flowArgs, /^EMQLAYOUT:? KEYS\[3\]/],
        [flowParentScript, parentKeys, ['ORD0NgWEfAEJfs', '2', 'P'], /^EMQKIND/],
        [flowParentScript, parentKeys, [p!, '0', 'P'], /^EMQLAYOUT:? ARGV/],
        [flowParentScript, parentKeys, [p!, '1001', 'P'], /^EMQLAYOUT:? ARGV/],
        [flowParentScript, parentKeys, [p!, '02', 'P'], /^EMQLAYOUT:? ARGV/],
        [flowParentScript, parentKeys, [p!, '2'], /^EMQLAYOUT:? ARGV/],
        [flowParentScript, parentKeys.slice(0, 2), [p!, '2', 'P'], /^EMQLAYOUT:? KEYS/],
        [flowParentScript, swap(parentKeys, 2, processedKey(c, p!)), [p!, '2', 'P'], /^EMQLAYOUT:? KEYS must be/],
        [flowChildScript, childKeys, ['ORD0NgWEfAEJfs', p!, q, 'fp', 'land', 'x'], /^EMQKIND/],
        [flowChildScript, childKeys, [a!, 'ORD0NgWEfAEJfs', q, 'fp', 'land', 'x'], /^EMQLAYOUT:? ARGV\[2\]/],
        [flowChildScript, childKeys, [a!, a!, q, 'fp', 'land', 'x'], /^EMQLAYOUT:? ARGV\[2\]/],
        // the child's own queue names the parent in it, as empty does: its record is then :processed
        [flowChildScript, childKeys, [a!, p!, c, 'fp', 'land', 'x'], /^EMQLAYOUT:? KEYS\[3\] must be/],
        [flowChildScript, childKeys, [a!, p!, 'a:b', 'fp', 'land', 'x'], /^EMQLAYOUT:? ARGV\[3\]/],
        [flowChildScript, childKeys, [a!, p!, '', 'fp', 'land', 'x'], /^EMQLAYOUT:? KEYS\[3\] must be/],
        [flowChildScript, childKeys, [a!, p!, q, 'fail', 'land', 'x'], /^EMQLAYOUT:? ARGV:/],
        [flowChildScript, childKeys, [a!, p!, q, 'fp', 'land'], /^EMQLAYOUT:? ARGV:/],
        [flowChildScript, childKeys, [a!, p!, q, 'fp', 'check', 'x'], /^EMQLAYOUT:? ARGV:/],
        [flowChildScript, childKeys, [a!, p!, q, 'fp', 'write', 'x'], /^EMQLAYOUT:? ARGV:/],
        [flowChildScript, swap(childKeys, 0, row(c, b!)), [a!, p!, q, 'fp', 'land', 'x'], /^EMQLAYOUT:? KEYS\[1\]/],
        [flowChildScript, swap(childKeys, 2, processedKey(c, p!)), [a!, p!, q, 'fp', 'land', 'x'], /^EMQLAYOUT:? KEYS\[3\] must be/],
        [flowChildScript, childKeys.slice(0, 2), [a!, p!, q, 'fp', 'land', 'x'], /^EMQLAYOUT:? KEYS/],
      ];
      const before = await snapshot(admin, q, c);
      for (const [script, keys, args, why] of cases) {
        const outcome = await evalOf(script, keys, args);
        const said = `${keys.join(' ')} | ${args.join(' ')}`;
        expect(outcome.ok, said).toBe(false);
        expect(!outcome.ok && outcome.error, said).toMatch(why);
        expect(!outcome.ok && outcome.error).toMatch(/^[ -~]{1,400}$/);
      }
      expect(await snapshot(admin, q, c)).toEqual(before);
    });
  });

  describe('collisions', () => {
    it('two minters on one node id and a frozen clock mint the same ids: every flow lands whole, under ids of its own', async () => {
      let mints = 0;
      const twins = [0, 1].map(() => {
        const m = createMinter({ node: 9, now: () => Date.parse('2026-06-01T12:00:00Z') });
        return () => (mints++, m());
      });
      const q = freshQueue('flowcol');
      const c = freshQueue('flowcol');
      const shapes = (m: number): FlowInput[] => [
        { parent: { payload: `same ${m}` }, children: [{ payload: 'a' }, { payload: 'b' }] },
        { parent: { payload: `cross ${m}` }, children: [{ payload: 'c', queue: c }, { payload: 'd' }] },
      ];
      const results = [];
      for (const [m, mint] of twins.entries()) for (const flow of shapes(m)) results.push(await addFlow(conn, q, flow, mint));
      expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'enqueued', 'enqueued']);
      // an id names a job within its queue: a reminted id may equal a job's of another queue
      // (remint skips 0 to 63 of the frozen minter's ids, and the other minter's are 0 to 5)
      const all = results.flatMap((r) => [r.parent, ...r.children]);
      expect(new Set(all.map((j) => `${j.queue}/${j.id}`)).size).toBe(12);
      expect(mints).toBeGreaterThan(12); // the second minter's ids collided, and were minted again
      for (const r of results) {
        expect(String(await admin.text('HGET', row(q, r.parent.id), 'state'))).toBe('awaiting_children');
        for (const k of r.children) expect(String(await admin.text('HGET', row(k.queue, k.id), 'parent'))).toBe(r.parent.id);
      }
    });
  });
});
