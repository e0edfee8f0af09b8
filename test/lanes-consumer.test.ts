// What we schedule and enqueue into lanes, served by (a model of) the library's consumer:
// @promote releases a scheduled job only once due (to pending, or to its group's lane),
// @gclaim rotates the ring of groups, a paused group and a group at its ceiling stay off the
// ring, and every job completes with its fencing token. Through every transport, on each server.
import { describe, expect, it } from 'vitest';
import { enqueueGrouped, enqueueGroupedMany, enqueueGroupedOnce, mintId, schedule, scheduleMany, scheduleOnce } from '../shared/index.js';
import { freshQueue } from './support/admin.js';
import { libraryAcceptsId, libraryConsumer } from './support/consumer.js';
import { connectedTo, targets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';
const text = (b: Buffer | null | undefined) => b?.toString('latin1');

describe.each(targets())('the library consumer serves scheduled and grouped jobs: $name', (target) => {
  const t = connectedTo(target);
  const fields = (q: string, id: string) => t.admin.row(q, id);
  const list = (key: string) => t.admin.list(key);
  /** Promotes until `n` jobs moved, for at most 3 s; answers how many did. */
  const promoteUntil = async (consumer: ReturnType<typeof libraryConsumer>, n: number) => {
    let moved = 0;
    for (const end = Date.now() + 3_000; moved < n && Date.now() < end; await new Promise((r) => setTimeout(r, 20))) moved += await consumer.promote();
    return moved;
  };

  it("promote: nothing before the due time (in: the server clock, at: the caller's), then pending; claimed with token 1 and completed", async () => {
    const q = freshQueue('sched');
    const consumer = libraryConsumer(t.admin, q);
    const later = mintId();
    const soonIn = mintId();
    const soonAt = mintId();
    const payload = Buffer.from([0, 0xff, 0x80, 10]);
    expect(await schedule(t.conn, q, later, 'an hour away', { inMs: 3_600_000 })).toBe('scheduled');
    expect(await schedule(t.conn, q, soonIn, payload, { inMs: 250 })).toBe('scheduled');
    expect(await schedule(t.conn, q, soonAt, 'at', { at: new Date(Date.now() + 250) })).toBe('scheduled');
    for (const id of [later, soonIn, soonAt]) expect((await fields(q, id)).state).toBe('scheduled');
    expect(await consumer.promote()).toBe(0);
    expect(await consumer.claim()).toBeNull();
    expect(Number(await t.admin.call('ZCARD', `emq:{${q}}:schedule`))).toBe(3);

    expect(await promoteUntil(consumer, 2)).toBe(2);
    expect(await consumer.promote()).toBe(0);
    expect(String(await t.admin.text('ZSCORE', `emq:{${q}}:schedule`, later))).not.toBe('null');
    const claimed = [await consumer.claim(), await consumer.claim()];
    expect(await consumer.claim()).toBeNull();
    // both promoted into the flat pending set: served in mint order, exact bytes, token 1
    expect(claimed.map((c) => c?.id)).toEqual([soonIn, soonAt]);
    expect([...claimed[0]!.payload]).toEqual([...payload]);
    expect(text(claimed[1]!.payload)).toBe('at');
    for (const c of claimed) {
      expect(c!.token).toBe(1);
      expect(await consumer.complete(c!.id, c!.token)).toBe('ok');
    }
    expect((await fields(q, later)).state).toBe('scheduled');
    expect(Object.keys(await t.admin.footprint(q)).sort()).toEqual([`emq:{${q}}:job:${later}`, `emq:{${q}}:metrics:completed`, `emq:{${q}}:schedule`]);
  });

  it('the lane claim serves groups a,a,b,b (enqueued in that order) as a,b,a,b, and each completes', async () => {
    const q = freshQueue('lanes');
    const consumer = libraryConsumer(t.admin, q);
    const [a1, a2, b1, b2] = [mintId(), mintId(), mintId(), mintId()];
    expect(await enqueueGrouped(t.conn, q, A, a1, 'a1')).toBe('enqueued');
    expect(await enqueueGrouped(t.conn, q, A, a2, 'a2')).toBe('enqueued');
    const batch = await enqueueGroupedMany(t.conn, q, [
      { id: b1, group: B, payload: 'b1' },
      { id: b2, group: B, payload: 'b2' },
    ]);
    expect(batch.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued']);
    expect(await list(`emq:{${q}}:ring`)).toEqual([A, B]);
    expect(await list(`emq:{${q}}:wake`)).toEqual(['1', '1']);
    expect(await consumer.claim()).toBeNull(); // nothing in the flat pending set

    const served = [];
    for (let c = await consumer.gclaim(); c; c = await consumer.gclaim()) served.push(c);
    expect(served.map((c) => [c.id, c.group, text(c.payload), c.token])).toEqual([
      [a1, A, 'a1', 1],
      [b1, B, 'b1', 1],
      [a2, A, 'a2', 1],
      [b2, B, 'b2', 1],
    ]);
    for (const c of served) expect(libraryAcceptsId(c.group)).toBe(true);
    expect(String(await t.admin.text('HGET', `emq:{${q}}:gactive`, A))).toBe('2');
    for (const c of served) expect(await consumer.complete(c.id, c.token)).toBe('ok');
    expect(Object.keys(await t.admin.footprint(q))).toEqual([`emq:{${q}}:metrics:completed`, `emq:{${q}}:wake`]);
  });

  it('a paused group keeps its jobs off the ring (no wake) while another group is served', async () => {
    const q = freshQueue('paused');
    const consumer = libraryConsumer(t.admin, q);
    await consumer.pauseGroup(A);
    const held = [mintId(), mintId()];
    for (const id of held) expect(await enqueueGrouped(t.conn, q, A, id, 'held')).toBe('enqueued');
    expect(await list(`emq:{${q}}:ring`)).toEqual([]);
    expect(Number(await t.admin.call('EXISTS', `emq:{${q}}:wake`))).toBe(0);
    expect(Number(await t.admin.call('ZCARD', `emq:{${q}}:g:${A}:pending`))).toBe(2);
    const other = mintId();
    await enqueueGrouped(t.conn, q, B, other, 'served');
    const c = await consumer.gclaim();
    expect([c?.id, c?.group]).toEqual([other, B]);
    expect(await consumer.gclaim()).toBeNull();
    expect(Number(await t.admin.call('ZCARD', `emq:{${q}}:g:${A}:pending`))).toBe(2);
    expect((await fields(q, held[0]!)).state).toBe('pending');
  });

  it('a group at its limit is not re-ringed by a new job; its completion re-rings it', async () => {
    const q = freshQueue('limit');
    const consumer = libraryConsumer(t.admin, q);
    await consumer.limitGroup(A, 1);
    const [first, second, third] = [mintId(), mintId(), mintId()];
    await enqueueGrouped(t.conn, q, A, first, '1');
    await enqueueGrouped(t.conn, q, A, second, '2');
    const c1 = await consumer.gclaim();
    expect(c1?.id).toBe(first);
    expect(await list(`emq:{${q}}:ring`)).toEqual([]); // at its ceiling: off the ring
    const wakes = (await list(`emq:{${q}}:wake`)).length;
    expect(await enqueueGrouped(t.conn, q, A, third, '3')).toBe('enqueued');
    expect(await list(`emq:{${q}}:ring`)).toEqual([]); // still at its ceiling: not re-ringed
    expect((await list(`emq:{${q}}:wake`)).length).toBe(wakes); // and no wake
    expect(await consumer.gclaim()).toBeNull();
    expect(await consumer.complete(c1!.id, c1!.token)).toBe('ok');
    expect(await list(`emq:{${q}}:ring`)).toEqual([A]);
    const c2 = await consumer.gclaim();
    expect(c2?.id).toBe(second);
    expect(await consumer.complete(c2!.id, c2!.token)).toBe('ok');
    const c3 = await consumer.gclaim();
    expect(c3?.id).toBe(third);
    expect(await consumer.complete(c3!.id, c3!.token)).toBe('ok');
  });

  it('a grouped and scheduled job waits out of its lane (ring untouched), then reaches the lane, the ring and a wake when due', async () => {
    const q = freshQueue('schedlane');
    const consumer = libraryConsumer(t.admin, q);
    const id = mintId();
    const far = mintId();
    expect(await schedule(t.conn, q, id, 'grouped later', { inMs: 250, group: A })).toBe('scheduled');
    const results = await scheduleMany(t.conn, q, [{ id: far, payload: 'far', at: Date.now() + 3_600_000, group: B }]);
    expect(results).toEqual([{ id: far, verdict: 'scheduled' }]);
    expect(await fields(q, id)).toEqual({ state: 'scheduled', attempts: '0', payload: 'grouped later', group: A });
    expect(Object.keys(await t.admin.footprint(q)).sort()).toEqual([`emq:{${q}}:job:${far}`, `emq:{${q}}:job:${id}`, `emq:{${q}}:schedule`].sort());
    expect(await consumer.promote()).toBe(0);
    expect(await consumer.gclaim()).toBeNull();

    expect(await promoteUntil(consumer, 1)).toBe(1);
    expect(await fields(q, id)).toEqual({ state: 'pending', attempts: '0', payload: 'grouped later', group: A });
    expect(((await t.admin.call('ZRANGE', `emq:{${q}}:g:${A}:pending`, '0', '-1')) as Buffer[]).map(String)).toEqual([id]);
    expect(await list(`emq:{${q}}:ring`)).toEqual([A]);
    expect(await list(`emq:{${q}}:wake`)).toEqual(['1']);
    expect(Number(await t.admin.call('EXISTS', `emq:{${q}}:pending`))).toBe(0);
    const c = await consumer.gclaim();
    expect([c?.id, c?.group, text(c?.payload), c?.token]).toEqual([id, A, 'grouped later', 1]);
    expect(await consumer.complete(c!.id, c!.token)).toBe('ok');
    expect((await fields(q, far)).state).toBe('scheduled');
  });

  it('jobs admitted behind a dedup key (scheduled, grouped, both) are served like the others', async () => {
    const q = freshQueue('oncelane');
    const consumer = libraryConsumer(t.admin, q);
    const base = { scope: 'key:test', payload: 'once', compare: true, ttlSeconds: 60 };
    const grouped = await enqueueGroupedOnce(t.conn, q, { ...base, key: 'g', group: A });
    const scheduled = await scheduleOnce(t.conn, q, { ...base, key: 's', at: 0 });
    const both = await scheduleOnce(t.conn, q, { ...base, key: 'sg', at: 0, group: B });
    expect([grouped.verdict, scheduled.verdict, both.verdict]).toEqual(['enqueued', 'scheduled', 'scheduled']);
    expect(await consumer.promote()).toBe(2);
    const flat = await consumer.claim();
    expect(flat?.id).toBe(scheduled.id);
    const lanes = [await consumer.gclaim(), await consumer.gclaim()];
    expect(lanes.map((c) => [c?.id, c?.group])).toEqual([
      [grouped.id, A],
      [both.id, B],
    ]);
    for (const c of [flat, ...lanes]) expect(await consumer.complete(c!.id, c!.token)).toBe('ok');
    // a retry of each answers the same job, though its row is gone
    expect(await enqueueGroupedOnce(t.conn, q, { ...base, key: 'g', group: A })).toEqual({ id: grouped.id, verdict: 'duplicate' });
    expect(await scheduleOnce(t.conn, q, { ...base, key: 'sg', inMs: 5, group: B })).toEqual({ id: both.id, verdict: 'duplicate' });
  });
});
