// The control verbs (issue 25) and the repeatables (issue 26) on a real Valkey Cluster (3
// primaries), over glide and through the gateway with a control token: every key each call
// sends is in its queue's slot (checked on the way out; the cluster would answer CROSSSLOT
// otherwise), every key a queue has lives on one node, and after each verb the library's own
// consumer transitions and Pump sweep (test/support/consumer.ts, library-repeat.ts, run through
// the cluster) agree with what the verb answered.
import { describe, expect, it } from 'vitest';
import type { Connection, ScriptCommand } from '../shared/connection.js';
import { connectRest } from '../shared/connections/rest.js';
import {
  cancelSchedule,
  enqueue,
  enqueueGrouped,
  jobDetail,
  listSchedules,
  mintId,
  pauseQueue,
  pauseSchedule,
  promoteJob,
  queueInfo,
  readGroup,
  readSchedule,
  registerSchedule,
  removeJob,
  rescheduleJob,
  resumeSchedule,
  runScheduleNow,
  schedule,
  setGroup,
} from '../shared/index.js';
import { onCluster } from './support/cluster-harness.js';
import { type CommandCaller, libraryConsumer } from './support/consumer.js';
import { libraryVerbs } from './support/library-control.js';
import { libraryRepeat } from './support/library-repeat.js';
import { slotOf } from './support/slot.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';
const HOUR = 3_600_000;
const EVERY = 60_000;
const DAY = 24 * HOUR;

/** `conn`, asserting on the way out that every key of every script call is in `queue`'s slot; `calls` counts them. */
function slotted(conn: Connection, queue: string) {
  const slot = slotOf(`{${queue}}`);
  const seen = (commands: readonly ScriptCommand[]) => {
    for (const c of commands) for (const k of c.keys) expect(slotOf(k), k).toBe(slot);
    counted.calls += commands.length;
  };
  const counted = {
    calls: 0,
    conn: {
      run: (c: ScriptCommand) => (seen([c]), conn.run(c)),
      pipeline: (cs: readonly ScriptCommand[]) => (seen(cs), conn.pipeline(cs)),
      close: async () => undefined,
    } as Connection,
  };
  return counted;
}

