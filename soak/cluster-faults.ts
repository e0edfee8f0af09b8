// The cluster harness's faults, round-robin on a schedule as soak/faults.ts's: a primary holding
// soak queues fails over while the producers write with ?wait=1 and the consumers claim, once
// coordinated (CLUSTER FAILOVER on its replica: no write is lost) and once by kill -9 (its
// replica is elected after cluster-node-timeout; a write acknowledged only by the dead primary
// is what ?wait=1 keeps from happening), the old primary then restarted and rejoining as the new
// one's replica; plus SCRIPT FLUSH on every node, a gateway restart, a consumer killed
// mid-job and a Worker isolate restart. The cluster is read with valkey-cli (CLUSTER NODES),
// asking whichever node answers.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { FaultRecord } from './faults.js';
import type { Fleet } from './library/fleet.js';
import type { ClusterStack } from './cluster-stack.js';

export const CLUSTER_FAULT_KINDS = [
  "CLUSTER FAILOVER of a soak queue's primary",
  "kill -9 of a soak queue's primary, restarted",
  'SCRIPT FLUSH on every node',
  'gateway restart',
  'a consumer killed mid-job',
  'Worker isolate restart',
] as const;
type Kind = (typeof CLUSTER_FAULT_KINDS)[number];

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Node {
  id: string;
  port: number;
  myself: boolean;
  primary: boolean;
  failed: boolean;
  primaryId: string;
  /** Its slot ranges, [from, to]. */
  slots: Array<[number, number]>;
}

/** One line of CLUSTER NODES: id, address, flags, its primary, …, its slot ranges. */
function nodeOf(line: string): Node {
  const [id = '', address = '', flags = '', primaryId = '', , , , , ...ranges] = line.split(' ');
  const flag = new Set(flags.split(','));
  const slots: Array<[number, number]> = [];
  for (const r of ranges) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(r);
    if (m) slots.push([Number(m[1]), Number(m[2] ?? m[1])]);
  }
  return {
    id,
    port: Number(/:(\d+)@/.exec(address)?.[1]),
    myself: flag.has('myself'),
    primary: flag.has('master'),
    failed: flag.has('fail') || flag.has('fail?'),
    primaryId,
    slots,
  };
}

function cli(stack: ClusterStack, port: number, ...args: string[]): Promise<string> {
  return run(stack.cluster.cli, ['-p', String(port), ...args], { timeout: 5_000 }).then((r) => r.stdout.trim());
}

/** CLUSTER NODES as `port` sees it (undefined: any node that answers). */
async function view(stack: ClusterStack, port?: number): Promise<Node[]> {
  for (const p of port === undefined ? stack.cluster.nodes.map((n) => n.port) : [port]) {
    const out = await cli(stack, p, 'CLUSTER', 'NODES').catch(() => '');
    if (out) return out.split('\n').filter(Boolean).map(nodeOf);
  }
  throw new Error('no node answers CLUSTER NODES');
}

async function until(what: string, ms: number, test: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await test().catch(() => false))) {
    if (Date.now() - start > ms) throw new Error(`cluster fault: ${what} not within ${ms} ms`);
    await sleep(100);
  }
  return Date.now() - start;
}

const settled = (stack: ClusterStack) =>
  until('every node at cluster_state:ok', 60_000, async () => {
    for (const n of stack.cluster.nodes) if (!/cluster_state:ok/.test(await cli(stack, n.port, 'CLUSTER', 'INFO'))) return false;
    return true;
  });
const replicating = (stack: ClusterStack, port: number) =>
  until(`${port} replicating`, 60_000, async () => /role:slave[\s\S]*master_link_status:up/.test(await cli(stack, port, 'INFO', 'replication')));

/** The soak's queues (the cluster is the soak's alone): each primary's key tags, sorted. */
async function queuesOf(stack: ClusterStack, nodes: Node[]): Promise<string[]> {
  const tags = new Set<string>();
  for (const n of nodes.filter((x) => x.primary && !x.failed && x.slots.length > 0)) {
    const keys = await cli(stack, n.port, '--scan', '--pattern', 'emq:{*', '--count', '1000').catch(() => '');
    for (const key of keys.split('\n')) {
      const tag = /^emq:\{([^}]+)\}/.exec(key)?.[1];
      if (tag) tags.add(tag);
    }
  }
  return [...tags].sort();
}

