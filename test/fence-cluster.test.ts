// The `{emq}:version` fence on a Valkey Cluster (3 primaries on loopback, scripts/cluster.ts):
// the key is read on the primary that owns its slot and nowhere else; another value there
// refuses writes to every queue, whichever node holds it, over glide, through the gateway
// and from emq enqueue, with nothing written on any node; deleted, they all recover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../scripts/cluster.js';
import type { Connection } from '../shared/connection.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectRest } from '../shared/connections/rest.js';
import { enqueue, enqueueMany, mintId, WireMismatchError } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

const KEY = '{emq}:version';
const OURS = 'echomq:3.0.0';
const OTHER = 'echomq:2.0.0';
const A_PERIOD = 1_100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the {emq}:version fence on a Valkey Cluster (3 primaries)', () => {
  let cluster: RunningCluster;
  let nodes: Admin[];
  let owner: Admin;
  let glide: GlideConnection;
  let gateway: GatewayProcess;
  let rest: Connection;
  /** 30 queues, so that every primary holds some. */
  const queues = Array.from({ length: 30 }, (_, i) => `${freshQueue('fenced')}-${i}`);

  beforeAll(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 0 });
    nodes = await Promise.all(cluster.nodes.map((n) => connectAdmin(n.url)));
    // the owner answers GET {emq}:version; the others answer MOVED
    const answers = await Promise.all(
      nodes.map((n) =>
        n.call('GET', KEY).then(
          () => true,
          (e: Error) => (/\bmoved\b/i.test(e.message) ? false : Promise.reject(e)),
        ),
      ),
    );
    expect(answers.filter(Boolean)).toHaveLength(1);
    owner = nodes[answers.indexOf(true)]!;
  }, 120_000);
  afterAll(async () => {
    await glide?.close();
    if (gateway) expect(await gateway.stop()).toBe(0);
    for (const n of nodes ?? []) n.close();
    await cluster?.stop();
  });

  /** Every node's DBSIZE and change counter, and the key on its owner. */
  const written = async () => ({
    nodes: await Promise.all(
      nodes.map(async (n) => ({
        dbsize: Number(await n.call('DBSIZE')),
        changes: Number(/rdb_changes_since_last_save:(\d+)/.exec(String(await n.text('INFO', 'persistence')))?.[1]),
      })),
    ),
    version: (await owner.call('GET', KEY)) as Buffer | null,
  });

  /** One job per queue over `conn`, and a batch of two in the first: each its verdict or error code. */
  const tryAll = async (conn: Connection) => {
    const one = await Promise.all(queues.map((q) => enqueue(conn, q, mintId(), q).catch((e: { code: string }) => e.code)));
    const batch = await enqueueMany(conn, queues[0]!, [
      { id: mintId(), payload: 'a' },
      { id: mintId(), payload: 'b' },
    ]).then(
      () => 'enqueued',
      (e: { code: string }) => e.code,
    );
    return [...new Set([...one, batch])];
  };

  it('the key is read on the primary that owns its slot, never on the others, by glide and by the gateway', async () => {
    for (const n of nodes) await n.call('CONFIG', 'RESETSTAT');
    glide = await connectGlide(cluster.url);
    gateway = await startGatewayProcess(cluster.url);
    rest = connectRest({ url: gateway.url, token: gateway.producer });
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200); // the gateway connects on its first call
    await sleep(A_PERIOD);
    const gets = await Promise.all(nodes.map((n) => n.calls('get')));
    expect(gets.filter((g) => g > 0)).toHaveLength(1);
    expect(await owner.calls('get')).toBeGreaterThanOrEqual(2 * 2); // two processes, the first read and the periodic ones
    // every primary owns some of the queues (a node answers MOVED for a key it does not own)
    const owns = (n: Admin, q: string) =>
      n.call('EXISTS', `emq:{${q}}:pending`).then(
        () => true,
        () => false,
      );
    for (const n of nodes) expect((await Promise.all(queues.map((q) => owns(n, q)))).includes(true)).toBe(true);
  });

  it('absent: writes to every queue land over glide and REST, and the key stays absent', async () => {
    expect(await tryAll(glide)).toEqual(['enqueued']);
    expect(await tryAll(rest)).toEqual(['enqueued']);
    expect(await owner.call('EXISTS', KEY)).toBe(0);
  });

  it('another value: every queue on every node refuses (glide, the gateway, emq enqueue), nothing is written anywhere, the admin scope works', async () => {
    await owner.call('SET', KEY, OTHER);
    await sleep(A_PERIOD);
    const before = await written();
    expect(await tryAll(glide)).toEqual(['wire_mismatch']);
    expect(await tryAll(rest)).toEqual(['wire_mismatch']);
    const fresh = await connectGlide(cluster.url);
    try {
      expect(await tryAll(fresh)).toEqual(['wire_mismatch']);
      const err = await enqueue(fresh, queues[2]!, mintId(), 'x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WireMismatchError);
      expect(err).toMatchObject({ expected: OURS, found: `"${OTHER}"` });
    } finally {
      await fresh.close();
    }
    const cli = await emq(['enqueue', queues[1]!], 'cli', { VALKEY_URL: cluster.url });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`"${OTHER}"`);
    expect(cli.stderr).toContain(OURS);
    const ping = await fetch(gateway.url, { method: 'POST', body: '["PING"]', headers: { Authorization: `Bearer ${gateway.producer}` } });
    expect(ping.status).toBe(503);
    expect(await ping.json()).toMatchObject({ code: 'wire_mismatch', expected: OURS, found: `"${OTHER}"` });
    const look = await fetch(gateway.url, { method: 'POST', body: JSON.stringify(['GET', KEY]), headers: { Authorization: `Bearer ${gateway.admin}` } });
    expect(await look.json()).toEqual({ result: OTHER });
    expect(await written()).toEqual(before);
  });

  it('deleted: everything recovers; set to ours, then another value with every connection of ours killed on every node: refused, nothing lands; recovery', async () => {
    await owner.call('DEL', KEY);
    await sleep(A_PERIOD);
    expect(await tryAll(glide)).toEqual(['enqueued']);
    expect(await tryAll(rest)).toEqual(['enqueued']);

    await owner.call('SET', KEY, OURS);
    await sleep(A_PERIOD);
    expect(await tryAll(glide)).toEqual(['enqueued']);
    await owner.call('SET', KEY, OTHER);
    for (const n of nodes) {
      const list = String(await n.text('CLIENT', 'LIST'));
      for (const line of list.split('\n').filter((l) => / name=emq /.test(l))) await n.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(line)![1]!);
    }
    await sleep(A_PERIOD);
    const before = await written();
    expect(await tryAll(glide)).toEqual(['wire_mismatch']);
    expect(await tryAll(rest)).toEqual(['wire_mismatch']);
    expect(await written()).toEqual(before);

    await owner.call('DEL', KEY);
    await sleep(A_PERIOD);
    expect(await tryAll(glide)).toEqual(['enqueued']);
    expect(await tryAll(rest)).toEqual(['enqueued']);
    expect(await owner.call('EXISTS', KEY)).toBe(0);
  });
});
