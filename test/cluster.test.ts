// A real Valkey Cluster (3 primaries, a replica each, on loopback): enqueues across 100
// queues, byte-exact, over glide and over the gateway. A queue's keys share one slot.
import { GlideClusterClient } from '@valkey/valkey-glide';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../scripts/cluster.js';
import type { Connection } from '../shared/connection.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectRest } from '../shared/connections/rest.js';
import { enqueue, enqueueMany, mintId, type Job } from '../shared/index.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

describe('Valkey Cluster (3 primaries, 3 replicas)', () => {
  let cluster: RunningCluster;
  let glide: GlideConnection;
  let gateway: GatewayProcess;
  let admin: GlideConnection;

  beforeAll(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 1 });
    glide = await connectGlide(cluster.url);
    admin = await connectGlide(cluster.url);
    gateway = await startGatewayProcess(cluster.url);
  }, 120_000);
  afterAll(async () => {
    await glide?.close();
    await admin?.close();
    if (gateway) expect(await gateway.stop()).toBe(0);
    await cluster?.stop();
  });

  const get = async (...args: string[]) => {
    const outcome = await admin.command(args);
    if (!outcome.ok) throw new Error(outcome.error);
    return outcome.value;
  };

  /** Enqueues across 100 queues (singles and a batch each) and checks every byte and count. */
  async function acrossQueues(conn: Connection, label: string) {
    const run = `${label}-${Date.now().toString(36)}`;
    const queues = Array.from({ length: 100 }, (_, i) => `${run}-${i}`);
    const jobsOf = (q: number): Job[] => [
      { id: mintId(), payload: Uint8Array.from({ length: 256 }, (_, i) => (i + q) % 256) },
      { id: mintId(), payload: `text for queue ${q} ✓` },
      { id: mintId(), payload: new Uint8Array([0xff, 0x00, 0xfe]) },
    ];
    const all = await Promise.all(
      queues.map(async (queue, q) => {
        const [single, ...batch] = jobsOf(q);
        expect(await enqueue(conn, queue, single!.id, single!.payload)).toBe('enqueued');
        const results = await enqueueMany(conn, queue, [...batch, { id: single!.id, payload: 'again' }]);
        expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'duplicate']);
        return { queue, jobs: [single!, ...batch] };
      }),
    );
    const slots = new Set<number>();
    for (const { queue, jobs } of all) {
      expect(Number(await get('ZCARD', `emq:{${queue}}:pending`))).toBe(3);
      const slot = Number(await get('CLUSTER', 'KEYSLOT', `emq:{${queue}}:pending`));
      slots.add(slot);
      for (const job of jobs) {
        expect(Number(await get('CLUSTER', 'KEYSLOT', `emq:{${queue}}:job:${job.id}`))).toBe(slot);
        const stored = (await get('HGET', `emq:{${queue}}:job:${job.id}`, 'payload')) as Uint8Array;
        const want = typeof job.payload === 'string' ? new TextEncoder().encode(job.payload) : job.payload;
        expect(Buffer.compare(Buffer.from(stored), Buffer.from(want)), `${queue} ${job.id}`).toBe(0);
      }
    }
    return slots;
  }

  it('the cluster is whole, and glide talks to it as a cluster', async () => {
    expect(glide.client).toBeInstanceOf(GlideClusterClient);
    const info = String(new TextDecoder().decode((await get('CLUSTER', 'INFO')) as Uint8Array));
    expect(info).toMatch(/cluster_state:ok/);
    expect(info).toMatch(/cluster_size:3/);
  });

  it('100 queues over glide: byte-exact, each queue in one slot, the queues spread over the slots', async () => {
    const slots = await acrossQueues(glide, 'glide');
    expect(slots.size).toBeGreaterThan(50);
  }, 60_000);

  it('100 queues over the gateway (REST): byte-exact, each queue in one slot', async () => {
    const rest = connectRest({ url: gateway.url, token: gateway.producer });
    const slots = await acrossQueues(rest, 'rest');
    expect(slots.size).toBeGreaterThan(50);
  }, 60_000);
});
