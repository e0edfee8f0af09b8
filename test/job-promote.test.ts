// promoteJob (lua/job-promote.lua) against each real server: on a keyspace where only that id
// is due, its writes and the library's @promote's are the same, key for key (flat, or laned
// with every case of the ring and wake rule: paused, at or below a ceiling, on the ring, a full
// wake list); a job scheduled far ahead is promoted now and the library's claims take it at
// attempts 1; not_scheduled and absent write nothing, nor do the gates.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { LayoutError, WrongTypeError, enqueue, mintId, promoteJob, schedule } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { key, keyspaceOf, SEED_PROMOTE, stateLookup, wipe } from './support/library-control.js';
import { connectedTo, glideTargets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';

describe.each(glideTargets())('promoteJob: $name', (target) => {
  const held = connectedTo(target);
  let admin: Admin;
  let conn: Connection;
  beforeAll(() => void ({ conn, admin } = held));

  it("≡ the library's @promote on a keyspace where only that id is due: same keys, same contents", async () => {
    const q = freshQueue('pr-eq');
    const arbitrary = fc.record({
      group: fc.constantFrom(null, A, B),
      paused: fc.boolean(),
      limit: fc.constantFrom(null, 1, 2, 3),
      active: fc.constantFrom(null, 0, 1, 2, 5),
      ringed: fc.constantFrom('none', 'this', 'other', 'both'),
      wake: fc.constantFrom(0, 3, 64),
      score: fc.integer({ min: 0, max: 1_600_000_000_000 }),
      attempts: fc.integer({ min: 0, max: 4 }),
      others: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, async (c) => {
        const id = mintId();
        const [later, waiting] = [mintId(), mintId()];
        const g = c.group ?? A;
        const prepare = async () => {
          await wipe(admin, q);
          await admin.call('HSET', key(q, `job:${id}`), 'state', 'scheduled', 'attempts', String(c.attempts), 'payload', Buffer.from([0, 255, c.attempts]));
          if (c.group) await admin.call('HSET', key(q, `job:${id}`), 'group', c.group);
          await admin.call('ZADD', key(q, 'schedule'), String(c.score), id);
          if (c.paused) await admin.call('SADD', key(q, 'paused'), g);
          if (c.limit !== null) await admin.call('HSET', key(q, 'glimit'), g, String(c.limit));
          if (c.active !== null) await admin.call('HSET', key(q, 'gactive'), g, String(c.active));
          if (c.ringed === 'this' || c.ringed === 'both') await admin.call('RPUSH', key(q, 'ring'), g);
          if (c.ringed === 'other' || c.ringed === 'both') await admin.call('RPUSH', key(q, 'ring'), g === A ? B : A);
          for (let i = 0; i < c.wake; i++) await admin.call('LPUSH', key(q, 'wake'), '1');
          if (c.others) {
            // not due: the library's pass leaves them, as ours does
            await admin.call('HSET', key(q, `job:${later}`), 'state', 'scheduled', 'attempts', '0', 'payload', 'l', 'group', g);
            await admin.call('ZADD', key(q, 'schedule'), '4000000000000', later);
            await admin.call('ZADD', key(q, `g:${g}:pending`), '0', waiting);
            await admin.call('ZADD', key(q, 'pending'), '0', waiting);
          }
        };
        await prepare();
        const seedReply = Number(await admin.call('EVAL', SEED_PROMOTE, '2', key(q, 'schedule'), key(q, 'pending'), key(q, ''), '100'));
        const seedState = await keyspaceOf(admin, q);
        await prepare();
        expect(await promoteJob(conn, q, id)).toBe('promoted');
        expect(await keyspaceOf(admin, q)).toEqual(seedState);
        expect(seedReply).toBe(1);
      }),
      { numRuns: 80 },
    );
    await wipe(admin, q);
  });

  it('a job scheduled an hour ahead is due now: the library claims it at attempts 1, flat (@claim) or from its lane (@gclaim)', async () => {
    const q = freshQueue('pr-claim');
    const consumer = libraryConsumer(admin, q);
    const [flat, laned] = [mintId(), mintId()];
    await schedule(conn, q, flat, Buffer.from([1, 0, 254]), { inMs: 3_600_000 });
    await schedule(conn, q, laned, 'in a lane', { inMs: 3_600_000, group: A });
    expect(await consumer.promote()).toBe(0);
    expect(await promoteJob(conn, q, flat)).toBe('promoted');
    expect(await promoteJob(conn, q, laned)).toBe('promoted');
    for (const id of [flat, laned]) expect(await stateLookup(admin, q, id)).not.toBe('scheduled');
    const c1 = (await consumer.claim())!;
    expect([c1.id, [...c1.payload], c1.token]).toEqual([flat, [1, 0, 254], 1]);
    const c2 = (await consumer.gclaim())!;
    expect([c2.id, c2.payload.toString(), c2.token, c2.group]).toEqual([laned, 'in a lane', 1, A]);
    expect(await consumer.claim()).toBeNull();
    expect(await consumer.gclaim()).toBeNull();
    expect(await consumer.complete(flat, 1)).toBe('ok');
    expect(await consumer.complete(laned, 1)).toBe('ok');
  });

  it('not_scheduled (pending, claimed, dead) and absent: nothing written', async () => {
    const q = freshQueue('pr-refused');
    const consumer = libraryConsumer(admin, q);
    const [pending, claimed, dead] = [mintId(), mintId(), mintId()];
    await enqueue(conn, q, claimed, 'c');
    await consumer.claim();
    await enqueue(conn, q, pending, 'p');
    await admin.call('HSET', key(q, `job:${dead}`), 'state', 'dead', 'attempts', '3', 'payload', 'd');
    await admin.call('ZADD', key(q, 'dead'), '0', dead);
    // an orphan schedule entry without a row is absent too: there is no job to make due
    const orphan = mintId();
    await admin.call('ZADD', key(q, 'schedule'), '1', orphan);
    const before = await snapshot(admin, q);
    for (const id of [pending, claimed, dead]) expect(await promoteJob(conn, q, id)).toBe('not_scheduled');
    for (const id of [mintId(), orphan]) expect(await promoteJob(conn, q, id)).toBe('absent');
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('the gates: a ceiling that holds no number, a ring that is no list, a row naming a bad group; nothing written', async () => {
    const q = freshQueue('pr-gates');
    const id = mintId();
    await schedule(conn, q, id, 'x', { inMs: 60_000, group: A });
    await admin.call('HSET', key(q, 'glimit'), A, 'lots');
    let before = await snapshot(admin, q);
    await expect(promoteJob(conn, q, id)).rejects.toBeInstanceOf(LayoutError);
    expect(await snapshot(admin, q)).toEqual(before);
    await admin.call('DEL', key(q, 'glimit'));
    await admin.call('SET', key(q, 'ring'), 'x');
    before = await snapshot(admin, q);
    await expect(promoteJob(conn, q, id)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q)).toEqual(before);
    await admin.call('DEL', key(q, 'ring'));
    await admin.call('HSET', key(q, `job:${id}`), 'group', 'no group');
    before = await snapshot(admin, q);
    await expect(promoteJob(conn, q, id)).rejects.toBeInstanceOf(LayoutError);
    expect(await snapshot(admin, q)).toEqual(before);
  });
});
