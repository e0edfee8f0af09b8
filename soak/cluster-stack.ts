// The soak's parts on the cluster harness, all real and on loopback: a Valkey Cluster of 3
// primaries with a replica each (scripts/cluster.ts), `emq gateway` in front of it (a cluster
// URL: glide's cluster client, each script call to its slot's primary), and the producer Worker
// in workerd over REST to that gateway, as in soak/stack.ts. The admin client routes each
// command to the primary of its key's slot (SCAN: of the MATCH pattern's), so run.ts's drain
// and verify.ts read a queue's keys where they live, whichever node is primary by then.
import { Decoder, type GlideClient, GlideClusterClient, type GlideString, Logger } from '@valkey/valkey-glide';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startCluster, type RunningCluster } from '../scripts/cluster.js';
import { startGatewayProcess, type GatewayProcess } from '../scripts/gateway-process.js';
import { goOffline } from '../scripts/offline-env.js';
import { repoRoot } from '../scripts/repo-root.js';
import type { SoakStack } from './harness.js';

export interface ClusterStack extends SoakStack {
  cluster: RunningCluster;
  gateway: GatewayProcess;
  /** workerd's Worker disposed and started again on the same port. */
  restartWorker(): Promise<string>;
}

const text = (v: GlideString | undefined) => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('latin1') : String(v));

/** The key a command of the soak's reads names: SCAN's MATCH pattern, else its first argument. */
function keyOf(args: GlideString[]): string {
  if (text(args[0]).toUpperCase() === 'SCAN') return text(args[args.findIndex((a) => text(a).toUpperCase() === 'MATCH') + 1]);
  return text(args[1]);
}

/** `client` as run.ts and verify.ts call a plain one: each command to its key's primary. */
function byKey(client: GlideClusterClient): SoakStack['admin'] {
  const customCommand = (args: GlideString[]) => client.customCommand(args, { route: { type: 'primarySlotKey', key: keyOf(args) } });
  return { customCommand } as unknown as Pick<GlideClient, 'customCommand'>;
}

/** `sources`: EMQ_SOURCES for the Worker (the webhooks verb), as its JSON. */
export async function startClusterStack(sources?: Record<string, unknown>): Promise<ClusterStack> {
  const root = repoRoot();
  goOffline();
  Logger.init('off'); // glide's warnings (MOVED, NOSCRIPT, reconnects) are the faults the soak injects
  const parts: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const p of parts.reverse()) await p().catch(() => undefined);
  };
  try {
    const cluster = await startCluster({ primaries: 3, replicas: 1 });
    parts.push(() => cluster.stop());
    const client = await GlideClusterClient.createClient({
      addresses: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      clientName: 'soak-admin',
      defaultDecoder: Decoder.Bytes,
      requestTimeout: 10_000,
      periodicChecks: { duration_in_sec: 1 },
    });
    parts.push(async () => client.close());
    const gateway = await startGatewayProcess(cluster.url);
    parts.push(() => gateway.stop());
    const token = `soak-${randomBytes(16).toString('hex')}`;
    const tokens = JSON.stringify([{ token, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] }]);
    const { unstable_startWorker } = await import('wrangler');
    const start = async (port: number) => {
      const w = await unstable_startWorker({
        config: join(root, 'wrangler.toml'),
        bindings: {
          EMQ_REST_URL: { type: 'plain_text', value: gateway.url },
          EMQ_REST_TOKEN: { type: 'secret_text', value: gateway.control },
          EMQ_TOKENS: { type: 'secret_text', value: tokens },
          ...(sources ? { EMQ_SOURCES: { type: 'secret_text', value: JSON.stringify(sources) } } : {}),
        },
        dev: { server: { hostname: '127.0.0.1', port }, inspector: false, persist: false, watch: false, logLevel: 'none' },
      });
      await w.ready;
      return w;
    };
    let worker = await start(0);
    parts.push(() => worker.dispose());
    const url = await worker.url;
    const restartWorker = async () => {
      await worker.dispose();
      worker = await start(Number(url.port));
      return 'workerd disposed, started again on the same port';
    };
    return { cluster, gateway, worker: url, token, admin: byKey(client), restartWorker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
