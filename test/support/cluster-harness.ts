// For one describe block on a fresh Valkey Cluster (3 primaries, no replicas): the cluster, a
// glide connection to it, the gateway in front of it, an admin client per node, and `routed`,
// the library consumer model's command caller through the cluster (each command routed by its
// key). Started before the block's tests, stopped after them; read the fields inside tests.
import { afterAll, beforeAll, expect } from 'vitest';
import { command } from '../../functions/gateway/glide-commands.js';
import { startCluster, type RunningCluster } from '../../scripts/cluster.js';
import type { Arg } from '../../shared/connection.js';
import { connectGlide, type GlideConnection } from '../../shared/connections/glide.js';
import { connectAdmin, type Admin } from './admin.js';
import type { CommandCaller } from './consumer.js';
import { startGatewayProcess, type GatewayProcess } from './gateway.js';

export interface ClusterHarness {
  cluster: RunningCluster;
  glide: GlideConnection;
  gateway: GatewayProcess;
  nodes: Admin[];
  routed: CommandCaller;
}

const asBuffers = (v: unknown): unknown => (Array.isArray(v) ? v.map(asBuffers) : v instanceof Uint8Array ? Buffer.from(v) : v);

export function onCluster(): ClusterHarness {
  const held = {} as ClusterHarness;
  let wire: GlideConnection;
  beforeAll(async () => {
    held.cluster = await startCluster({ primaries: 3, replicas: 0 });
    held.glide = await connectGlide(held.cluster.url);
    wire = await connectGlide(held.cluster.url);
    held.gateway = await startGatewayProcess(held.cluster.url);
    held.nodes = await Promise.all(held.cluster.nodes.map((n) => connectAdmin(n.url)));
    held.routed = {
      async call(...args: Arg[]) {
        const outcome = await command(wire.wire, args);
        if (!outcome.ok) throw new Error(outcome.error);
        return asBuffers(outcome.value);
      },
    } as CommandCaller;
  }, 120_000);
  afterAll(async () => {
    await held.glide?.close();
    await wire?.close();
    for (const n of held.nodes ?? []) n.close();
    if (held.gateway) expect(await held.gateway.stop()).toBe(0);
    await held.cluster?.stop();
  });
  return held;
}
