// @genqueue and @genqueue-once through each connection against each real server: the row
// with its group, the lane entry at score 0, the ring and wake exactly as the library's rule;
// the flat pending set untouched; duplicates and every refusal write nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Outcome } from '../shared/connection.js';
import {
  BatchError,
  ConflictError,
  InvalidIdError,
  InvalidPayloadError,
  InvalidQueueError,
  KindError,
  LayoutError,
  WrongTypeError,
  dedupIdOf,
  dedupKey,
  enqueueGrouped,
  enqueueGroupedMany,
  enqueueGroupedOnce,
  genqueueKeys,
  genqueueOnceScript,
  genqueueScript,
  laneKey,
  mintId,
  validateGroup,
} from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { refusalOf } from './support/gate.js';
import { connectedTo, targets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';

describe('group names and lane keys', () => {
  it('a group is a branded id of any namespace; anything else is InvalidIdError saying what is wrong', () => {
    for (const g of [A, B, 'JOB0JZGkP8sq48', 'USRAzL8n0Y58m7', 'AAA00000000000']) expect(() => validateGroup(g)).not.toThrow();
    const bad: Array<[unknown, RegExp]> = [
      ['prt0KHTOWnGLuC', /namespace of 3 capital letters/],
      ['USRzzzzzzzzzzz', /more than 63 bits/],
      ['PRT0KHTOWnGLu', /13 characters long/],
      ['PRT0KHTOWnGL!C', /outside base62/],
      ['', /0 characters long/],
      [42, /must be a string/],
    ];
    for (const [g, why] of bad) {
      expect(() => validateGroup(g), String(g)).toThrow(InvalidIdError);
      expect(() => validateGroup(g)).toThrow(why);
    }
    expect(laneKey('orders', A)).toBe(`emq:{orders}:g:${A}:pending`);
    expect(() => laneKey('a:b', A)).toThrow(InvalidQueueError);
    expect(genqueueKeys('orders')('JOB0JZGkP8sq48', A)).toEqual([
      'emq:{orders}:job:JOB0JZGkP8sq48',
      `emq:{orders}:g:${A}:pending`,
      'emq:{orders}:ring',
      'emq:{orders}:paused',
      'emq:{orders}:glimit',
      'emq:{orders}:gactive',
      'emq:{orders}:wake',
    ]);
  });
});

describe.each(targets())('@genqueue: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  const fields = (q: string, id: string) => admin.row(q, id);
  const list = (key: string) => admin.list(key);
  const lane = async (q: string, g: string) => {
    const flat = ((await admin.call('ZRANGE', `emq:{${q}}:g:${g}:pending`, '0', '-1', 'WITHSCORES')) as unknown[]).flatMap((e) =>
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
  const run = (keys: string[], args: Array<string | Uint8Array>): Promise<Outcome> => conn.run({ op: 'eval', script: genqueueScript.text, keys, args });

  describe('writes', () => {
    it('the four-field row, the lane entry at score 0, the group on the ring with one wake; the flat pending set untouched', async () => {
      const q = freshQueue('gq');
      const id = mintId();
      expect(await enqueueGrouped(conn, q, A, id, 'cargo')).toBe('enqueued');
      expect(await fields(q, id)).toEqual({ state: 'pending', attempts: '0', payload: 'cargo', group: A });
      expect(await lane(q, A)).toEqual([`${id}@0`]);
      expect(await list(`emq:{${q}}:ring`)).toEqual([A]);
      expect(await list(`emq:{${q}}:wake`)).toEqual(['1']);
      expect(await admin.footprint(q)).toEqual({
        [`emq:{${q}}:job:${id}`]: 'hash',
        [`emq:{${q}}:g:${A}:pending`]: 'zset',
        [`emq:{${q}}:ring`]: 'list',
        [`emq:{${q}}:wake`]: 'list',
      });
    });

    it("a group already on the ring is not added again and gets no wake; another group joins the ring's end", async () => {
      const q = freshQueue('gq');
      const [a1, a2, b1] = [mintId(), mintId(), mintId()];
      await enqueueGrouped(conn, q, A, a1, '1');
      await enqueueGrouped(conn, q, A, a2, '2');
      expect(await list(`emq:{${q}}:ring`)).toEqual([A]);
      expect(await list(`emq:{${q}}:wake`)).toEqual(['1']);
      await enqueueGrouped(conn, q, B, b1, '3');
      expect(await list(`emq:{${q}}:ring`)).toEqual([A, B]);
      expect(await list(`emq:{${q}}:wake`)).toEqual(['1', '1']);
      expect(await lane(q, A)).toEqual([`${a1}@0`, `${a2}@0`]);
    });

    it('the ring rule: paused, at or above the limit: no ring, no wake; below the limit, no limit, another group paused: ring and wake', async () => {
      const cases: Array<[string, (q: string) => Promise<unknown>, boolean]> = [
        ['paused', (q) => admin.call('SADD', `emq:{${q}}:paused`, A), false],
        ['at its limit', (q) => Promise.all([admin.call('HSET', `emq:{${q}}:glimit`, A, '2'), admin.call('HSET', `emq:{${q}}:gactive`, A, '2')]), false],
        ['above its limit', (q) => Promise.all([admin.call('HSET', `emq:{${q}}:glimit`, A, '1'), admin.call('HSET', `emq:{${q}}:gactive`, A, '3')]), false],
        ['a limit of 0, nothing active', (q) => admin.call('HSET', `emq:{${q}}:glimit`, A, '0'), false],
        ['below its limit', (q) => Promise.all([admin.call('HSET', `emq:{${q}}:glimit`, A, '3'), admin.call('HSET', `emq:{${q}}:gactive`, A, '2')]), true],
        ['a limit, nothing active', (q) => admin.call('HSET', `emq:{${q}}:glimit`, A, '1'), true],
        ['active, no limit', (q) => admin.call('HSET', `emq:{${q}}:gactive`, A, '50'), true],
        [
          'another group paused and limited',
          (q) => Promise.all([admin.call('SADD', `emq:{${q}}:paused`, B), admin.call('HSET', `emq:{${q}}:glimit`, B, '0')]),
          true,
        ],
      ];
      for (const [what, prepare, rung] of cases) {
        const q = freshQueue('gq');
        await prepare(q);
        const id = mintId();
        expect(await enqueueGrouped(conn, q, A, id, what), what).toBe('enqueued');
        expect(await lane(q, A), what).toEqual([`${id}@0`]);
        expect(await list(`emq:{${q}}:ring`), what).toEqual(rung ? [A] : []);
        expect(await list(`emq:{${q}}:wake`), what).toEqual(rung ? ['1'] : []);
      }
    });

    it('the wake list stays at 64', async () => {
      const q = freshQueue('gq');
      await admin.call('LPUSH', `emq:{${q}}:wake`, ...Array.from({ length: 64 }, () => 'old'));
      await enqueueGrouped(conn, q, A, mintId(), 'x');
      const wake = await list(`emq:{${q}}:wake`);
      expect(wake).toHaveLength(64);
      expect(wake[0]).toBe('1');
    });

    it('answers duplicate for an existing row, whatever it holds (type gates after), and changes nothing', async () => {
      const q = freshQueue('gq');
      const id = mintId();
      await enqueueGrouped(conn, q, A, id, 'first');
      await admin.call('LREM', `emq:{${q}}:ring`, '0', A); // as after a claim emptied the lane
      let before = await snapshot(admin, q);
      expect(await enqueueGrouped(conn, q, B, id, 'second')).toBe('duplicate');
      expect(await snapshot(admin, q)).toEqual(before);

      const q2 = freshQueue('gq');
      const id2 = mintId();
      await admin.call('SET', `emq:{${q2}}:job:${id2}`, 'not a hash');
      for (const s of ['ring', 'paused', 'glimit', 'gactive', 'wake', `g:${A}:pending`]) await admin.call('SET', `emq:{${q2}}:${s}`, 'wrong');
      before = await snapshot(admin, q2);
      expect(await enqueueGrouped(conn, q2, A, id2, 'x')).toBe('duplicate');
      expect(await snapshot(admin, q2)).toEqual(before);
    });

    it('payload bytes are stored exactly (the payload is the last argument)', async () => {
      const q = freshQueue('gq');
      for (const payload of [
        Uint8Array.from({ length: 256 }, (_, i) => i),
        new Uint8Array(0),
        new Uint8Array([0xc3, 0x28, 0]),
        Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 7919) & 255),
      ]) {
        const id = mintId();
        expect(await enqueueGrouped(conn, q, B, id, payload)).toBe('enqueued');
        const stored = (await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer | null;
        expect(Buffer.compare(Buffer.from(stored ?? []), payload)).toBe(0);
      }
    });
  });

  describe('refusals write nothing', () => {
    it('host-side: kind, malformed ids and groups, the queue, the payload; nothing sent', async () => {
      const q = freshQueue('gq');
      const before = await snapshot(admin, q);
      await expect(enqueueGrouped(conn, q, A, 'ORD0NgWEfAEJfs', 'x')).rejects.toBeInstanceOf(KindError);
      await expect(enqueueGrouped(conn, q, A, 'JOB01m8ktkzg6eaatm9sqpt0r51n2', 'x')).rejects.toBeInstanceOf(InvalidIdError);
      await expect(enqueueGrouped(conn, q, 'tenant-7', mintId(), 'x')).rejects.toThrow(/^group "tenant-7" is 8 characters long/);
      await expect(enqueueGrouped(conn, q, 'USRzzzzzzzzzzz', mintId(), 'x')).rejects.toBeInstanceOf(InvalidIdError);
      await expect(enqueueGrouped(conn, 'a{b}', A, mintId(), 'x')).rejects.toBeInstanceOf(InvalidQueueError);
      await expect(enqueueGrouped(conn, q, A, mintId(), '\udfff')).rejects.toBeInstanceOf(InvalidPayloadError);
      expect(await snapshot(admin, q)).toEqual(before);
    });

    it('the script: kind, layout and argument gates (EMQKIND, EMQLAYOUT), nothing written', async () => {
      const q = freshQueue('gq');
      const other = `${q}x`;
      const id = mintId();
      const keys = genqueueKeys(q)(id, A);
      const good = [id, A, 'p'];
      const swap = (i: number, key: string) => keys.map((k, j) => (j === i ? key : k));
      const cases: Array<[string[], string[], RegExp]> = [
        [
          genqueueKeys(q)('JOB0JZGkP8sq48', A).map((k) => k.replace('JOB0JZGkP8sq48', 'ORD0NgWEfAEJfs')),
          ['ORD0NgWEfAEJfs', A, 'p'],
          /^EMQKIND:? job id must be JOB-namespaced$/,
        ],
        [[], [], /^EMQKIND/],
        [keys, [], /^EMQKIND/],
        [keys.slice(0, 6), good, /^EMQLAYOUT/],
        [[...keys, keys[6]!], good, /^EMQLAYOUT/],
        [keys, [id, A], /^EMQLAYOUT/],
        [keys, [...good, 'extra'], /^EMQLAYOUT/],
        [keys, [id, B, 'p'], /^EMQLAYOUT/], // the lane is A's
        [genqueueKeys(q)(id, 'PRT0KHTOWnGLuD').map((k) => k.replace('PRT0KHTOWnGLuD', 'prt0KHTOWnGLuC')), [id, 'prt0KHTOWnGLuC', 'p'], /^EMQLAYOUT/],
        [genqueueKeys(q)(id, 'PRT0KHTOWnGLuD').map((k) => k.replace('PRT0KHTOWnGLuD', 'USRzzzzzzzzzzz')), [id, 'USRzzzzzzzzzzz', 'p'], /^EMQLAYOUT/],
        [genqueueKeys(q)(id, 'PRT0KHTOWnGLuD').map((k) => k.replace('PRT0KHTOWnGLuD', 'PRT0KHTOWnGLu')), [id, 'PRT0KHTOWnGLu', 'p'], /^EMQLAYOUT/],
        [keys.map((k) => k.replace(id, 'JOBzzzzzzzzzzz')), ['JOBzzzzzzzzzzz', A, 'p'], /^EMQLAYOUT/],
        ...keys.map((k, i): [string[], string[], RegExp] => [swap(i, k.replace(`{${q}}`, `{${other}}`)), good, /^EMQLAYOUT/]),
        [swap(0, `emq:{${q}}:job:${mintId()}`), good, /^EMQLAYOUT/],
        [swap(1, `emq:{${q}}:pending`), good, /^EMQLAYOUT/],
        [swap(1, `emq:{${q}}:g:${A}:active`), good, /^EMQLAYOUT/],
        [swap(3, `emq:{${q}}:meta`), good, /^EMQLAYOUT/],
        [swap(2, `emq:${q}:ring`), good, /^EMQLAYOUT/],
        [[keys[0]!, keys[1]!, keys[3]!, keys[2]!, keys[4]!, keys[5]!, keys[6]!], good, /^EMQLAYOUT/],
        [genqueueKeys('x')(id, A).map((k) => k.replace('{x}', '{emq}')), good, /^EMQLAYOUT/],
        [genqueueKeys('x')(id, A).map((k) => k.replace('{x}', `{${'x'.repeat(129)}}`)), good, /^EMQLAYOUT/],
      ];
      const before = await snapshot(admin, q, other);
      for (const [ks, args, why] of cases) {
        const outcome = await run(ks, args);
        expect(outcome.ok, `${ks.join(' ')} | ${args.join(' ')}`).toBe(false);
        expect(!outcome.ok && outcome.error, `${ks.join(' ')} | ${args.join(' ')}`).toMatch(refusalOf(target, genqueueScript, ks, args, why));
        expect(!outcome.ok && outcome.error).toMatch(/^[ -~]{1,400}$/);
      }
      expect(await snapshot(admin, q, other)).toEqual(before);
    });

    const wrongTypes: Array<[string, string, (a: Admin, k: string) => Promise<unknown>]> = [
      ['the lane', `g:${A}:pending`, (a, k) => a.call('RPUSH', k, 'x')],
      ['the ring', 'ring', (a, k) => a.call('SADD', k, A)],
      ['the paused set', 'paused', (a, k) => a.call('RPUSH', k, A)],
      ['glimit', 'glimit', (a, k) => a.call('SET', k, '1')],
      ['gactive', 'gactive', (a, k) => a.call('ZADD', k, '1', A)],
      ['the wake list', 'wake', (a, k) => a.call('SET', k, '1')],
    ];
    it.each(wrongTypes)('type gate: %s holding another type: WrongTypeError naming it, nothing written', async (_, suffix, put) => {
      const q = freshQueue('gq');
      const key = `emq:{${q}}:${suffix}`;
      await put(admin, key);
      const before = await snapshot(admin, q);
      const err = await enqueueGrouped(conn, q, A, mintId(), 'x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongTypeError);
      expect((err as Error).message).toContain(key);
      expect(await snapshot(admin, q)).toEqual(before);
    });

    it('a glimit or gactive field of the group that holds no number: EMQLAYOUT, nothing written (the library would fail after its writes)', async () => {
      for (const [hash, value] of [
        ['glimit', 'many'],
        ['gactive', 'x'],
        ['glimit', ''],
      ] as const) {
        const q = freshQueue('gq');
        await admin.call('HSET', `emq:{${q}}:${hash}`, A, value, B, 'not mine either');
        const before = await snapshot(admin, q);
        const err = await enqueueGrouped(conn, q, A, mintId(), 'x').catch((e: unknown) => e);
        expect(err, `${hash}=${value}`).toBeInstanceOf(LayoutError);
        expect(await snapshot(admin, q)).toEqual(before);
        // another group's fields are not this job's business
        expect(await enqueueGrouped(conn, q, 'ORD0NgWEfAEJfs', mintId(), 'x')).toBe('enqueued');
      }
    });
  });

  describe('dispatch and batches', () => {
    it('after SCRIPT FLUSH: EVAL once, bytes that are not UTF-8 included', async () => {
      const q = freshQueue('gq');
      await admin.call('SCRIPT', 'FLUSH');
      await admin.call('CONFIG', 'RESETSTAT');
      const id = mintId();
      const payload = new Uint8Array([0xff, 0x00, 0xfe]);
      expect(await enqueueGrouped(conn, q, A, id, payload)).toBe('enqueued');
      expect([...((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer)]).toEqual([...payload]);
      expect(await admin.calls('eval')).toBe(1);
      await enqueueGrouped(conn, q, A, mintId(), 'steady');
      expect(await admin.calls('eval')).toBe(1);
      expect(String(await admin.text('SCRIPT', 'LOAD', genqueueScript.text))).toBe(genqueueScript.sha1);
    });

    it('enqueueGroupedMany: 400 jobs over 4 groups with repeats, one pipeline, a verdict each; lanes in mint order; the ring once per group', async () => {
      const q = freshQueue('gq');
      const groups = [A, B, 'ORD0NgWEfAEJfs', 'JOB0JZGkP8sq48'];
      const ids = Array.from({ length: 360 }, () => mintId());
      const jobs = ids.map((id, i) => ({ id, group: groups[i % 4]!, payload: `p${i}` }));
      for (let k = 0; k < 40; k++) jobs.splice(5 + k * 9, 0, { id: ids[k]!, group: groups[(k + 1) % 4]!, payload: 'repeat' });
      const results = await enqueueGroupedMany(conn, q, jobs);
      const seen = new Set<string>();
      results.forEach((r, i) => {
        expect(r.id).toBe(jobs[i]!.id);
        expect(r.verdict).toBe(seen.has(r.id) ? 'duplicate' : 'enqueued');
        seen.add(r.id);
      });
      expect(await list(`emq:{${q}}:ring`)).toEqual(groups);
      expect(await list(`emq:{${q}}:wake`)).toEqual(['1', '1', '1', '1']);
      for (const [g, group] of groups.entries()) {
        expect(await lane(q, group)).toEqual(ids.filter((_, i) => i % 4 === g).map((id) => `${id}@0`));
      }
      expect(Number(await admin.call('EXISTS', `emq:{${q}}:pending`))).toBe(0);
    });

    it('enqueueGroupedMany: refused whole before sending, naming the job; minted ids reminted on a collision; BatchError', async () => {
      const q = freshQueue('gq');
      await expect(
        enqueueGroupedMany(conn, q, [
          { group: A, payload: 'x' },
          { group: 'bad', payload: 'x' },
        ]),
      ).rejects.toThrow(/^job 1: group/);
      expect(await admin.footprint(q)).toEqual({});
      const taken = mintId();
      await admin.call('HSET', `emq:{${q}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs', 'group', A);
      let first = true;
      const [r] = await enqueueGroupedMany(conn, q, [{ group: A, payload: 'ours' }], () => (first ? ((first = false), taken) : mintId()));
      expect(r!.verdict).toBe('enqueued');
      expect(r!.id).not.toBe(taken);
      expect(await lane(q, A)).toEqual([`${r!.id}@0`]);

      await admin.call('SET', `emq:{${q}}:g:${B}:pending`, 'wrong');
      const fresh = mintId();
      const err = (await enqueueGroupedMany(conn, q, [
        { id: taken, group: A, payload: 'a' },
        { id: fresh, group: B, payload: 'b' },
      ]).catch((e: unknown) => e)) as BatchError;
      expect(err).toBeInstanceOf(BatchError);
      expect(err.results[0]).toEqual({ id: taken, verdict: 'duplicate' });
      expect((err.results[1] as { error: Error }).error).toBeInstanceOf(WrongTypeError);
      expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${fresh}`))).toBe(0);
    });
  });
});

describe.each(targets())('@genqueue-once: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  type Options = Parameters<typeof enqueueGroupedOnce>[2];
  const once = (q: string, over: Partial<Options> = {}) =>
    enqueueGroupedOnce(conn, q, { scope: 'key:test', key: 'k-1', group: A, payload: 'body', compare: true, ttlSeconds: 600, ...over });
  const deOf = async (q: string, key = 'k-1') => dedupKey(q, await dedupIdOf('key:test', key));
  const run = (keys: string[], args: Array<string | Uint8Array>): Promise<Outcome> => conn.run({ op: 'eval', script: genqueueOnceScript.text, keys, args });

  it("the first use writes @genqueue's row, lane, ring and wake, and parks the id at de:<dedupId> with its TTL", async () => {
    const q = freshQueue('gonce');
    const first = await once(q);
    expect(first.verdict).toBe('enqueued');
    const de = await deOf(q);
    expect(await admin.footprint(q)).toEqual({
      [`emq:{${q}}:job:${first.id}`]: 'hash',
      [`emq:{${q}}:g:${A}:pending`]: 'zset',
      [`emq:{${q}}:ring`]: 'list',
      [`emq:{${q}}:wake`]: 'list',
      [de]: 'string',
    });
    expect(String(await admin.text('HGET', `emq:{${q}}:job:${first.id}`, 'group'))).toBe(A);
    expect(String(await admin.text('GET', de))).toBe(first.id);
    expect(Number(await admin.call('TTL', de))).toBeGreaterThan(590);
  });

  it('a reuse answers the original id, also once its row is gone; compare: another payload or group is a ConflictError; nothing written', async () => {
    const q = freshQueue('gonce');
    const first = await once(q);
    const before = await snapshot(admin, q);
    expect(await once(q)).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await once(q, { compare: false, group: B, payload: 'x' })).toEqual({ id: first.id, verdict: 'duplicate' });
    for (const over of [{ payload: 'other' }, { group: B }]) await expect(once(q, over)).rejects.toBeInstanceOf(ConflictError);
    expect(await snapshot(admin, q)).toEqual(before);
    await admin.call('DEL', `emq:{${q}}:job:${first.id}`);
    expect(await once(q, { group: B })).toEqual({ id: first.id, verdict: 'duplicate' });
  });

  it('a caller id naming an existing job is that job; a minted one is a collision, minted again', async () => {
    const q = freshQueue('gonce');
    const taken = mintId();
    await admin.call('HSET', `emq:{${q}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
    const before = await snapshot(admin, q);
    expect(await once(q, { id: taken })).toEqual({ id: taken, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    let first = true;
    const got = await once(q, { key: 'k-2', mint: () => (first ? ((first = false), taken) : mintId()) });
    expect(got.verdict).toBe('enqueued');
    expect(got.id).not.toBe(taken);
  });

  it("refusals: host-side, wrong types of every key, no number in glimit (on a miss only), the script's gates; nothing written", async () => {
    const q = freshQueue('gonce');
    let before = await snapshot(admin, q);
    await expect(once(q, { id: 'ORD0NgWEfAEJfs' })).rejects.toBeInstanceOf(KindError);
    await expect(once(q, { group: 'nope' })).rejects.toBeInstanceOf(InvalidIdError);
    await expect(once(q, { ttlSeconds: 1.5 })).rejects.toBeInstanceOf(RangeError);
    expect(await snapshot(admin, q)).toEqual(before);

    for (const [suffix, put] of [
      ['de', (k: string) => admin.call('RPUSH', k, 'x')],
      ['ring', (k: string) => admin.call('SET', k, 'x')],
      ['paused', (k: string) => admin.call('SET', k, 'x')],
      ['glimit', (k: string) => admin.call('SET', k, 'x')],
      ['gactive', (k: string) => admin.call('SET', k, 'x')],
      ['wake', (k: string) => admin.call('SET', k, 'x')],
      ['lane', (k: string) => admin.call('SET', k, 'x')],
    ] as const) {
      const qt = freshQueue('gonce');
      const key = suffix === 'de' ? await deOf(qt) : suffix === 'lane' ? `emq:{${qt}}:g:${A}:pending` : `emq:{${qt}}:${suffix}`;
      await put(key);
      before = await snapshot(admin, qt);
      const err = await once(qt).catch((e: unknown) => e);
      expect(err, suffix).toBeInstanceOf(WrongTypeError);
      expect((err as Error).message).toContain(key);
      expect(await snapshot(admin, qt)).toEqual(before);
    }

    const q2 = freshQueue('gonce');
    await admin.call('HSET', `emq:{${q2}}:glimit`, A, 'lots');
    before = await snapshot(admin, q2);
    await expect(once(q2)).rejects.toBeInstanceOf(LayoutError);
    expect(await snapshot(admin, q2)).toEqual(before);
    const parked = mintId();
    await admin.call('SET', await deOf(q2), parked);
    expect(await once(q2)).toEqual({ id: parked, verdict: 'duplicate' }); // a hit reads no glimit

    const q3 = freshQueue('gonce');
    const id = mintId();
    const keys = [...genqueueKeys(q3)(id, A), `emq:{${q3}}:de:abc`];
    const cases: Array<[string[], string[], RegExp]> = [
      [keys, [], /^EMQKIND/],
      [[], [], /^EMQKIND/],
      [keys.slice(0, 7), [id, '1', '60', A, 'p'], /^EMQLAYOUT/],
      [keys, [id, '1', '60', B, 'p'], /^EMQLAYOUT/],
      [keys, [id, '1', '60', A], /^EMQLAYOUT/],
      [keys, [id, '1', '60', 'prt0KHTOWnGLuC', 'p'], /^EMQLAYOUT/],
      [keys, [id, 'yes', '60', A, 'p'], /^EMQLAYOUT/],
      [keys, [id, '1', '-60', A, 'p'], /^EMQLAYOUT/],
      [keys.map((k, i) => (i === 7 ? `emq:{${q3}}:de:` : k)), [id, '1', '60', A, 'p'], /^EMQLAYOUT/],
      [keys.map((k, i) => (i === 7 ? `emq:{${q3}x}:de:abc` : k)), [id, '1', '60', A, 'p'], /^EMQLAYOUT/],
      [keys.map((k, i) => (i === 4 ? `emq:{${q3}}:gweight` : k)), [id, '1', '60', A, 'p'], /^EMQLAYOUT/],
    ];
    before = await snapshot(admin, q3, `${q3}x`);
    for (const [ks, args, why] of cases) {
      const outcome = await run(ks, args);
      expect(!outcome.ok && outcome.error, `${ks.join(' ')} | ${args.join(' ')}`).toMatch(refusalOf(target, genqueueOnceScript, ks, args, why));
    }
    expect(await snapshot(admin, q3, `${q3}x`)).toEqual(before);
  });

  it('works right after SCRIPT FLUSH with bytes that are not UTF-8 (over REST: loaded by a keyless EVAL, then EVALSHA)', async () => {
    const q = freshQueue('gonce');
    await admin.call('SCRIPT', 'FLUSH');
    const payload = Uint8Array.from({ length: 300 }, (_, i) => 255 - (i % 256));
    const got = await once(q, { payload });
    expect(got.verdict).toBe('enqueued');
    expect(Buffer.compare((await admin.call('HGET', `emq:{${q}}:job:${got.id}`, 'payload')) as Buffer, payload)).toBe(0);
    await admin.call('SCRIPT', 'FLUSH');
    expect(await once(q, { payload })).toEqual({ id: got.id, verdict: 'duplicate' });
  });
});
