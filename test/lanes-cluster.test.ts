// Scheduled and grouped admission on a real Valkey Cluster (3 primaries), over glide and the
// gateway: every key one job touches (row, schedule, lane, ring, paused, glimit, gactive,
// wake, dedup key) lives in its queue's slot, on one node, so each script runs there; and the
// library's consumer (the model's promote, claim, gclaim, complete, run through the cluster)
// takes every job to the end.
import { describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { connectRest } from '../shared/connections/rest.js';
import { enqueueGrouped, enqueueGroupedOnce, mintId, schedule, scheduleOnce } from '../shared/index.js';
import { type CommandCaller, libraryConsumer } from './support/consumer.js';
import { onCluster } from './support/cluster-harness.js';
import { slotOf } from './support/slot.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';

describe('scheduled and grouped admission on a Valkey Cluster (3 primaries)', () => {
  const h = onCluster();
  const viaCluster: CommandCaller = { call: (...args) => h.routed.call(...args) };

  async function lifeOf(conn: Connection, label: string) {
    const queues = Array.from({ length: 24 }, (_, i) => `${label}-${Date.now().toString(36)}-${i}`);
    const slots = new Set<number>();
    await Promise.all(
      queues.map(async (q) => {
        const consumer = libraryConsumer(viaCluster, q);
        await consumer.limitGroup(B, 5); // glimit lives in the queue's slot too
        const flat = mintId();
        const groupedLater = mintId();
        expect(await schedule(conn, q, flat, 'flat', { inMs: 0 })).toBe('scheduled');
        expect(await schedule(conn, q, groupedLater, 'grouped later', { at: 0, group: A })).toBe('scheduled');
        const grouped = mintId();
        expect(await enqueueGrouped(conn, q, B, grouped, 'grouped now')).toBe('enqueued');
        const once = { scope: 'key:cluster', payload: 'once', compare: true, ttlSeconds: 60 };
        const s = await scheduleOnce(conn, q, { ...once, key: 's', at: 0, group: B });
        const g = await enqueueGroupedOnce(conn, q, { ...once, key: 'g', group: A });
        expect([s.verdict, g.verdict]).toEqual(['scheduled', 'enqueued']);
        await consumer.pauseGroup('ORD0NgWEfAEJfs'); // the paused set too

        // every key of the queue: on one node, in the queue's slot
        const slot = slotOf(`{${q}}`);
        slots.add(slot);
        const held = await Promise.all(h.nodes.map(async (n) => ((await n.call('KEYS', `emq:{${q}}:*`)) as Buffer[]).map(String)));
        const holders = held.filter((keys) => keys.length > 0);
        expect(holders).toHaveLength(1);
        const keys = holders[0]!;
        for (const suffix of ['schedule', `g:${B}:pending`, `g:${A}:pending`, 'ring', 'wake', 'glimit', 'paused'])
          expect(keys).toContain(`emq:{${q}}:${suffix}`);
        expect(keys.filter((k) => k.includes(':de:'))).toHaveLength(2);
        for (const k of keys) expect(slotOf(k), k).toBe(slot);

        // the consumer takes every job to the end
        expect(await consumer.promote()).toBe(3);
        const claimed = [await consumer.claim()];
        for (let c = await consumer.gclaim(); c; c = await consumer.gclaim()) claimed.push(c);
        expect(claimed.map((c) => c?.id).sort()).toEqual([flat, groupedLater, grouped, s.id, g.id].sort());
        for (const c of claimed) expect(await consumer.complete(c!.id, c!.token)).toBe('ok');
      }),
    );
    return slots;
  }

  it("over glide: each queue's keys in its slot on one node, every job promoted, claimed and completed", async () => {
    const slots = await lifeOf(h.glide, 'lanes-glide');
    expect(slots.size).toBe(24);
  });

  it('over the gateway (REST): the same', async () => {
    const rest = connectRest({ url: h.gateway.url, token: h.gateway.producer });
    const slots = await lifeOf(rest, 'lanes-rest');
    expect(slots.size).toBe(24);
  });

  it('the queues were spread over every primary', async () => {
    const counts = await Promise.all(h.nodes.map(async (n) => ((await n.call('KEYS', 'emq:{lanes-*')) as Buffer[]).length));
    expect(counts.filter((c) => c > 0)).toHaveLength(3);
  });
});
