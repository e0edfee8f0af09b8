// setGroup writes what the library's Lanes.weight, pause, limit and resume write, called in
// the order weight, pause, limit, resume (property-checked from any lane, ring, pause,
// ceiling, live count and weight); the library's lane claim then honours it: a limit of 1
// serves one job at a time, a paused lane keeps its depth and is skipped, a resumed lane is
// on the ring again and served. readGroup reads a group back; every refusal writes nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type GroupChange,
  InvalidArgumentError,
  InvalidIdError,
  InvalidQueueError,
  LayoutError,
  WrongTypeError,
  encodeId,
  enqueueGrouped,
  groupKeys,
  groupSetScript,
  mintId,
  readGroup,
  setGroup,
} from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { connectedTo, glideTargets } from './support/targets.js';
import { keyspaceBySuffix, libraryVerbs } from './support/library-control.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';
const groupId = fc.tuple(fc.stringMatching(/^[A-Z]{3}$/), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n })).map(([ns, s]) => encodeId(ns, s));

describe.each(glideTargets())('setGroup and readGroup: $name', (target) => {
  const t = connectedTo(target);

  it("≡ the library's @gweight, @gpause, @glimit, @gresume in that order, from any group state; the answer is readGroup's", async () => {
    const other = 'ORD0NgWEfAEJfs';
    const before = fc.record({
      lane: fc.integer({ min: 0, max: 3 }),
      ring: fc.constantFrom('none', 'g', 'other', 'g other', 'other g'),
      paused: fc.subarray(['g', 'other']),
      glimit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      gactive: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      gweight: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
      wake: fc.integer({ min: 0, max: 66 }),
    });
    const change = fc
      .record(
        { limit: fc.integer({ min: 1, max: 4 }), weight: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(2 ** 31 - 1)), paused: fc.boolean() },
        { requiredKeys: [] },
      )
      .filter((c) => Object.keys(c).length > 0);
    await fc.assert(
      fc.asyncProperty(groupId, before, change, async (g, b, c: GroupChange) => {
        const [ours, theirs] = [freshQueue('gs-ours'), freshQueue('gs-lib')];
        const ids = Array.from({ length: b.lane }, () => mintId());
        for (const q of [ours, theirs]) {
          const k = (s: string) => `emq:{${q}}:${s}`;
          const name = (x: string) => (x === 'g' ? g : other);
          for (const id of ids) await t.admin.call('ZADD', k(`g:${g}:pending`), '0', id);
          if (b.ring !== 'none') await t.admin.call('RPUSH', k('ring'), ...b.ring.split(' ').map(name));
          if (b.paused.length > 0) await t.admin.call('SADD', k('paused'), ...b.paused.map(name));
          if (b.glimit !== undefined) await t.admin.call('HSET', k('glimit'), g, String(b.glimit));
          if (b.gactive !== undefined) await t.admin.call('HSET', k('gactive'), g, String(b.gactive));
          if (b.gweight !== undefined) await t.admin.call('HSET', k('gweight'), g, String(b.gweight));
          for (let i = 0; i < b.wake; i++) await t.admin.call('LPUSH', k('wake'), '1');
        }
        const library = libraryVerbs(t.admin, theirs);
        if (c.weight !== undefined) await library.weight(g, c.weight);
        if (c.paused === true) await library.gpause(g);
        if (c.limit !== undefined) await library.limit(g, c.limit);
        if (c.paused === false) await library.gresume(g);
        const view = await setGroup(t.conn, ours, g, c);
        expect(await keyspaceBySuffix(t.admin, ours)).toEqual(await keyspaceBySuffix(t.admin, theirs));
        expect(await readGroup(t.conn, ours, g)).toEqual(view);
        const k = (s: string) => `emq:{${ours}}:${s}`;
        const field = async (key: string) => {
          const v = await t.admin.call('HGET', k(key), g);
          return v === null ? undefined : Number(String(v));
        };
        expect(view).toEqual({
          group: g,
          pending: b.lane,
          active: (await field('gactive')) ?? 0,
          ...((await field('glimit')) === undefined ? {} : { limit: await field('glimit') }),
          ...((await field('gweight')) === undefined ? {} : { weight: await field('gweight') }),
          paused: Number(await t.admin.call('SISMEMBER', k('paused'), g)) === 1,
          ringed: (await t.admin.call('LPOS', k('ring'), g)) !== null,
        });
        for (const q of [ours, theirs]) {
          const keys = Object.keys(await t.admin.footprint(q));
          if (keys.length > 0) await t.admin.call('DEL', ...keys);
        }
      }),
      { numRuns: 120 },
    );
  });

  it('limit 1: the second lane claim is empty until the first job completes', async () => {
    const q = freshQueue('gs-limit');
    const library = libraryVerbs(t.admin, q);
    const [one, two] = [mintId(), mintId()];
    for (const id of [one, two]) expect(await enqueueGrouped(t.conn, q, A, id, 'x')).toBe('enqueued');
    expect(await setGroup(t.conn, q, A, { limit: 1 })).toEqual({ group: A, pending: 2, active: 0, limit: 1, paused: false, ringed: true });
    expect((await library.gclaim())?.[0]).toBe(one);
    expect(await readGroup(t.conn, q, A)).toEqual({ group: A, pending: 1, active: 1, limit: 1, paused: false, ringed: false });
    expect(await library.gclaim()).toBeNull();
    expect(await library.gclaim()).toBeNull();
    expect(await library.complete(one, 1)).toBe(1);
    expect(await readGroup(t.conn, q, A)).toMatchObject({ pending: 1, active: 0, ringed: true });
    expect(await library.gclaim()).toEqual([two, 'x', 1, A]);
    expect(await library.gclaim()).toBeNull();
    // raised while at the ceiling: back on the ring, with a wake
    const [three, four] = [mintId(), mintId()];
    for (const id of [three, four]) await enqueueGrouped(t.conn, q, A, id, 'y');
    expect(await setGroup(t.conn, q, A, { limit: 2 })).toMatchObject({ active: 1, pending: 2, limit: 2, ringed: true });
    expect((await library.gclaim())?.[0]).toBe(three);
    expect(await library.gclaim()).toBeNull();
  });

  it('a paused lane keeps its depth and is skipped; resumed, it is on the ring again (with a wake) and served', async () => {
    const q = freshQueue('gs-pause');
    const library = libraryVerbs(t.admin, q);
    const a = [mintId(), mintId()];
    const b = [mintId(), mintId()];
    for (let i = 0; i < 2; i++) {
      await enqueueGrouped(t.conn, q, A, a[i]!, 'a');
      await enqueueGrouped(t.conn, q, B, b[i]!, 'b');
    }
    expect(await setGroup(t.conn, q, A, { paused: true, weight: 3 })).toEqual({ group: A, pending: 2, active: 0, weight: 3, paused: true, ringed: false });
    expect((await library.gclaim())?.[0]).toBe(b[0]);
    expect((await library.gclaim())?.[0]).toBe(b[1]);
    expect(await library.gclaim()).toBeNull();
    expect(await readGroup(t.conn, q, A)).toEqual({ group: A, pending: 2, active: 0, weight: 3, paused: true, ringed: false });
    const wakes = Number(await t.admin.call('LLEN', `emq:{${q}}:wake`));
    expect(await setGroup(t.conn, q, A, { paused: false })).toEqual({ group: A, pending: 2, active: 0, weight: 3, paused: false, ringed: true });
    expect(Number(await t.admin.call('LLEN', `emq:{${q}}:wake`))).toBe(Math.min(64, wakes + 1));
    expect(await library.gclaim()).toEqual([a[0], 'a', 1, A]);
    expect(await library.gclaim()).toEqual([a[1], 'a', 1, A]);
    expect(await readGroup(t.conn, q, B)).toEqual({ group: B, pending: 0, active: 2, paused: false, ringed: false });
    expect(await readGroup(t.conn, q, 'EVT000xY9Wvvcd')).toEqual({ group: 'EVT000xY9Wvvcd', pending: 0, active: 0, paused: false, ringed: false });
  });

  it('refusals write nothing: bad arguments (host-side and in the script), keys of another type, a field that holds no number', async () => {
    const q = freshQueue('gs-refuse');
    await enqueueGrouped(t.conn, q, A, mintId(), 'x');
    await t.admin.call('HSET', `emq:{${q}}:glimit`, B, '2');
    const keys = groupKeys(q, A);
    const raw = (args: string[], k = keys) => t.admin.call('EVAL', groupSetScript.text, String(k.length), ...k, ...args);
    const start = await snapshot(t.admin, q);
    const bad: Array<[unknown, unknown]> = [
      [setGroup(t.conn, 'a queue', A, { limit: 1 }), InvalidQueueError],
      [setGroup(t.conn, q, 'JOB0KHTOWnGLu', { limit: 1 }), InvalidIdError],
      [readGroup(t.conn, q, 'prt0KHTOWnGLuC'), InvalidIdError],
      ...[0, 1.5, 2 ** 31, -1, Number.NaN, '2'].flatMap((n) => [
        [setGroup(t.conn, q, A, { limit: n as number }), InvalidArgumentError] as [unknown, unknown],
        [setGroup(t.conn, q, A, { weight: n as number }), InvalidArgumentError] as [unknown, unknown],
      ]),
      [setGroup(t.conn, q, A, { paused: 'yes' as unknown as boolean }), InvalidArgumentError],
      [setGroup(t.conn, q, A, {}), InvalidArgumentError],
      [setGroup(t.conn, q, A, { limit: 1, limt: 2 } as GroupChange), InvalidArgumentError],
      [raw([A, '01', '', '']), /EMQLAYOUT:? ARGV\[2\] 01 is not a limit/],
      [raw([A, '', '2147483648', '']), /EMQLAYOUT:? ARGV\[3\] 2147483648 is not a weight/],
      [raw([A, '', '', 'PAUSE']), /EMQLAYOUT:? ARGV\[4\] PAUSE is not empty, pause or resume/],
      [raw([A, '', '', '']), /EMQLAYOUT:? nothing to change/],
      [raw([A, '1', '', '', '']), /EMQLAYOUT:? expected 4 arguments/],
      [raw(['PRTzzzzzzzzzzz', '1', '', '']), /EMQLAYOUT:? ARGV\[1\] PRTzzzzzzzzzzz is not a group/],
      [raw([B, '1', '', '']), /EMQLAYOUT:? KEYS\[1\] must be/],
      [raw([A, '1', '', ''], keys.slice(0, 6)), /EMQLAYOUT:? expected 7 keys/],
      [raw([A, '1', '', ''], [keys[0]!, `emq:{${q}x}:ring`, ...keys.slice(2)]), /EMQLAYOUT:? KEYS\[1\] must be/],
    ];
    for (const [call, error] of bad) await expect(call).rejects.toThrow(error as RegExp);
    expect(await snapshot(t.admin, q)).toEqual(start);

    // each key of another type, and a field that holds no number: refused before any write
    for (const [setup, error] of [
      [(k: (s: string) => string) => ['HSET', k('glimit'), A, 'two'], LayoutError],
      [(k: (s: string) => string) => ['HSET', k('gweight'), A, '1x'], LayoutError],
      [(k: (s: string) => string) => ['HSET', k('gactive'), A, ''], LayoutError],
      [(k: (s: string) => string) => ['SADD', k('wake'), '1'], WrongTypeError],
      [(k: (s: string) => string) => ['SET', k('gweight'), '3'], WrongTypeError],
      [(k: (s: string) => string) => ['HSET', k('paused'), A, '1'], WrongTypeError],
      [(k: (s: string) => string) => ['SET', k(`g:${A}:pending`), 'x'], WrongTypeError],
    ] as const) {
      const q2 = freshQueue('gs-types');
      const k = (s: string) => `emq:{${q2}}:${s}`;
      await t.admin.call('RPUSH', k('ring'), B);
      const command = setup(k);
      if (command[0] !== 'HSET') await t.admin.call('DEL', command[1]!);
      await t.admin.call(...command);
      const held = await snapshot(t.admin, q2);
      for (const c of [{ limit: 1 }, { weight: 2 }, { paused: true }, { paused: false }]) await expect(setGroup(t.conn, q2, A, c)).rejects.toThrow(error);
      // (readGroup reads no wake)
      if (command[1] !== k('wake')) await expect(readGroup(t.conn, q2, A)).rejects.toThrow(error);
      expect(await snapshot(t.admin, q2)).toEqual(held);
    }
  });
});
