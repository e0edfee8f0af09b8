// removeJob (lua/job-remove.lua) against each real server: on every flat job the library's
// @remove_job removes without breaking the wire (pending, scheduled, dead; with a matching,
// foreign or missing dedup key, or none) ours writes exactly what it writes and answers the
// same; a laned job also leaves its lane (and the ring when the lane empties), and the
// library's own consumer never meets the removed id again; every refusal (claimed, locked, in
// a flow not done, absent) writes nothing, and a claimed job's worker still completes it.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { LayoutError, WrongTypeError, addFlow, enqueue, enqueueGrouped, jobRemoveScript, mintId, removeJob, schedule } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { key, keyspaceOf, SEED_REMOVE_JOB, stateLookup, wipe } from './support/library-control.js';
import { connectedTo, glideTargets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';

describe.each(glideTargets())('removeJob: $name', (target) => {
  const held = connectedTo(target);
  let admin: Admin;
  let conn: Connection;
  beforeAll(() => void ({ conn, admin } = held));
  /** A refusal: the reason, and the queues' keyspace (DUMP of every key, the change counter) the same after. */
  const refusedUnchanged = async (q: string, id: string, reason: string, options: { dedupId?: string } = {}) => {
    const before = await snapshot(admin, q);
    expect(await removeJob(conn, q, id, options)).toEqual({ removed: false, reason });
    expect(await snapshot(admin, q)).toEqual(before);
  };

  it("≡ the library's @remove_job on every flat job it removes cleanly: same keys, same contents, same answer", async () => {
    const q = freshQueue('rm-eq');
    const arbitrary = fc.record({
      state: fc.constantFrom('pending', 'scheduled', 'dead'),
      row: fc.constantFrom('row', 'row', 'row', 'none'),
      payload: fc.uint8Array({ maxLength: 64 }),
      attempts: fc.integer({ min: 0, max: 9 }),
      score: fc.integer({ min: 0, max: 4_000_000_000_000 }),
      logs: fc.boolean(),
      dedup: fc.constantFrom('none', 'match', 'foreign', 'missing'),
      others: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, async (c) => {
        const id = mintId();
        const other = mintId();
        const did = `d-${id}`;
        const row = key(q, `job:${id}`);
        const set = { pending: 'pending', scheduled: 'schedule', dead: 'dead' }[c.state]!;
        const prepare = async () => {
          await wipe(admin, q);
          if (c.row === 'row') {
            await admin.call('HSET', row, 'state', c.state, 'attempts', String(c.attempts), 'payload', Buffer.from(c.payload));
            if (c.state === 'dead') await admin.call('HSET', row, 'last_error', 'boom');
            await admin.call('ZADD', key(q, set), c.state === 'scheduled' ? String(c.score) : '0', id);
          }
          if (c.logs) await admin.call('RPUSH', `${row}:logs`, 'a line', 'another');
          if (c.dedup === 'match') await admin.call('SET', key(q, `de:${did}`), id, 'EX', '600');
          if (c.dedup === 'foreign') await admin.call('SET', key(q, `de:${did}`), other);
          if (c.others) {
            for (const s of ['pending', 'active', 'schedule', 'dead']) await admin.call('ZADD', key(q, s), '7', other);
            await admin.call('HSET', key(q, `job:${other}`), 'state', 'pending', 'attempts', '0', 'payload', 'x');
          }
        };
        const given = c.dedup === 'none' ? '' : did;
        await prepare();
        const seedKeys = [row, ...['pending', 'active', 'schedule', 'dead', `de:${given}`].map((s) => key(q, s))];
        const seedReply = Number(await admin.call('EVAL', SEED_REMOVE_JOB, '6', ...seedKeys, id, given));
        const seedState = await keyspaceOf(admin, q);
        await prepare();
        const ours = await removeJob(conn, q, id, given === '' ? {} : { dedupId: given });
        expect(await keyspaceOf(admin, q)).toEqual(seedState);
        expect(ours).toEqual(seedReply === 1 ? { removed: true, state: c.state } : { removed: false, reason: 'absent' });
        expect(seedReply).toBe(c.row === 'row' ? 1 : -1);
      }),
      { numRuns: 60 },
    );
    await wipe(admin, q);
  });

  it('a laned job leaves its lane, and the ring once the lane is empty; the consumer never meets it again', async () => {
    const q = freshQueue('rm-lane');
    const consumer = libraryConsumer(admin, q);
    const [a1, a2, b1] = [mintId(), mintId(), mintId()];
    await enqueueGrouped(conn, q, A, a1, 'a1');
    await enqueueGrouped(conn, q, A, a2, 'a2');
    await enqueueGrouped(conn, q, B, b1, 'b1');
    expect(await admin.list(key(q, 'ring'))).toEqual([A, B]);

    // what the library's @remove_job writes, and the lane's share: nothing else
    const before = await keyspaceOf(admin, q);
    expect(await removeJob(conn, q, a1)).toEqual({ removed: true, state: 'pending' });
    const after = await keyspaceOf(admin, q);
    const lane = key(q, `g:${A}:pending`);
    expect(Object.keys(before).filter((k) => !(k in after))).toEqual([key(q, `job:${a1}`)]);
    expect(after[lane]).toEqual(['zset', [`${Buffer.from(a2).toString('hex')}@0`], 'no ttl']);
    for (const k of Object.keys(after)) if (k !== lane) expect(after[k], k).toEqual(before[k]);
    expect(await stateLookup(admin, q, a1)).toBe('absent');

    // the last of a lane: the lane is gone, and so is the group from the ring
    expect(await removeJob(conn, q, b1)).toEqual({ removed: true, state: 'pending' });
    expect(await admin.list(key(q, 'ring'))).toEqual([A]);
    expect(Number(await admin.call('EXISTS', key(q, `g:${B}:pending`)))).toBe(0);
    expect(await stateLookup(admin, q, b1)).toBe('absent');

    // Lanes.claim serves what is left, and then nothing: no ghost without a payload
    const claimed = await consumer.gclaim();
    expect(claimed?.id).toBe(a2);
    expect(claimed?.payload.toString()).toBe('a2');
    expect(await consumer.gclaim()).toBeNull();
    expect(await consumer.complete(a2, claimed!.token)).toBe('ok');
    expect(Object.keys(await admin.footprint(q))).toEqual([key(q, 'metrics:completed'), key(q, 'wake')].sort());
  });

  it('a grouped job scheduled (a retry) or dead: removed from its set, and its lane left as @complete leaves it', async () => {
    const q = freshQueue('rm-lane2');
    const [s, d, w] = [mintId(), mintId(), mintId()];
    await schedule(conn, q, s, 'later', { inMs: 60_000, group: A });
    await admin.call('HSET', key(q, `job:${d}`), 'state', 'dead', 'attempts', '3', 'payload', 'p', 'group', B, 'last_error', 'x');
    await admin.call('ZADD', key(q, 'dead'), '0', d);
    await enqueueGrouped(conn, q, B, w, 'waits');
    expect(await removeJob(conn, q, s)).toEqual({ removed: true, state: 'scheduled' });
    expect(await removeJob(conn, q, d)).toEqual({ removed: true, state: 'dead' });
    // B's lane still holds w: B stays on the ring
    expect(await admin.list(key(q, 'ring'))).toEqual([B]);
    expect(await admin.zmembers(key(q, `g:${B}:pending`))).toEqual([w]);
    for (const id of [s, d]) expect(await stateLookup(admin, q, id)).toBe('absent');
    expect(await libraryConsumer(admin, q).promote()).toBe(0);
  });

  it('refused, nothing written: a claimed job (job_active), whose worker then completes it; its group comes down', async () => {
    const q = freshQueue('rm-active');
    const consumer = libraryConsumer(admin, q);
    const [flat, laned, next] = [mintId(), mintId(), mintId()];
    await enqueue(conn, q, flat, 'f');
    await enqueueGrouped(conn, q, A, laned, 'l');
    await enqueueGrouped(conn, q, A, next, 'n');
    await consumer.limitGroup(A, 1);
    const c1 = (await consumer.claim())!;
    const c2 = (await consumer.gclaim())!;
    expect([c1.id, c2.id]).toEqual([flat, laned]);
    await refusedUnchanged(q, flat, 'job_active');
    await refusedUnchanged(q, laned, 'job_active', { dedupId: 'some-key' });
    expect(await stateLookup(admin, q, flat)).toBe('active');
    expect(await consumer.complete(flat, c1.token)).toBe('ok');
    expect(await consumer.complete(laned, c2.token)).toBe('ok');
    // the ceiling came down: the lane's next job is served
    expect(Number(await admin.call('HEXISTS', key(q, 'gactive'), A))).toBe(0);
    expect((await consumer.gclaim())?.id).toBe(next);
  });

  it("refused, nothing written: the library's lock, as its key or as the row's native field (job_locked)", async () => {
    const q = freshQueue('rm-lock');
    const [byKey, byField] = [mintId(), mintId()];
    await enqueue(conn, q, byKey, 'k');
    await enqueue(conn, q, byField, 'f');
    await admin.call('SET', key(q, `job:${byKey}:lock`), 'worker-1', 'PX', '60000');
    await admin.call('HSET', key(q, `job:${byField}`), 'lock', 'worker-2');
    await refusedUnchanged(q, byKey, 'job_locked');
    await refusedUnchanged(q, byField, 'job_locked');
    await admin.call('DEL', key(q, `job:${byKey}:lock`));
    expect(await removeJob(conn, q, byKey)).toEqual({ removed: true, state: 'pending' });
  });

  it('refused, nothing written: a flow parent held, its children, a child of a parent in another queue (job_in_flow); once done, removable', async () => {
    const q = freshQueue('rm-flow');
    const other = freshQueue('rm-flow-x');
    const consumer = libraryConsumer(admin, q);
    const { parent, children } = await addFlow(conn, q, { parent: { payload: 'P' }, children: [{ payload: 'c1' }, { payload: 'c2' }] });
    const [c1, c2] = children.map((c) => c.id) as [string, string];
    await refusedUnchanged(q, parent.id, 'job_in_flow');
    await refusedUnchanged(q, c1, 'job_in_flow');
    // a cross-queue child: its parent is in another slot, so it is always refused
    const x = await addFlow(conn, other, { parent: { payload: 'P' }, children: [{ payload: 'x', queue: q }] });
    await refusedUnchanged(q, x.children[0]!.id, 'job_in_flow');
    // c1 completes; c2 still counts: the parent waits, both are still refused
    const first = (await consumer.claim())!;
    expect(first.id).toBe(c1);
    expect(await consumer.complete(c1, first.token)).toBe('ok');
    await refusedUnchanged(q, c2, 'job_in_flow');
    await refusedUnchanged(q, parent.id, 'job_in_flow');
    const second = (await consumer.claim())!;
    expect(await consumer.complete(c2, second.token)).toBe('ok');
    // released: the count is 0, the parent pending; the flow is done
    expect(await stateLookup(admin, q, parent.id)).toBe('pending');
    expect(await removeJob(conn, q, parent.id)).toEqual({ removed: true, state: 'pending' });
    expect(await stateLookup(admin, q, parent.id)).toBe('absent');
    expect((await consumer.claim())?.id).toBe(x.children[0]!.id);
    expect(await consumer.claim()).toBeNull();
  });

  it('a dead parent (failed by a child) with a count above 0, and a child of a parent whose count is 0: refused, then allowed', async () => {
    const q = freshQueue('rm-flow2');
    const [parent, child] = [mintId(), mintId()];
    await admin.call('HSET', key(q, `job:${parent}`), 'state', 'dead', 'attempts', '1', 'payload', 'P');
    await admin.call('ZADD', key(q, 'dead'), '0', parent);
    await admin.call('SET', key(q, `job:${parent}:dependencies`), '1');
    await admin.call('HSET', key(q, `job:${child}`), 'state', 'pending', 'attempts', '0', 'payload', 'c', 'parent', parent);
    await admin.call('ZADD', key(q, 'pending'), '0', child);
    await refusedUnchanged(q, parent, 'job_in_flow');
    await refusedUnchanged(q, child, 'job_in_flow');
    await admin.call('SET', key(q, `job:${parent}:dependencies`), 'not a number');
    await refusedUnchanged(q, child, 'job_in_flow');
    await admin.call('SET', key(q, `job:${parent}:dependencies`), '0');
    expect(await removeJob(conn, q, child)).toEqual({ removed: true, state: 'pending' });
    expect(await removeJob(conn, q, parent)).toEqual({ removed: true, state: 'dead' });
  });

  it('absent, nothing written: no row and no set; a row in no set that is no lane job; an id in no queue', async () => {
    const q = freshQueue('rm-absent');
    const stray = mintId();
    await enqueue(conn, q, mintId(), 'another');
    await refusedUnchanged(q, mintId(), 'absent');
    await refusedUnchanged(q, mintId(), 'absent', { dedupId: 'k' });
    await admin.call('HSET', key(q, `job:${stray}`), 'state', 'active', 'attempts', '1');
    await refusedUnchanged(q, stray, 'absent');
    // an orphan id in a set, without a row, is removed from it (the set said it waits there)
    const orphan = mintId();
    await admin.call('ZADD', key(q, 'schedule'), '5', orphan);
    expect(await removeJob(conn, q, orphan)).toEqual({ removed: true, state: 'scheduled' });
    expect(await admin.zmembers(key(q, 'schedule'))).toEqual([]);
  });

  it('the gates: wrong types, keys that do not belong, a row naming a bad group; nothing written', async () => {
    const q = freshQueue('rm-gates');
    const id = mintId();
    await enqueue(conn, q, id, 'x');
    await admin.call('HSET', key(q, 'de:k'), 'f', 'v');
    let before = await snapshot(admin, q);
    await expect(removeJob(conn, q, id, { dedupId: 'k' })).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q)).toEqual(before);
    const run = (keys: string[], args: string[]) => conn.run({ op: 'eval', script: jobRemoveScript.text, keys, args });
    const row = key(q, `job:${id}`);
    const keys = [
      row,
      ...['pending', 'active', 'schedule', 'dead'].map((s) => key(q, s)),
      `${row}:logs`,
      `${row}:lock`,
      `${row}:dependencies`,
      key(q, 'de:'),
      key(q, 'ring'),
    ];
    const cases: Array<[string[], string[]]> = [
      [keys, [id, '', '']],
      [keys.slice(0, 9), [id, '', '', '']],
      [keys, [id, '', A, '']],
      [
        [...keys, key(q, `g:${B}:pending`)],
        [id, '', A, ''],
      ],
      [keys, [id, 'bad key!', '', '']],
      [keys, [id, 'k', '', '']],
      [keys.map((k, i) => (i === 3 ? k.replace(q, `${q}x`) : k)), [id, '', '', '']],
      [keys, [mintId(), '', '', '']],
      [keys, ['ABC0000000000A', '', '', '']],
      [
        [...keys, key(q, 'job:x'), key(q, 'job:x:dependencies')],
        [id, '', '', 'x'],
      ],
    ];
    for (const [k, a] of cases) {
      const outcome = await run(k, a);
      expect(outcome.ok, a.join(' ')).toBe(false);
      expect(!outcome.ok && outcome.error, a.join(' ')).toMatch(/^(EMQLAYOUT|EMQKIND) [\x20-\x7e]*$/);
    }
    expect(await snapshot(admin, q)).toEqual(before);
    // a row that names a group no key can be built from
    await admin.call('HSET', row, 'group', 'not a group');
    before = await snapshot(admin, q);
    await expect(removeJob(conn, q, id)).rejects.toBeInstanceOf(LayoutError);
    expect(await snapshot(admin, q)).toEqual(before);
  });
});
