// The listings (issue 28) on a real Valkey Cluster (3 primaries), over glide and through the
// gateway with a producer token: the queue walk visits every primary in turn (its cursor
// <slot>:<node cursor>, nodes in the order of their first slot), so collecting every page
// finds every queue, whichever node holds it; a job page's keys are all in its queue's slot.
import { describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { connectRest } from '../shared/connections/rest.js';
import { InvalidArgumentError, enqueue, enqueueGrouped, listJobs, mintId, queueInfo, schedule } from '../shared/index.js';
import { listQueues, type QueueSummary } from '../shared/queue-list.js';
import { onCluster } from './support/cluster-harness.js';
import { slotOf } from './support/slot.js';

const A = 'PRT0KHTOWnGLuC';

describe('the listings on a Valkey Cluster (3 primaries)', () => {
  const h = onCluster();
  const text = (v: unknown) => (v as Buffer[]).map(String);

  /** Each node's queues (by its keys), to check that every primary holds some. */
  async function holders(names: string[]): Promise<number[]> {
    return Promise.all(
      names.map(async (q) => {
        const held = await Promise.all(h.nodes.map(async (n) => text(await n.call('KEYS', `emq:{${q}}:*`)).length));
        return held.findIndex((n) => n > 0);
      }),
    );
  }

  async function walk(conn: Connection, count: number): Promise<{ seen: QueueSummary[]; cursors: string[] }> {
    const seen: QueueSummary[] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listQueues(conn, { count, ...(cursor !== undefined && { cursor }) });
      const names = page.queues.map((q) => q.name);
      expect(names).toEqual([...new Set(names)].sort());
      seen.push(...page.queues);
      cursor = page.cursor;
      if (cursor !== undefined) cursors.push(cursor);
      expect(cursors.length).toBeLessThan(10_000);
    } while (cursor !== undefined);
    return { seen, cursors };
  }

  it('collecting every page finds every queue on every primary, over glide and over REST (a producer token)', async () => {
    const made = Array.from({ length: 30 }, (_, i) => `lc-${Date.now().toString(36)}-${i}`);
    for (const [i, q] of made.entries()) {
      if (i % 3 === 0) await enqueue(h.glide, q, mintId(), 'x');
      else if (i % 3 === 1) await enqueueGrouped(h.glide, q, A, mintId(), 'x');
      else await schedule(h.glide, q, mintId(), 'x', { inMs: 3_600_000 });
    }
    expect(new Set(await holders(made))).toEqual(new Set([0, 1, 2]));
    const rest = connectRest({ url: h.gateway.url, token: h.gateway.producer });
    try {
      for (const [name, conn] of [
        ['glide', h.glide],
        ['rest', rest],
      ] as const) {
        for (const count of [3, 1000]) {
          const { seen, cursors } = await walk(conn, count);
          expect(new Set(seen.map((s) => s.name).filter((n) => made.includes(n))), `${name} count ${count}`).toEqual(new Set(made));
          // the walk went node by node, in the order of their first slots: 0, 5461, 10923 (a node
          // done in one step shows only in the next node's first cursor)
          const nodes = [...new Set(cursors.map((c) => Number(c.split(':')[0])))];
          expect(nodes, `${name} count ${count}`).toEqual(count === 3 ? [0, 5461, 10923] : [5461, 10923]);
          for (const s of seen.filter((x) => x.name === made[2])) expect(s.counts).toEqual((await queueInfo(conn, s.name)).counts);
        }
      }
      // a single server's cursor means nothing on a cluster
      await expect(listQueues(h.glide, { cursor: '12' })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(listQueues(rest, { cursor: '12' })).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await rest.close();
    }
  });

  it("a job page reads only its queue's slot, on whichever node holds it, over glide and REST", async () => {
    const rest = connectRest({ url: h.gateway.url, token: h.gateway.producer });
    try {
      for (const conn of [h.glide, rest]) {
        for (let i = 0; i < 3; i++) {
          const q = `lcj-${Date.now().toString(36)}-${i}`;
          const ids = [mintId(), mintId(), mintId()];
          for (const id of ids) await enqueue(conn, q, id, 'x');
          const seen: string[] = [];
          let cursor: string | undefined;
          do {
            const page = await listJobs(conn, q, { limit: 1, ...(cursor !== undefined && { cursor }) });
            seen.push(...page.jobs.map((j) => j.id));
            cursor = page.cursor;
          } while (cursor !== undefined);
          expect(seen).toEqual([...ids].reverse());
          expect(slotOf(`emq:{${q}}:pending`)).toBe(slotOf(`{${q}}`));
        }
      }
    } finally {
      await rest.close();
    }
  });
});
