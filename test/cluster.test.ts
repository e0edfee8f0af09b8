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

describe('a live slot migration under load', () => {
  let cluster: RunningCluster;
  beforeAll(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 0 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  /** A direct (non-cluster) client to one node, for the migration's own commands. */
  async function node(port: number) {
    const c = await connectGlide(`redis://127.0.0.1:${port}`);
    const call = async (...args: string[]) => {
      const o = await c.command(args);
      if (!o.ok) throw new Error(`${port} ${args[0]}: ${o.error}`);
      return o.value;
    };
    return { c, call, text: async (...args: string[]) => new TextDecoder().decode((await call(...args)) as Uint8Array) };
  }

  it('moving a busy queue\'s slot: 0 enqueues failed, 0 lost, 0 doubled', { timeout: 90_000 }, async () => {
    const queue = `hot-${Date.now().toString(36)}`;
    const nodes = await Promise.all(cluster.nodes.map((n) => node(n.port)));
    const slot = Number(await nodes[0]!.call('CLUSTER', 'KEYSLOT', `emq:{${queue}}:pending`));
    const ids = await Promise.all(nodes.map(async (n) => (await n.text('CLUSTER', 'MYID')).trim()));
    // the owner of the slot, and another primary to move it to
    const owner = await (async () => {
      for (const [i, n] of nodes.entries()) {
        const mine = (await n.text('CLUSTER', 'NODES')).split('\n').find((l) => l.includes('myself'))!;
        const ranges = mine.split(' ').slice(8);
        if (ranges.some((r) => { const [a, b = a] = r.split('-').map(Number); return slot >= a! && slot <= b!; })) return i;
      }
      throw new Error('no owner');
    })();
    const target = (owner + 1) % nodes.length;
    const src = nodes[owner]!;
    const dst = nodes[target]!;

    const glide = await connectGlide(cluster.url);
    const rest = await startGatewayProcess(cluster.url);
    let running = true;
    try {
      const viaRest = connectRest({ url: rest.url, token: rest.producer });
      const acked = new Map<string, string>();
      const failed: string[] = [];
      const load = async (conn: Connection, worker: number) => {
        let n = 0;
        while (running) {
          const id = mintId();
          try {
            const verdict = await enqueue(conn, queue, id, `w${worker} #${n++}`);
            acked.set(id, verdict);
          } catch (err) {
            failed.push(`${id}: ${(err as Error).message}`);
          }
        }
      };
      const loads = [...Array.from({ length: 12 }, (_, w) => load(glide, w)), ...Array.from({ length: 4 }, (_, w) => load(viaRest, 100 + w))];

      await new Promise((r) => setTimeout(r, 300));
      // the steps valkey-cli --cluster reshard takes, for this one slot, slowly
      await dst.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', ids[owner]!);
      await src.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', ids[target]!);
      let moved = 0;
      for (let round = 0; round < 400; round++) {
        const keys = ((await src.call('CLUSTER', 'GETKEYSINSLOT', String(slot), '20')) as Uint8Array[]).map((k) => new TextDecoder().decode(k));
        if (keys.length === 0 && round > 10) break;
        if (keys.length > 0) {
          await src.call('MIGRATE', '127.0.0.1', String(cluster.nodes[target]!.port), '', '0', '5000', 'KEYS', ...keys);
          moved += keys.length;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      for (const n of nodes) await n.call('CLUSTER', 'SETSLOT', String(slot), 'NODE', ids[target]!);
      await new Promise((r) => setTimeout(r, 500));
      running = false;
      await Promise.all(loads);

      expect(moved).toBeGreaterThan(0);
      expect(failed).toEqual([]);
      expect(acked.size).toBeGreaterThan(100);
      expect([...acked.values()].every((v) => v === 'enqueued')).toBe(true);
      // nothing lost, nothing doubled: the pending set is exactly the acknowledged ids
      const members = ((await dst.call('ZRANGE', `emq:{${queue}}:pending`, '0', '-1')) as Uint8Array[]).map((m) => new TextDecoder().decode(m));
      expect(members.length).toBe(acked.size);
      expect(new Set(members)).toEqual(new Set(acked.keys()));
      expect(Number(await dst.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)))).toBe(acked.size + 1); // rows + the pending set
      expect(Number(await src.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)))).toBe(0);

    } finally {
      running = false;
      await glide.close();
      expect(await rest.stop()).toBe(0);
      await Promise.all(nodes.map((n) => n.c.close()));
    }
  });
});

