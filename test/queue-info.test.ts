// queueInfo reads a queue as the library does: its counts equal @counts' and every group's
// pending equals its lane's depth, after a mix of flat, scheduled and grouped admissions
// taken through the library's own transitions; groups whose jobs all wait are listed (the
// library's Dashboard misses them); pages follow byte order and lose nothing; an unknown
// queue is all zeros. Property: after any sequence of the library's lane verbs, every lane
// that holds jobs is on some page (the enumeration @queue-info's header argues for).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LayoutError,
  WrongTypeError,
  encodeId,
  enqueue,
  enqueueGrouped,
  mintId,
  pauseQueue,
  queueInfo,
  queueInfoKeys,
  queueInfoScript,
  readGroup,
  schedule,
  setGroup,
  type GroupView,
  type QueueInfo,
} from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { libraryVerbs } from './support/library-control.js';
import { connectedTo, glideTargets } from './support/targets.js';

const [A, B, C, D, E, F] = ['PRT0KHTOWnGLuC', 'USR0NgWEfAEJfs', 'ORD0NgWEfAEJfs', 'CRS0KHTOWnGLuC', 'EVT000xY9Wvvcd', 'USR00000000000'];

describe.each(glideTargets())('queueInfo: $name', (target) => {
  const t = connectedTo(target);

  /** Every page, followed by its cursor. */
  async function allGroups(q: string, count?: number): Promise<GroupView[]> {
    const out: GroupView[] = [];
    let page: QueueInfo | undefined;
    do {
      page = await queueInfo(t.conn, q, { ...(count ? { count } : {}), ...(page?.cursor ? { cursor: page.cursor } : {}) });
      out.push(...page.groups);
    } while (page.cursor !== undefined);
    return out;
  }
  /** The lanes that hold jobs, found by a keyspace scan (a test may; a script may not). */
  async function lanesWithJobs(q: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [key, type] of Object.entries(await t.admin.footprint(q))) {
      const g = /^emq:\{[^}]+\}:g:(.+):pending$/.exec(key)?.[1];
      if (g !== undefined && type === 'zset') out[g] = Number(await t.admin.call('ZCARD', key));
    }
    return out;
  }

  it("equals @counts and the lanes' depths after flat, scheduled and grouped admissions and the library's transitions", async () => {
    const q = freshQueue('qi-mix');
    const library = libraryVerbs(t.admin, q);
    for (let i = 0; i < 3; i++) await enqueue(t.conn, q, mintId(), `flat ${i}`);
    await schedule(t.conn, q, mintId(), 'later', { inMs: 3_600_000 });
    await schedule(t.conn, q, mintId(), 'later, in A', { inMs: 3_600_000, group: A });
    const soon = mintId();
    await schedule(t.conn, q, soon, 'soon, in B', { inMs: 1, group: B });
    for (const [g, n] of [
      [A, 3],
      [B, 1],
      [C, 2],
      [D, 3],
      [F, 1],
    ] as const)
      for (let i = 0; i < n; i++) await enqueueGrouped(t.conn, q, g, mintId(), g);
    await new Promise((r) => setTimeout(r, 5));
    expect(await library.promote()).toBe(1); // the soon one, into B's lane
    await setGroup(t.conn, q, C, { paused: true });
    await setGroup(t.conn, q, D, { limit: 1 });
    await setGroup(t.conn, q, E, { weight: 4 }); // a weight and nothing else
    // claims: F's only job (F then has an active count and an empty lane), D's first, one of A's
    const claimed: Array<[string, string, number, string]> = [];
    for (let i = 0; i < 6; i++) {
      const c = await library.gclaim();
      if (c) claimed.push(c);
    }
    const [flatOne] = [await library.claim()];
    expect(await library.complete(flatOne![0], 1)).toBe(1); // completed 1
    const fromA = claimed.find((c) => c[3] === A)!;
    expect(String(await library.retry(fromA[0], 1, 0, 1))).toBe('dead'); // dead 1, failed 1
    await pauseQueue(t.conn, q, true);

    const info = await queueInfo(t.conn, q);
    const counts = await library.counts();
    expect(info.paused).toBe(true);
    expect(info.counts).toEqual({
      pending: counts.pending,
      active: counts.active,
      scheduled: counts.schedule,
      dead: counts.dead,
      completed: counts.completed,
      failed: counts.failed,
    });
    expect(info.counts).toMatchObject({ pending: 2, scheduled: 2, dead: 1, completed: 1, failed: 1 });
    expect(info.cursor).toBeUndefined();
    expect(info.groups.map((v) => v.group)).toEqual([A, B, C, D, E, F].sort());
    const depths = await lanesWithJobs(q);
    for (const view of info.groups) {
      expect(view.pending).toBe(depths[view.group] ?? 0);
      expect(view).toEqual(await readGroup(t.conn, q, view.group));
    }
    for (const g of Object.keys(depths)) if (depths[g]! > 0) expect(info.groups.map((v) => v.group)).toContain(g);
    // the groups whose jobs all wait (no active count): A's and B's lanes are on the ring
    expect(info.groups.find((v) => v.group === C)).toMatchObject({ paused: true, ringed: false, pending: 2, active: 0 });
    expect(info.groups.find((v) => v.group === D)).toMatchObject({ limit: 1, active: 1, pending: 2, ringed: false });
    expect(info.groups.find((v) => v.group === E)).toEqual({ group: E, pending: 0, active: 0, weight: 4, paused: false, ringed: false });
    expect(info.groups.find((v) => v.group === F)).toMatchObject({ pending: 0, active: 1, ringed: false });
  });

  it('pages in byte order, each group once, the cursor the last group of a page; an unknown queue is all zeros', async () => {
    const q = freshQueue('qi-pages');
    const groups = fc.sample(
      fc.tuple(fc.constantFrom('AAA', 'PRT', 'Zzz'.toUpperCase()), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n })).map(([ns, s]) => encodeId(ns, s)),
      { numRuns: 40, seed: 25 },
    );
    const distinct = [...new Set(groups)];
    for (const g of distinct) await enqueueGrouped(t.conn, q, g, mintId(), 'x');
    const bytes = [...distinct].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const count of [1, 7, distinct.length, 1000]) expect((await allGroups(q, count)).map((v) => v.group)).toEqual(bytes);
    const first = await queueInfo(t.conn, q, { count: 7 });
    expect(first.cursor).toBe(bytes[6]);
    expect((await queueInfo(t.conn, q, { count: distinct.length })).cursor).toBeUndefined();
    // a cursor past every group: an empty page
    expect((await queueInfo(t.conn, q, { cursor: 'ZZZAzL8n0Y58m7' })).groups).toEqual([]);

    expect(await queueInfo(t.conn, freshQueue('qi-none'))).toEqual({
      queue: expect.any(String),
      paused: false,
      counts: { pending: 0, active: 0, scheduled: 0, dead: 0, completed: 0, failed: 0 },
      groups: [],
    });
  });

  it('refusals and broken wires: bad options, wrong keys, other types, a count that holds no number; a name no lane can have is left out', async () => {
    const q = freshQueue('qi-refuse');
    await enqueueGrouped(t.conn, q, A, mintId(), 'x');
    const keys = queueInfoKeys(q);
    const raw = (args: string[], k = keys) => t.admin.call('EVAL', queueInfoScript.text, String(k.length), ...k, ...args);
    const start = await snapshot(t.admin, q);
    for (const options of [{ count: 0 }, { count: 1001 }, { count: 1.5 }, { cursor: 'a group' }, { cursor: 'prt0KHTOWnGLuC' }]) {
      await expect(queueInfo(t.conn, q, options)).rejects.toThrow(InvalidArgumentError);
    }
    for (const [args, k, text] of [
      [['', '0'], keys, /EMQLAYOUT:? ARGV\[2\] 0 is not a count/],
      [['', '010'], keys, /EMQLAYOUT:? ARGV\[2\] 010 is not a count/],
      [['PRTzzzzzzzzzzz', '1'], keys, /EMQLAYOUT:? ARGV\[1\] PRTzzzzzzzzzzz is not a cursor/],
      [[''], keys, /EMQLAYOUT:? expected 2 arguments/],
      [['', '1'], keys.slice(0, 11), /EMQLAYOUT:? KEYS: emq:\{q\}: meta pending/],
      [['', '1'], [...keys.slice(0, 11), `emq:{${q}}:gweights`], /EMQLAYOUT:? KEYS\[12\] must be/],
    ] as Array<[string[], string[], RegExp]>) {
      await expect(raw(args, k)).rejects.toThrow(text);
    }
    expect(await snapshot(t.admin, q)).toEqual(start);

    const k = (s: string) => `emq:{${q}}:${s}`;
    await t.admin.call('RPUSH', k('ring'), 'not-a-group', 'prt0KHTOWnGLuC');
    expect((await queueInfo(t.conn, q)).groups.map((v) => v.group)).toEqual([A]);
    for (const [setup, error] of [
      [['HSET', k('metrics:failed'), 'count', 'many'], LayoutError],
      [['HSET', k('gactive'), A, 'x'], LayoutError],
      [['SET', k('dead'), 'x'], WrongTypeError],
      [['SADD', k('glimit'), A], WrongTypeError],
      [['SET', k(`g:${B}:pending`), 'x', 'x'], WrongTypeError],
    ] as Array<[string[], typeof LayoutError]>) {
      const [command, key] = setup as [string, string];
      if (command !== 'HSET') await t.admin.call('DEL', key);
      await t.admin.call(...(command === 'SET' && key.endsWith(':pending') ? ['SET', key, 'x'] : setup));
      if (key.endsWith(':pending')) await t.admin.call('HSET', k('gweight'), B, '1'); // names B, whose lane is a string
      const held = await snapshot(t.admin, q);
      await expect(queueInfo(t.conn, q)).rejects.toThrow(error);
      expect(await snapshot(t.admin, q)).toEqual(held);
      await t.admin.call('DEL', key);
    }
  });

  it("after any sequence of the library's lane verbs, every lane that holds jobs is on a page", async () => {
    const groups = [A, B, C];
    const verb = fc.oneof(
      { arbitrary: fc.record({ v: fc.constant('genqueue'), g: fc.constantFrom(...groups) }), weight: 4 },
      fc.record({ v: fc.constant('gclaim'), lease: fc.constantFrom(1, 60_000) }),
      fc.record({ v: fc.constantFrom('complete', 'retry', 'retry-dead'), pick: fc.nat() }),
      fc.record({ v: fc.constantFrom('promote', 'reap') }),
      fc.record({ v: fc.constantFrom('gpause', 'gresume'), g: fc.constantFrom(...groups) }),
      fc.record({ v: fc.constant('limit'), g: fc.constantFrom(...groups), n: fc.integer({ min: 1, max: 2 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(verb, { minLength: 1, maxLength: 30 }), async (verbs) => {
        const q = freshQueue('qi-prop');
        const library = libraryVerbs(t.admin, q);
        for (const step of verbs) {
          if (step.v === 'genqueue') await library.genqueue(step.g!, mintId());
          else if (step.v === 'gclaim') await library.gclaim(step.lease);
          else if (step.v === 'complete' || step.v === 'retry' || step.v === 'retry-dead') {
            const active = await t.admin.zmembers(`emq:{${q}}:active`);
            if (active.length === 0) continue;
            const id = active[step.pick! % active.length]!;
            const token = Number((await t.admin.row(q, id)).attempts);
            if (step.v === 'complete') await library.complete(id, token);
            else await library.retry(id, token, 0, step.v === 'retry' ? 99 : 1);
          } else if (step.v === 'promote') await library.promote();
          else if (step.v === 'reap') await library.reap();
          else if (step.v === 'gpause') await library.gpause(step.g);
          else if (step.v === 'gresume') await library.gresume(step.g);
          else if (step.v === 'limit') await library.limit(step.g, step.n);
          const listed = (await allGroups(q, 2)).map((v) => v.group);
          for (const [g, depth] of Object.entries(await lanesWithJobs(q))) if (depth > 0) expect(listed).toContain(g);
        }
        const keys = Object.keys(await t.admin.footprint(q));
        if (keys.length > 0) await t.admin.call('DEL', ...keys);
      }),
      { numRuns: 40 },
    );
  });
});
