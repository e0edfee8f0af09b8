// Flows on a real Valkey Cluster (3 primaries), over glide and the gateway: a same-queue flow
// lands in its queue's slot in one call; a flow with children in other queues holds its parent
// in the parent's slot and lands each child in its own queue's slot, on other nodes; a refusal
// checked across slots writes nothing on any node; and the library's consumer (the model's
// claim, complete and pump, routed through the cluster) releases each parent when its last
// child completes.
import { describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { connectRest } from '../shared/connections/rest.js';
import { ConflictError, addFlow, mintId } from '../shared/index.js';
import { type CommandCaller, libraryConsumer } from './support/consumer.js';
import { onCluster } from './support/cluster-harness.js';
import { queueOnSlot, slotOf } from './support/slot.js';

type Consumer = ReturnType<typeof libraryConsumer>;
describe('flows on a Valkey Cluster (3 primaries)', () => {
  const h = onCluster();
  const viaCluster: CommandCaller = { call: (...args) => h.routed.call(...args) };

  /** The index of the one node holding every key of queue q (and each key in q's slot). */
  async function holder(q: string): Promise<number> {
    const held = await Promise.all(h.nodes.map(async (n) => ((await n.call('KEYS', `emq:{${q}}:*`)) as Buffer[]).map(String)));
    const holders = held.map((keys, i) => (keys.length > 0 ? i : -1)).filter((i) => i >= 0);
    expect(holders, q).toHaveLength(1);
    for (const k of held[holders[0]!]!) expect(slotOf(k), k).toBe(slotOf(`{${q}}`));
    return holders[0]!;
  }
  const dbsizes = () => Promise.all(h.nodes.map(async (n) => Number(await n.call('DBSIZE'))));

  async function lifeOf(conn: Connection, label: string) {
    // one queue in each third of the slots: each on its own primary
    const [q, c1, c2] = [100, 8_000, 15_000].map((slot) => queueOnSlot(`${label}-${Date.now().toString(36)}`, slot)) as [string, string, string];
    const [parentQ, one, two] = [q, c1, c2].map((x) => libraryConsumer(viaCluster, x)) as [Consumer, Consumer, Consumer];

    const same = await addFlow(conn, c1, { parent: { payload: 'S' }, children: [{ payload: 's1' }, { payload: 's2' }] });
    const cross = await addFlow(conn, q, {
      parent: { payload: 'P' },
      children: [
        { payload: 'a', queue: c1 },
        { payload: 'b', queue: c1, onFailure: 'ignore' },
        { payload: 'c' },
        { payload: new Uint8Array([0, 0xff]), queue: c2 },
      ],
    });
    expect([same.verdict, cross.verdict]).toEqual(['enqueued', 'enqueued']);
    const owners = await Promise.all([q, c1, c2].map(holder));
    expect(new Set(owners).size).toBe(3); // the children landed in other slots, on other nodes
    expect(String(await viaCluster.call('HGET', `emq:{${c2}}:job:${cross.children[3]!.id}`, 'parent_queue'))).toBe(q);
    expect(String(await viaCluster.call('GET', `emq:{${q}}:job:${cross.parent.id}:dependencies`))).toBe('4');

    // refused across slots (a child id in c2 names another job): nothing written on any node
    const taken = mintId();
    await viaCluster.call('HSET', `emq:{${c2}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
    const before = await dbsizes();
    await expect(
      addFlow(conn, q, {
        parent: { payload: 'P' },
        children: [
          { payload: 'x', queue: c1 },
          { id: taken, payload: 'y', queue: c2 },
        ],
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(await dbsizes()).toEqual(before);
    await viaCluster.call('DEL', `emq:{${c2}}:job:${taken}`);

    // the consumer: c1 serves the same-queue flow's children and two cross-queue children
    const served = [];
    for (let j = await one.claim(); j; j = await one.claim()) served.push(j);
    expect(served.map((j) => j.id).sort()).toEqual([...same.children.map((c) => c.id), cross.children[0]!.id, cross.children[1]!.id].sort());
    for (const j of served) expect(await one.complete(j.id, j.token)).toBe('ok');
    const sp = await one.claim(); // the same-queue parent, released by its last child
    expect(sp?.id).toBe(same.parent.id);
    expect(await one.complete(sp!.id, sp!.token)).toBe('ok');

    const cj = await parentQ.claim();
    expect(cj?.id).toBe(cross.children[2]!.id);
    expect(await parentQ.complete(cj!.id, cj!.token)).toBe('ok');
    const dj = await two.claim();
    expect(await two.complete(dj!.id, dj!.token)).toBe('ok');
    expect(await parentQ.claim()).toBeNull();
    expect(await one.pump()).toBe(2);
    expect(await parentQ.claim()).toBeNull();
    expect(await two.pump()).toBe(1);
    const parent = await parentQ.claim();
    expect([parent?.id, parent?.payload.toString()]).toEqual([cross.parent.id, 'P']);
    expect(await parentQ.complete(parent!.id, parent!.token)).toBe('ok');
  }

  it("over glide: each job in its queue's slot, the children on other nodes than their parent; every parent released by its last child", async () => {
    await lifeOf(h.glide, 'flow-glide');
  });

  it('over the gateway (REST): the same', async () => {
    await lifeOf(connectRest({ url: h.gateway.url, token: h.gateway.producer }), 'flow-rest');
  });
});
