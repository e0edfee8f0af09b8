// The table's rows, in order (their number is their place here), and which of them a run
// takes: all, or those named by key or group in the arguments and BENCH_ONLY.
import { PRIMARIES } from './common.js';
import type { Group } from './report.js';

/** A row: its key, label in the chart (`short`), name in the table, and the rows it is compared with as a peer (BullMQ, webdis) and a reference (its floor, the single node). */
export type RowSpec = { key: string; group: Group; short: string; name: string; peer?: string | undefined; ref?: string | undefined };

const spec = (key: string, group: Group, short: string, name: string, peer?: string, ref?: string): RowSpec => ({ key, group, short, name, peer, ref });

/** The row every other is divided by. */
export const CEILING = 'ceiling';
const CLUSTER = `Valkey Cluster ${PRIMARIES} primaries`;

export const ROWS: RowSpec[] = [
  spec('vb-dup', 'server', 'valkey-benchmark, duplicate path', 'server alone, duplicate path: valkey-benchmark EVALSHA, one existing id'),
  spec(CEILING, 'server', 'ceiling: unique ids (RESP generator)', 'server ceiling: EVALSHA @enqueue, unique ids (node RESP generator)'),
  spec('bull-add', 'peer', 'BullMQ Queue.add', 'BullMQ Queue.add (ioredis), 64 in flight'),
  spec('bull-bulk', 'peer', 'BullMQ Queue.addBulk x100', 'BullMQ Queue.addBulk x100 (ioredis), 8 in flight'),
  spec('single', 'glide', 'enqueue, glide', 'enqueue (glide), 64 in flight', 'bull-add'),
  spec('batch', 'glide', 'enqueueMany x100, glide', 'enqueueMany x100 (glide), 8 in flight', 'bull-bulk'),
  spec('cluster-single', 'cluster', 'enqueue, glide, cluster', `enqueue (glide), ${CLUSTER}`, 'bull-add', 'single'),
  spec('cluster-batch', 'cluster', 'enqueueMany x100, glide, cluster', `enqueueMany x100 (glide), ${CLUSTER}`, 'bull-bulk', 'batch'),
  spec('rest-fetch', 'rest', 'enqueue, REST (fetch) → gateway', "enqueue (REST connection, Node's fetch → gateway), 64 in flight", 'bull-add', 'single'),
  spec('rest-undici', 'rest', 'enqueue, REST (undici) → gateway', 'enqueue (REST connection, undici → gateway), 64 in flight', 'bull-add', 'rest-fetch'),
  spec('rest-node', 'rest', 'enqueue, REST on Node', 'enqueue (REST on Node: undici, auto-pipelined), 64 in flight', 'bull-add', 'rest-fetch'),
  spec('gateway', 'http', 'HTTP: EVALSHA → gateway → Valkey', 'HTTP: path-style EVALSHA @enqueue → gateway → Valkey', 'webdis'),
  spec('webdis', 'peer', 'HTTP peer: EVALSHA → webdis', 'HTTP peer: path-style EVALSHA @enqueue → webdis → Valkey'),
  spec('worker', 'http', 'HTTP: Worker → gateway → Valkey', 'HTTP: producer Worker (workerd) → gateway → Valkey', 'hono-bullmq', 'fetch-worker'),
  spec('noop-worker', 'floor', 'HTTP floor: no-op Worker', 'HTTP floor: no-op Hono Worker (workerd)'),
  spec('fetch-worker', 'floor', 'HTTP floor: 1-fetch Worker', 'HTTP floor: 1-fetch Hono Worker (workerd) → no-op upstream', undefined, 'noop-worker'),
  spec('noop-node', 'floor', 'HTTP floor: no-op Hono on Node', 'HTTP floor: no-op Hono on Node'),
  spec('hono-bullmq', 'peer', 'HTTP peer: Hono + BullMQ on Node', 'HTTP peer: Hono on Node + BullMQ Queue.add', undefined, 'noop-node'),
  spec('producer', 'http', 'HTTP: emq producer on Node', 'HTTP: emq producer (node:http, glide) → Valkey', 'hono-bullmq', 'noop-node'),
];

export const HTTP_ROWS = ['gateway', 'webdis', 'worker', 'noop-worker', 'fetch-worker', 'noop-node', 'hono-bullmq', 'producer'];
const GROUPS: Record<string, string[]> = {
  server: ['vb-dup', CEILING],
  bullmq: ['bull-add', 'bull-bulk'],
  glide: ['single', 'batch'],
  cluster: ['cluster-single', 'cluster-batch'],
  rest: ['rest-fetch', 'rest-undici', 'rest-node'],
  http: HTTP_ROWS,
};

/** Not a row: the memory section (rows/memory.ts). */
export const MEMORY = 'memory';

/** The keys asked for (rows, groups expanded, and MEMORY), or undefined for the whole run. */
export function selection(asked: readonly string[]): Set<string> | undefined {
  const names = asked.map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) return undefined;
  const keys = new Set<string>();
  for (const a of names) {
    for (const k of a === MEMORY ? [a] : (GROUPS[a] ?? [a])) {
      if (k !== MEMORY && !ROWS.some((r) => r.key === k))
        throw new Error(`unknown row "${a}": rows are ${ROWS.map((r) => r.key).join(', ')}; groups ${Object.keys(GROUPS).join(', ')}; and ${MEMORY}`);
      keys.add(k);
    }
  }
  return keys;
}