describe('a primary killed, its replica promoted', () => {
  let cluster: RunningCluster;
  beforeAll(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 1 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('enqueues resume within a bounded time; retries keep the id; rows and pending entries stay together', { timeout: 90_000 }, async () => {
    const queue = `failover-${Date.now().toString(36)}`;
    const glide = await connectGlide({ url: cluster.url, requestTimeoutMs: 1_000, connectTimeoutMs: 500 });
    const probe = await connectGlide(cluster.url);
    const slot = Number(((await probe.command(['CLUSTER', 'KEYSLOT', `emq:{${queue}}:pending`])) as { value: unknown }).value);
    // which primary serves the slot, from CLUSTER NODES: "<id> <ip:port@bus> <flags> … <slot ranges>"
    const nodesOut = await probe.command(['CLUSTER', 'NODES']);
    const table = nodesOut.ok ? new TextDecoder().decode(nodesOut.value as Uint8Array) : '';
    const line = table.split('\n').find((l) => {
      const f = l.split(' ');
      return f[2]?.includes('master') && f.slice(8).some((r) => { const [a, b = a] = r.split('-').map(Number); return slot >= a! && slot <= b!; });
    });
    const port = Number(/:(\d+)@/.exec(line ?? '')?.[1]);
    const primary = cluster.nodes.find((n) => n.port === port);
    expect(primary).toBeDefined();

    const acked: string[] = [];
    let retriedIds = 0;
    let longestGapMs = 0;
    let running = true;
    const load = async (worker: number) => {
      let n = 0;
      while (running) {
        const id = mintId();
        const started = Date.now();
        // a client's contract: on a connection error, send the same job again (same id)
        for (let attempt = 0; ; attempt++) {
          try {
            await enqueue(glide, queue, id, `w${worker} #${n}`);
            break;
          } catch (err) {
            if (!(err instanceof Error) || !/connection|valkey|CLUSTERDOWN|TRYAGAIN|MOVED/i.test(`${(err as { code?: string }).code} ${err.message}`)) throw err;
            if (attempt === 0) retriedIds++;
            if (Date.now() - started > 30_000) throw new Error(`no recovery within 30 s: ${err.message}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        longestGapMs = Math.max(longestGapMs, Date.now() - started);
        acked.push(id);
        n++;
      }
    };
    const loads = Array.from({ length: 8 }, (_, w) => load(w));
    await new Promise((r) => setTimeout(r, 500));
    const before = acked.length;
    process.kill(primary!.pid, 'SIGKILL');
    // run until well after the promotion (cluster-node-timeout is 2 s)
    await new Promise((r) => setTimeout(r, 8_000));
    running = false;
    await Promise.all(loads);

    expect(before).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(before + 100); // enqueues resumed after the kill
    expect(retriedIds).toBeGreaterThan(0); // the failover was felt
    expect(longestGapMs).toBeLessThan(30_000);
    const members = await (async () => {
      const o = await probe.command(['ZRANGE', `emq:{${queue}}:pending`, '0', '-1']);
      return o.ok ? (o.value as Uint8Array[]).map((m) => new TextDecoder().decode(m)) : [];
    })();
    // every job in the queue is one the load sent (retries kept their id: no second job),
    // and every row has its pending entry (the slot holds the rows and the pending set)
    const attempted = new Set(acked);
    const inFlightAtKill = members.filter((m) => !attempted.has(m));
    expect(inFlightAtKill.length).toBeLessThanOrEqual(8); // at most one unacknowledged job per worker
    const slotKeys = Number(
      await (probe.client as GlideClusterClient).customCommand(['CLUSTER', 'COUNTKEYSINSLOT', String(slot)], {
        route: { type: 'primarySlotKey', key: `emq:{${queue}}:pending` },
      }),
    );
    expect(slotKeys).toBe(members.length + 1);
    // replication is asynchronous: writes the old primary acknowledged just before it died
    // may never have reached the replica. Measured and shown here, not hidden.
    const present = new Set(members);
    const lost = acked.filter((id) => !present.has(id));
    console.log(`failover: ${acked.length} acknowledged, ${retriedIds} needed a retry, longest enqueue ${longestGapMs} ms, ${lost.length} acknowledged but lost`);
    await glide.close();
    await probe.close();
  });
});
