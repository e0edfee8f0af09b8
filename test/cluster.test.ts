// A real Valkey Cluster (3 primaries, a replica each, on loopback): enqueues across 100
// queues, byte-exact, over glide and over the gateway. A queue's keys share one slot.
import { GlideClusterClient } from '@valkey/valkey-glide';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../scripts/cluster.js';
import type { Connection } from '../shared/connection.js';
import { command } from '../functions/gateway/glide-commands.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectRest } from '../shared/connections/rest.js';
import { createMinter, enqueue, enqueueMany, enqueueNew, mintId, type Job } from '../shared/index.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { queueOnSlot } from './support/slot.js';

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
    const outcome = await command(admin.wire, args);
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

  it('collisions (two minters on one node id, a frozen clock), over glide and the gateway: every job lands once, never answered duplicate', async () => {
    const rest = connectRest({ url: gateway.url, token: gateway.producer });
    for (const conn of [glide, rest] as Connection[]) {
      const q = `collide-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
      let mints = 0;
      const [a, b] = [0, 1].map(() => {
        const m = createMinter({ node: 9, now: () => Date.parse('2026-06-01T12:00:00Z') });
        return () => (mints++, m());
      }) as [() => string, () => string];
      const payloads = Array.from({ length: 120 }, (_, i) => `job-${i}`);
      const singles = await Promise.all(payloads.map((p, i) => enqueueNew(conn, q, p, i % 2 ? a : b)));
      const batches = await Promise.all(
        [a, b].map((mint, m) =>
          enqueueMany(
            conn,
            q,
            Array.from({ length: 30 }, (_, i) => ({ payload: `m${m}-${i}` })),
            mint,
          ),
        ),
      );
      for (const r of batches.flat()) expect(r.verdict).toBe('enqueued');
      const ids = [...singles, ...batches.flat().map((r) => r.id)];
      expect(new Set(ids).size).toBe(180);
      expect(mints).toBeGreaterThan(180); // collisions happened, and were cured
      expect(Number(await get('ZCARD', `emq:{${q}}:pending`))).toBe(180);
    }
    await rest.close();
  });

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
      const o = await command(c.wire, args);
      if (!o.ok) throw new Error(`${port} ${args[0]}: ${o.error}`);
      return o.value;
    };
    return { c, call, text: async (...args: string[]) => new TextDecoder().decode((await call(...args)) as Uint8Array) };
  }

  it("valkey-cli --cluster reshard of a busy queue's slot: 0 enqueues failed, 0 lost, 0 doubled", { timeout: 120_000 }, async () => {
    const nodes = await Promise.all(cluster.nodes.map((n) => node(n.port)));
    const ids = await Promise.all(nodes.map(async (n) => (await n.text('CLUSTER', 'MYID')).trim()));
    // reshard --cluster-slots 1 moves the source's lowest slot: put the busy queue there
    const ranges = (await nodes[0]!.text('CLUSTER', 'NODES'))
      .split('\n')
      .find((l) => l.includes('myself'))!
      .split(' ')
      .slice(8);
    const slot = Math.min(...ranges.map((r) => Number(r.split('-')[0])));
    const queue = queueOnSlot(`hot-${Date.now().toString(36)}`, slot);
    expect(Number(await nodes[1]!.call('CLUSTER', 'KEYSLOT', `emq:{${queue}}:pending`))).toBe(slot);
    const [src, dst] = [nodes[0]!, nodes[1]!];

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

      // let the slot fill up, so the move has keys to carry while new ones keep coming
      await new Promise((r) => setTimeout(r, 1_500));
      const before = acked.size;
      const reshard = await promisify(execFile)(
        cluster.cli,
        [
          '--cluster',
          'reshard',
          `127.0.0.1:${cluster.nodes[0]!.port}`,
          '--cluster-from',
          ids[0]!,
          '--cluster-to',
          ids[1]!,
          '--cluster-slots',
          '1',
          '--cluster-yes',
        ],
        { timeout: 90_000 },
      );
      expect(reshard.stdout).toContain(`Moving slot ${slot} from`);
      await new Promise((r) => setTimeout(r, 500));
      running = false;
      await Promise.all(loads);

      expect(before).toBeGreaterThan(100);
      expect(failed).toEqual([]);
      expect(acked.size).toBeGreaterThan(before);
      expect([...acked.values()].every((v) => v === 'enqueued')).toBe(true);
      // nothing lost, nothing doubled: the pending set is exactly the acknowledged ids
      const members = ((await dst.call('ZRANGE', `emq:{${queue}}:pending`, '0', '-1')) as Uint8Array[]).map((m) => new TextDecoder().decode(m));
      expect(members.length).toBe(acked.size);
      expect(new Set(members)).toEqual(new Set(acked.keys()));
      expect(Number(await dst.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)))).toBe(acked.size + 1); // rows + the pending set
      expect(Number(await src.call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)))).toBe(0);
      console.log(`reshard: ${acked.size} acknowledged (${before} before the move), 0 failed, slot ${slot} moved with its keys`);
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

  /**
   * Kills (SIGKILL) a primary that still has a replica, under 8 workers enqueueing into a
   * queue on its slots, restarts it once its replica took over, and counts what came back: acknowledged ids, the longest single
   * enqueue, and acknowledged jobs missing after the replica took over.
   */
  let runs = 0;
  async function killUnderLoad(url: string, label: string) {
    const probe = await connectGlide(cluster.url);
    const nodesOut = await command(probe.wire, ['CLUSTER', 'NODES']);
    const lines = (nodesOut.ok ? new TextDecoder().decode(nodesOut.value as Uint8Array) : '').split('\n').map((l) => l.split(' '));
    // "<id> <ip:port@bus> <flags> <primary id> … <link> <slot ranges>": a live primary with a live replica
    const victim = lines.find(
      (f) =>
        f[2]?.includes('master') &&
        !f[2].includes('fail') &&
        f.length > 8 &&
        lines.some((r) => r[3] === f[0] && !r[2]!.includes('fail') && r[7] === 'connected'),
    )!;
    expect(victim, 'a primary with a replica').toBeDefined();
    // a slot no earlier run used (a promoted replica can be picked again), so its keys are this run's alone
    const slot = Number(victim[8]!.split('-')[0]) + runs++;
    const queue = queueOnSlot(`${label}-${Date.now().toString(36)}`, slot);
    const primary = cluster.nodes.find((n) => n.port === Number(/:(\d+)@/.exec(victim[1]!)?.[1]))!;
    const glide = await connectGlide({ url, requestTimeoutMs: 1_500, connectTimeoutMs: 500 });

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
            if (!(err instanceof Error) || !/connection|valkey|CLUSTERDOWN|TRYAGAIN|MOVED/i.test(`${(err as { code?: string }).code} ${err.message}`))
              throw err;
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
    const started = Date.now();
    process.kill(primary.pid, 'SIGKILL');
    // once its replica is promoted (cluster-node-timeout is 2 s), the old primary comes back,
    // as a replica of the new one (until then the new primary has no replica to WAIT for).
    // Not sooner: a primary without persistence that restarts before the failover comes
    // back empty, keeps its slots, and its replica copies the emptiness.
    const replicaId = lines.find((r) => r[3] === victim[0] && r[7] === 'connected')![0]!;
    for (;;) {
      const now = await probe.client.customCommand(['CLUSTER', 'NODES'], { route: 'randomNode' }).catch(() => undefined);
      const table = now === undefined ? '' : new TextDecoder().decode(now as Uint8Array);
      const line = table.split('\n').find((l) => l.startsWith(`${replicaId} `));
      if (line?.split(' ')[2]?.includes('master')) break;
      if (Date.now() - started > 30_000) throw new Error('the replica was not promoted within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    await primary.restart();
    await new Promise((r) => setTimeout(r, Math.max(1_000, 8_000 - (Date.now() - started))));
    running = false;
    await Promise.all(loads);

    const read = async (...args: string[]) => {
      const o = await (probe.client as GlideClusterClient).customCommand(args, { route: { type: 'primarySlotKey', key: `emq:{${queue}}:pending` } });
      return o as unknown;
    };
    const members = ((await read('ZRANGE', `emq:{${queue}}:pending`, '0', '-1')) as Uint8Array[]).map((m) => new TextDecoder().decode(m));
    const slotKeys = Number(await read('CLUSTER', 'COUNTKEYSINSLOT', String(slot)));
    const present = new Set(members);
    const lost = acked.filter((id) => !present.has(id));
    const attempted = new Set(acked);
    const unacknowledged = members.filter((m) => !attempted.has(m));
    await glide.close();
    await probe.close();
    const summary = `${acked.length} acknowledged, ${retriedIds} needed a retry, longest enqueue ${longestGapMs} ms, ${lost.length} acknowledged but lost`;
    return { before, acked, retriedIds, longestGapMs, members, slotKeys, lost, unacknowledged, summary };
  }

  function expectResumedAndWhole(r: Awaited<ReturnType<typeof killUnderLoad>>) {
    expect(r.before).toBeGreaterThan(0);
    expect(r.acked.length).toBeGreaterThan(r.before + 100); // enqueues resumed after the kill
    expect(r.retriedIds).toBeGreaterThan(0); // the failover was felt
    expect(r.longestGapMs).toBeLessThan(30_000);
    // every job in the queue is one the load sent (retries kept their id: no second job),
    // and every row has its pending entry (the slot holds the rows and the pending set)
    expect(r.unacknowledged.length).toBeLessThanOrEqual(8); // at most one unacknowledged job per worker
    expect(r.slotKeys).toBe(r.members.length + 1);
  }

  it('enqueues resume within a bounded time; retries keep the id; rows and pending entries stay together', { timeout: 90_000 }, async () => {
    const r = await killUnderLoad(cluster.url, 'failover');
    expectResumedAndWhole(r);
    // replication is asynchronous: writes the old primary acknowledged just before it died
    // may never have reached the replica. Measured and shown here, not hidden.
    console.log(`failover: ${r.summary}`);
  });

  it('with ?wait=1 (WAIT for one replica after each write), an acknowledged job survives the failover', { timeout: 90_000 }, async () => {
    const r = await killUnderLoad(`${cluster.url}&wait=1&wait_timeout_ms=500`, 'durable');
    expectResumedAndWhole(r);
    console.log(`failover with wait=1: ${r.summary}`);
    expect(r.lost).toEqual([]);
  });
});
