// The cluster harness for the soak (SOAK_CLUSTER=1 npm run soak): the parts of
// cluster-stack.ts, the library's consumer and pump on a cluster client (each queue's commands
// to its slot's primary: soak/library/connect.ts), the producers writing with ?wait=1 (without,
// `wait` false: SOAK_WAIT=0, the control run), and the faults of cluster-faults.ts.
import { CLUSTER_FAULT_KINDS, runClusterFaults } from './cluster-faults.js';
import { startClusterStack } from './cluster-stack.js';
import type { SoakHarness } from './harness.js';

export const clusterHarness = (wait = true): SoakHarness => ({
  name: `cluster harness (3 primaries, a replica each)${wait ? ', ?wait=1' : ', no ?wait'}`,
  kinds: () => CLUSTER_FAULT_KINDS,
  async start({ mode, sources }) {
    if (mode !== 'worker') throw new Error('the cluster harness runs the Worker mode only (SOAK_MODE=worker)');
    const stack = await startClusterStack(sources);
    return {
      stack,
      target: { seeds: stack.cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
      writeQuery: wait ? 'wait=1' : '',
      faults: (fleet, seconds, each, log) => runClusterFaults(stack, fleet, seconds, each, log),
    };
  },
});
