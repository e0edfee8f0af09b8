// glide: enqueue() and enqueueMany() over 64 queues, on the single node and on a private Valkey
// Cluster of PRIMARIES primaries, no replicas (they would only take CPU from the primaries).
import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { startCluster } from '../../scripts/cluster.js';
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { pendingKey } from '../../shared/index.js';
import { command } from '../../functions/gateway/glide-commands.js';
import { BATCHES_IN_FLIGHT, IN_FLIGHT, PRIMARIES, QUEUES, drivenRow, queuesOf, steps, type Bench } from '../common.js';
import { adopt, type Proc } from '../procs.js';
import { fmtInt, type Row } from '../report.js';

/** Where the jobs go: its URL, its Valkey processes, and (the cluster) each primary's port. */
type Target = { url: string; valkey: Proc[]; ports?: number[] };

export async function glideRows(bench: Bench): Promise<void> {
  const single: Target = { url: bench.server.url, valkey: bench.valkey };
  await bench.row('single', (r) => glideRow(r, single, 'single'));
  await bench.row('batch', (r) => glideRow(r, single, 'batch'));
  if (!(bench.runs('cluster-single') || bench.runs('cluster-batch')) || bench.aborting()) return;
  process.stderr.write(`bench: starting a Valkey Cluster (${PRIMARIES} primaries)...\n`);
  const cluster = startCluster({ primaries: PRIMARIES, replicas: 0 }).then((c) => {
    bench.header.push(`cluster: ${PRIMARIES} primaries, no replicas, on loopback (scripts/cluster.ts), the same server binary`);
    // stopAll() stops them on a bail: nothing is in front of them
    const stops = c.nodes.map((node) => adopt('valkey', node.pid, () => node.stop()));
    const valkey = c.nodes.map((node, i) => ({ label: `valkey ${i + 1}`, pid: node.pid }));
    return { target: { url: c.url, valkey, ports: c.nodes.map((n) => n.port) }, stop: () => Promise.all(stops.map((s) => s())) };
  });
  cluster.catch(() => undefined); // its failure is each cluster row's, when it runs
  for (const [key, mode] of [
    ['cluster-single', 'single'],
    ['cluster-batch', 'batch'],
  ] as const) {
    await bench.row(key, async (r) => glideRow(r, (await cluster).target, mode));
  }
  await cluster.then(
    (c) => c.stop(),
    () => undefined,
  );
}

/** Glide round trips: each customCommand or exec is one; exec carries many commands. */
function countTrips(connection: GlideConnection): { calls: number; commands: number } {
  const trips = { calls: 0, commands: 0 };
  const client = connection.client as GlideClient;
  const [custom, exec] = [client.customCommand.bind(client), client.exec.bind(client)];
  client.customCommand = (...args) => (trips.calls++, trips.commands++, custom(...args));
  client.exec = async (...args) => {
    const replies = await exec(...args);
    trips.calls++;
    trips.commands += replies?.length ?? 0;
    return replies;
  };
  return trips;
}

async function glideRow(row: Row, target: Target, mode: 'single' | 'batch'): Promise<void> {
  const [connection, admin] = [await connectGlide(target.url), await connectGlide(target.url)];
  try {
    const queues = queuesOf(`bench-${row.key}`);
    const step = steps(connection, queues)[mode];
    const inFlight = mode === 'single' ? IN_FLIGHT : BATCHES_IN_FLIGHT;
    const count = async () => {
      let sum = 0;
      for (const q of queues) {
        const o = await command(admin.wire, ['ZCARD', pendingKey(q)]);
        if (!o.ok) throw new Error(o.error);
        sum += Number(o.value);
      }
      return sum;
    };
    let trips = { calls: 0, commands: 0 };
    const measuring = () => void (trips = countTrips(connection));
    const m = await drivenRow(row, { inFlight, step, valkey: target.valkey, count, measuring });
    const perCall = trips.calls > 0 ? trips.commands / trips.calls : 0;
    row.notes.push(
      `${inFlight} calls in flight over ${QUEUES} queues, maxBatch 32 (the default); ` +
        `${fmtInt(trips.calls / m.seconds)} glide calls/s carrying ${perCall.toFixed(1)} commands each; latency per call`,
    );
    const sizes: string[] = [];
    for (const port of target.ports ?? []) {
      const route = { type: 'routeByAddress', host: '127.0.0.1', port } as const;
      sizes.push(`:${port} ${fmtInt(Number(await (admin.client as GlideClusterClient).customCommand(['DBSIZE'], { route })))}`);
    }
    if (sizes.length) row.notes.push(`keys per primary (job rows and pending sets): ${sizes.join(', ')}`);
  } finally {
    await Promise.all([connection.close(), admin.close()]);
  }
}
