// What the soak runs on, pluggable: the parts started, where the library's consumer and pump
// connect, the faults injected (their kinds are the table's rows) and the query the producers'
// writes carry. `singleNode` is the default (soak/stack.ts: one valkey-server, AOF, always
// fsync, soak/faults.ts's faults); soak/cluster-harness.ts is the cluster harness
// (SOAK_CLUSTER=1: 3 primaries with a replica each, primary failovers, ?wait=1).
import type { GlideClient } from '@valkey/valkey-glide';
import { FAULT_KINDS, type FaultRecord, runFaults } from './faults.js';
import type { Fleet } from './library/fleet.js';
import type { Target } from './library/connect.js';
import { startStack } from './stack.js';

/** What run.ts reads of a stack: the Worker, its token, an admin client (by key: a cluster's routes each command to its key's primary), stop. */
export interface SoakStack {
  worker: URL;
  token: string;
  admin: Pick<GlideClient, 'customCommand'>;
  stop(): Promise<void>;
}

export interface RunningHarness {
  stack: SoakStack;
  /** Where the library's consumer loops and pump connect. */
  target: Target;
  /** The query string every write (POST …/jobs, …/batch, …/flows) carries, or ''. */
  writeQuery: string;
  /** The faults, `each` of every kind, spread over `seconds`; resolves once the last is over. */
  faults(fleet: Fleet, seconds: number, each: number, log: (line: string) => void): Promise<FaultRecord[]>;
}

export interface SoakHarness {
  name: string;
  kinds: readonly string[];
  start(): Promise<RunningHarness>;
}

export const singleNode: SoakHarness = {
  name: 'Valkey single node',
  kinds: FAULT_KINDS,
  async start() {
    const stack = await startStack();
    return {
      stack,
      target: { port: stack.valkey.port },
      writeQuery: '',
      faults: (fleet, seconds, each, log) => runFaults(stack, fleet, seconds, each, log),
    };
  },
};