describe('the control verbs and repeatables on a Valkey Cluster (3 primaries)', () => {
  const h = onCluster();
  const viaCluster: CommandCaller = { call: (...args) => h.routed.call(...args) };
  const text = (v: unknown) => (v as Buffer[]).map(String);

  /** The node holding every key of the queue (its index): exactly one holds any, each key in the queue's slot. */
  async function nodeOf(q: string): Promise<number> {
    const held = await Promise.all(h.nodes.map(async (n) => text(await n.call('KEYS', `emq:{${q}}:*`))));
    const holders = held.flatMap((keys, i) => (keys.length > 0 ? [i] : []));
    expect(holders, q).toHaveLength(1);
    for (const k of held[holders[0]!]!) expect(slotOf(k), k).toBe(slotOf(`{${q}}`));
    return holders[0]!;
  }

  /** @queue-info's counts and the library's @counts, read after the same verbs, are one. */
  async function countsAgree(conn: Connection, q: string) {
    const info = await queueInfo(conn, q);
    const seen = await libraryVerbs(viaCluster, q).counts();
    const { schedule: scheduled, ...rest } = seen;
    expect(info.counts).toEqual({ ...rest, scheduled });
    return info;
  }

  async function controlLife(conn: Connection, q: string): Promise<number> {
    const m = libraryConsumer(viaCluster, q);
    const [gone, kept, laned, later, due, b1, b2] = Array.from({ length: 7 }, () => mintId()) as [string, string, string, string, string, string, string];
    expect(await enqueue(conn, q, gone, 'gone')).toBe('enqueued');
    expect(await enqueue(conn, q, kept, 'kept')).toBe('enqueued');
    expect(await enqueueGrouped(conn, q, A, laned, 'laned')).toBe('enqueued');
    expect(await schedule(conn, q, later, 'later', { inMs: HOUR })).toBe('scheduled');
    expect(await schedule(conn, q, due, 'due', { inMs: 0 })).toBe('scheduled');
    for (const b of [b1, b2]) expect(await schedule(conn, q, b, b, { inMs: HOUR, group: B })).toBe('scheduled');
    const node = await nodeOf(q);

    // reads
    expect(await jobDetail(conn, q, laned)).toEqual({ state: 'pending', attempts: 0, group: A });
    expect(await jobDetail(conn, q, b1)).toMatchObject({ state: 'scheduled', attempts: 0, group: B, runAt: expect.any(Number) });

    // remove: a flat pending, a laned one (its lane leaves the ring), a due scheduled one
    expect(await removeJob(conn, q, gone)).toEqual({ removed: true, state: 'pending' });
    expect(text(await viaCluster.call('LRANGE', `emq:{${q}}:ring`, '0', '-1'))).toEqual([A]);
    expect(await removeJob(conn, q, laned)).toEqual({ removed: true, state: 'pending' });
    expect(text(await viaCluster.call('LRANGE', `emq:{${q}}:ring`, '0', '-1'))).toEqual([]);
    expect(await removeJob(conn, q, due)).toEqual({ removed: true, state: 'scheduled' });
    expect(await removeJob(conn, q, gone)).toEqual({ removed: false, reason: 'absent' });
    expect(await jobDetail(conn, q, gone)).toBeNull();
    expect(await m.promote()).toBe(0); // the removed due job is not promoted
    expect(await m.gclaim()).toBeNull(); // nor is the removed lane served

    // reschedule, then promote: claimed at attempts 1
    const moved = await rescheduleJob(conn, q, later, { delayMs: 2 * HOUR });
    expect(moved.rescheduled).toBe(true);
    expect((await jobDetail(conn, q, later))?.runAt).toBe(moved.rescheduled ? moved.runAt : -1);
    expect(await promoteJob(conn, q, later)).toBe('promoted');
    expect(await promoteJob(conn, q, later)).toBe('not_scheduled');

    // a paused queue claims nothing; resumed, the model claims kept and later, never gone
    expect(await pauseQueue(conn, q, true)).toEqual({ queue: q, paused: true });
    expect(await m.claim()).toBeNull();
    expect((await countsAgree(conn, q)).paused).toBe(true);
    await pauseQueue(conn, q, false);
    const flat = [await m.claim(), await m.claim()];
    expect(await m.claim()).toBeNull();
    expect(flat.map((c) => [c?.id, c?.token])).toEqual([
      [kept, 1],
      [later, 1],
    ]);

    // a dead job (the library's retry at its last attempt) is removed too
    const doomed = mintId();
    await enqueue(conn, q, doomed, 'doomed');
    const d = await m.claim();
    expect(d?.id).toBe(doomed);
    expect(String(await libraryVerbs(viaCluster, q).retry(doomed, d!.token, 0, 1))).toBe('dead');
    expect(await jobDetail(conn, q, doomed)).toMatchObject({ state: 'dead', attempts: 1, lastError: 'boom' });
    expect(await removeJob(conn, q, doomed)).toEqual({ removed: true, state: 'dead' });

    // a paused lane is not served; resumed under limit 1, it holds the lane's second claim
    expect(await setGroup(conn, q, B, { limit: 1, paused: true })).toMatchObject({ group: B, pending: 0, limit: 1, paused: true, ringed: false });
    for (const b of [b1, b2]) expect(await promoteJob(conn, q, b)).toBe('promoted');
    expect(await m.gclaim()).toBeNull();
    expect(await setGroup(conn, q, B, { paused: false })).toMatchObject({ pending: 2, active: 0, limit: 1, paused: false, ringed: true });
    const g = await m.gclaim();
    expect([g?.id, g?.token, g?.group]).toEqual([b1, 1, B]);
    expect(await m.gclaim()).toBeNull();
    expect(await readGroup(conn, q, B)).toMatchObject({ pending: 1, active: 1, ringed: false });
    const busy = await countsAgree(conn, q);
    expect(busy).toMatchObject({ paused: false, counts: { pending: 0, active: 3, scheduled: 0 } });
    expect(busy.groups.map((v) => [v.group, v.pending, v.active])).toEqual([[B, 1, 1]]);
    // a page of one group at a time (A named again by its weight alone)
    await setGroup(conn, q, A, { weight: 3 });
    const first = await queueInfo(conn, q, { count: 1 });
    expect([first.groups.map((v) => v.group), first.cursor]).toEqual([[A], A]);
    const second = await queueInfo(conn, q, { count: 1, cursor: first.cursor! });
    expect([second.groups.map((v) => v.group), second.cursor]).toEqual([[B], undefined]);

    // everything to the end: completing b1 re-rings B for b2
    for (const c of [...flat, g]) expect(await m.complete(c!.id, c!.token)).toBe('ok');
    const last = await m.gclaim();
    expect(last?.id).toBe(b2);
    expect(await m.complete(last!.id, last!.token)).toBe('ok');
    expect((await countsAgree(conn, q)).counts).toEqual({ pending: 0, active: 0, scheduled: 0, dead: 0, completed: 4, failed: 1 });
    expect(await nodeOf(q)).toBe(node);
    return node;
  }

  async function repeatLife(conn: Connection, q: string): Promise<number> {
    const m = libraryConsumer(viaCluster, q);
    const pump = libraryRepeat(viaCluster, q);
    const now = Date.now();
    const options = { everyMs: EVERY, template: `tick:${q}`, now };
    expect(await registerSchedule(conn, q, 'tick', options)).toBe('registered');
    expect(await registerSchedule(conn, q, 'tick', options)).toBe('exists');
    for (const name of ['tock', 'tuck']) expect(await registerSchedule(conn, q, name, { ...options, firstInMs: DAY })).toBe('registered');
    expect(await listSchedules(conn, q)).toEqual({
      schedules: [
        { name: 'tick', everyMs: EVERY, nextRunAt: now, paused: false },
        { name: 'tock', everyMs: EVERY, nextRunAt: now + DAY, paused: false },
        { name: 'tuck', everyMs: EVERY, nextRunAt: now + DAY, paused: false },
      ],
    });
    expect(Buffer.from((await readSchedule(conn, q, 'tick'))!.template!).toString()).toBe(`tick:${q}`);
    const node = await nodeOf(q);

    // the Pump fires a flat job on the queue's node; the consumer takes it
    const fires = async (at: number) => {
      const fired = await pump.sweep(at);
      expect(await nodeOf(q)).toBe(node);
      for (const f of fired) {
        const c = await m.claim();
        expect([c?.id, c?.token, c?.payload.toString()]).toEqual([f.id, 1, `tick:${q}`]);
        expect(await m.complete(c!.id, c!.token)).toBe('ok');
      }
      return fired.length;
    };
    expect(await fires(now)).toBe(1);
    expect(await fires(now + EVERY - 1)).toBe(0);

    // paused: never due; resumed at its next run; run-now: due at once
    expect(await pauseSchedule(conn, q, 'tick', now)).toMatchObject({ paused: true, nextRunAt: null });
    expect(await fires(now + 100 * EVERY)).toBe(0);
    expect(await resumeSchedule(conn, q, 'tick', now + 1)).toMatchObject({ paused: false, nextRunAt: now + EVERY });
    expect(await runScheduleNow(conn, q, 'tick', now + 2)).toMatchObject({ paused: false, nextRunAt: now + 2 });
    expect(await fires(now + 2)).toBe(1);

    // cancelled: gone, and never fired again
    for (const name of ['tick', 'tock', 'tuck']) expect(await cancelSchedule(conn, q, name)).toBe('cancelled');
    expect(await cancelSchedule(conn, q, 'tick')).toBe('absent');
    expect(await readSchedule(conn, q, 'tick')).toBeNull();
    expect(await pump.count()).toBe(0);
    expect(await fires(now + 1000 * EVERY)).toBe(0);
    expect((await countsAgree(conn, q)).counts.completed).toBe(2);
    return node;
  }

  /** Both lives on `n` fresh queues over `conn`; answers the nodes they landed on. */
  async function acrossSlots(conn: Connection, label: string, n = 12): Promise<Set<number>> {
    const queues = Array.from({ length: n }, (_, i) => `${label}-${Date.now().toString(36)}-${i}`);
    const nodes = new Set<number>();
    await Promise.all(
      queues.map(async (q) => {
        for (const [life, name] of [
          [controlLife, q],
          [repeatLife, `${q}-r`],
        ] as const) {
          const s = slotted(conn, name);
          nodes.add(await life(s.conn, name));
          expect(s.calls).toBeGreaterThan(10);
        }
      }),
    );
    expect(nodes.size).toBeGreaterThanOrEqual(2);
    return nodes;
  }

  it("over glide: every verb on its queue's node, the library's consumer and Pump agreeing after each", async () => {
    await acrossSlots(h.glide, 'ctl-glide');
  });

  it('over the gateway (REST) with a control token: the same', async () => {
    await acrossSlots(connectRest({ url: h.gateway.url, token: h.gateway.control }), 'ctl-rest');
  });

  it('the gateway refuses the producer token the control scripts (403), with nothing written', async () => {
    const rest = connectRest({ url: h.gateway.url, token: h.gateway.producer });
    const q = `ctl-producer-${Date.now().toString(36)}`;
    await expect(pauseQueue(rest, q, true)).rejects.toThrow(/403/);
    await expect(registerSchedule(rest, q, 'tick', { everyMs: EVERY, template: 't' })).rejects.toThrow(/403/);
    const held = await Promise.all(h.nodes.map(async (n) => text(await n.call('KEYS', `emq:{${q}}:*`))));
    expect(held.flat()).toEqual([]);
  });
});
