// What the soak runs on, pluggable: the parts started, where the library's consumer and pump
// connect, the faults injected (their kinds are the table's rows) and the query the producers'
// writes carry. `singleNode` is the default (soak/stack.ts: one valkey-server, AOF, always
// fsync, soak/faults.ts's faults); soak/cluster-harness.ts is the cluster harness
// (SOAK_CLUSTER=1: 3 primaries with a replica each, primary failovers, ?wait=1).
import type { GlideClient } from '@valkey/valkey-glide';
import { FAULT_KINDS, type FaultRecord, GLIDE_FAULT_KINDS, runFaults } from './faults.js';
import type { Fleet } from './library/fleet.js';
import type { Target } from './library/connect.js';
import { type SoakMode, type StackOptions, startStack } from './stack.js';

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
  /** What the report's `on` row says. */
  name: string;
  /** The fault kinds it injects in a mode, in the table's order. */
  kinds(mode: SoakMode): readonly string[];
  start(options: Required<Pick<StackOptions, 'mode'>> & Pick<StackOptions, 'sources'>): Promise<RunningHarness>;
}

export const singleNode: SoakHarness = {
  name: 'one valkey-server (AOF, appendfsync always)',
  kinds: (mode) => (mode === 'glide' ? GLIDE_FAULT_KINDS : FAULT_KINDS),
  async start(options) {
    const stack = await startStack(options);
    const kinds = options.mode === 'glide' ? GLIDE_FAULT_KINDS : FAULT_KINDS;
    return {
      stack,
      target: { port: stack.valkey.port },
      writeQuery: '',
      faults: (fleet, seconds, each, log) => runFaults(stack, fleet, seconds, each, log, kinds),
    };
  },
};