/** The i-th soak queue (round-robin), the primary that holds its slot, and that primary's live replica. */
async function target(stack: ClusterStack, i: number) {
  const nodes = await view(stack);
  const queues = await queuesOf(stack, nodes);
  const queue = queues[i % Math.max(1, queues.length)];
  if (queue === undefined) throw new Error('cluster fault: no primary holds a soak key yet');
  const slot = Number(await cli(stack, nodes.find((n) => !n.failed)!.port, 'CLUSTER', 'KEYSLOT', `{${queue}}`));
  const primary = nodes.find((n) => n.primary && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b));
  if (!primary) throw new Error(`cluster fault: no live primary holds slot ${slot}`);
  const replica = nodes.find((n) => !n.failed && !n.primary && n.primaryId === primary.id);
  if (!replica) throw new Error(`cluster fault: primary ${primary.port} has no live replica`);
  return { primary, replica, queue };
}

type Inject = (stack: ClusterStack, fleet: Fleet, i: number) => Promise<string>;

const inject: Record<Kind, Inject> = {
  async "CLUSTER FAILOVER of a soak queue's primary"(stack, _fleet, i) {
    const { primary, replica, queue } = await target(stack, i);
    await cli(stack, replica.port, 'CLUSTER', 'FAILOVER');
    const took = await until(`${replica.port} promoted`, 30_000, async () => (await view(stack, replica.port)).some((n) => n.myself && n.primary));
    await replicating(stack, primary.port);
    await settled(stack);
    return `${queue}: ${primary.port} → ${replica.port}, promoted in ${took} ms; the old primary replicates it`;
  },
  async "kill -9 of a soak queue's primary, restarted"(stack, _fleet, i) {
    const { primary, replica, queue } = await target(stack, i);
    const node = stack.cluster.nodes.find((n) => n.port === primary.port)!;
    process.kill(node.pid, 'SIGKILL');
    const took = await until(`${replica.port} elected`, 60_000, async () => (await view(stack, replica.port)).some((n) => n.myself && n.primary));
    await node.restart(); // its nodes.conf: it rejoins, learns the newer epoch, and replicates the new primary
    await replicating(stack, primary.port);
    await settled(stack);
    return `${queue}: ${primary.port} killed, ${replica.port} elected after ${took} ms; ${primary.port} back as its replica`;
  },
  async 'SCRIPT FLUSH on every node'(stack) {
    for (const n of stack.cluster.nodes) await cli(stack, n.port, 'SCRIPT', 'FLUSH');
    return `${stack.cluster.nodes.length} nodes' script caches empty`;
  },
  async 'gateway restart'(stack) {
    await stack.gateway.restart();
    return 'SIGTERM, drained, started again on the same port';
  },
  'Worker isolate restart': (stack) => stack.restartWorker(),
  async 'a consumer killed mid-job'(_stack, fleet) {
    const loop = await fleet.killMidJob();
    return loop < 0 ? 'no job claimed in 30 s: none killed' : `loop ${loop}: SIGKILL after a claim, restarted; its lease runs out and reap returns the job`;
  },
};

/** `each` faults of every kind, evenly spread over `seconds` (none in the first or last interval). */
export async function runClusterFaults(stack: ClusterStack, fleet: Fleet, seconds: number, each: number, log: (line: string) => void): Promise<FaultRecord[]> {
  const total = CLUSTER_FAULT_KINDS.length * each;
  const interval = (seconds * 1000) / (total + 1);
  const start = Date.now();
  const records: FaultRecord[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + interval * (i + 1);
    if (due > Date.now()) await sleep(due - Date.now());
    const kind = CLUSTER_FAULT_KINDS[i % CLUSTER_FAULT_KINDS.length]!;
    const began = Date.now();
    const note = await inject[kind](stack, fleet, Math.floor(i / CLUSTER_FAULT_KINDS.length));
    records.push({ kind, at: began - start, tookMs: Date.now() - began, note });
    log(`fault ${i + 1}/${total} at ${((began - start) / 1000).toFixed(1)} s: ${kind} (${note}, ${Date.now() - began} ms)`);
  }
  return records;
}
