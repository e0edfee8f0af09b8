// glide, the Node connection: enqueue() and enqueueMany() over 64 queues, on the single node
// (rows 5, 6) and on a private Valkey Cluster of PRIMARIES primaries, no replicas (rows 7, 8;
// scripts/cluster.ts: replication would only take CPU from the primaries).
import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { startCluster, type RunningCluster } from '../../scripts/cluster.js';
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { pendingKey } from '../../shared/index.js';
import { command } from '../../functions/gateway/glide-commands.js';
import { BATCHES_IN_FLIGHT, IN_FLIGHT, PRIMARIES, QUEUES, drivenRow, queuesOf, steps, type Bench } from '../common.js';
import { adopt, type Proc } from '../procs.js';
import { fmtInt, type Row } from '../report.js';

/** glide's coalescing cap (connectGlide's maxBatch), to try other settings. */
const MAX_BATCH = Number(process.env.BENCH_MAX_BATCH) || undefined;

/** Where the jobs go, which processes are Valkey, how to count the jobs and (the cluster) how they landed. */
interface Target {
  url: string;
  valkey: Proc[];
  count(queues: readonly string[]): Promise<number>;
  spread?(): Promise<string>;
}

export async function glideRows(bench: Bench): Promise<void> {
  const single: Target = { url: bench.server.url, valkey: bench.valkey, count: (queues) => bench.zcards(queues) };
  await bench.row('single', (r) => glideRow(r, single, 'single'));
  await bench.row('batch', (r) => glideRow(r, single, 'batch'));
  if (!(bench.runs('cluster-single') || bench.runs('cluster-batch')) || bench.aborting()) return;

  process.stderr.write(`bench: starting a Valkey Cluster (${PRIMARIES} primaries)...\n`);
  let cluster: { target: Target; close(): Promise<void> } | Error;
  try {
    cluster = await openCluster();
    bench.header.push(`cluster: ${PRIMARIES} primaries, no replicas, on loopback (scripts/cluster.ts), the same server binary`);
  } catch (err) {
    cluster = err as Error;
  }
  try {
    for (const [key, mode] of [
      ['cluster-single', 'single'],
      ['cluster-batch', 'batch'],
    ] as const) {
      await bench.row(key, async (r) => {
        if (cluster instanceof Error) throw cluster;
        await glideRow(r, cluster.target, mode);
      });
    }
  } finally {
    if (!(cluster instanceof Error)) await cluster.close();
  }
}

async function openCluster(): Promise<{ target: Target; close(): Promise<void> }> {
  const cluster: RunningCluster = await startCluster({ primaries: PRIMARIES, replicas: 0 });
  // stopAll() stops them on a bail: nothing is in front of them
  const stops = cluster.nodes.map((node) => adopt('valkey', node.pid, () => node.stop()));
  const stop = () => Promise.all(stops.map((s) => s())).then(() => undefined);
  let connection: GlideConnection;
  try {
    connection = await connectGlide(cluster.url);
  } catch (err) {
    await stop();
    throw err;
  }
  const client = connection.client as GlideClusterClient;
  const target: Target = {
    url: cluster.url,
    valkey: cluster.nodes.map((node, i) => ({ label: `valkey ${i + 1}`, pid: node.pid })),
    count: async (queues) => {
      let sum = 0;
      for (const q of queues) {
        const o = await command(connection.wire, ['ZCARD', pendingKey(q)]);
        if (!o.ok) throw new Error(o.error);
        sum += Number(o.value);
      }
      return sum;
    },
    spread: async () => {
      const sizes: string[] = [];
      for (const node of cluster.nodes) {
        const n = await client.customCommand(['DBSIZE'], { route: { type: 'routeByAddress', host: '127.0.0.1', port: node.port } });
        sizes.push(`:${node.port} ${fmtInt(Number(n))}`);
      }
      return `keys per primary (job rows and pending sets): ${sizes.join(', ')}`;
    },
  };
  return { target, close: () => connection.close().finally(stop) };
}

/** Glide round trips: each customCommand or exec is one; exec carries many commands. */
function countTrips(connection: GlideConnection): { calls: number; commands: number } {
  const trips = { calls: 0, commands: 0 };
  const client = connection.client as GlideClient;
  const custom = client.customCommand.bind(client);
  const exec = client.exec.bind(client);
  client.customCommand = (...args: Parameters<GlideClient['customCommand']>) => {
    trips.calls++;
    trips.commands++;
    return custom(...args);
  };
  client.exec = async (...args: Parameters<GlideClient['exec']>) => {
    trips.calls++;
    const replies = await exec(...args);
    trips.commands += replies?.length ?? 0;
    return replies;
  };
  return trips;
}

async function glideRow(row: Row, target: Target, mode: 'single' | 'batch'): Promise<void> {
  const connection = await connectGlide(MAX_BATCH ? { url: target.url, maxBatch: MAX_BATCH } : target.url);
  try {
    const queues = queuesOf(`bench-${row.key}`);
    const step = steps(connection, queues)[mode];
    const inFlight = mode === 'single' ? IN_FLIGHT : BATCHES_IN_FLIGHT;
    const { valkey } = target;
    let trips = { calls: 0, commands: 0 };
    const measuring = () => void (trips = countTrips(connection));
    const m = await drivenRow(row, {
      inFlight,
      step,
      procs: valkey,
      valkey,
      count: () => target.count(queues),
      where: `the ${QUEUES} pending sets`,
      measuring,
    });
    const perCall = trips.calls > 0 ? trips.commands / trips.calls : 0;
    row.notes.push(
      `${inFlight} calls in flight over ${QUEUES} queues, maxBatch ${MAX_BATCH ?? 'default (32)'}; ` +
        `${fmtInt(trips.calls / m.seconds)} glide calls/s carrying ${perCall.toFixed(1)} commands each; latency per call`,
    );
    if (target.spread) row.notes.push(await target.spread());
  } finally {
    await connection.close();
  }
}
