// What a run is judged by: the targets (bounds on ratios) and the ratios shown beside them. A
// target whose rows did not run, or are not trusted, is N/A rather than passed.
import { BATCH } from './common.js';
import { CEILING } from './plan.js';
import { cpuPerOp, figure, fmtRatio, ratioOf, targets, type Row } from './report.js';

export function verdict(rows: readonly Row[]): { verdict: string[]; ratios: string[] } {
  const trusted = (key: string) => {
    const r = figure(rows, key);
    return r && r.problems.length === 0 ? r.opsPerSec : undefined;
  };
  const cpu = (key: string, label: string, thread = false) => cpuPerOp(rows, key, label, thread);
  const verdict = targets([
    { what: 'throughput: enqueue (glide) / BullMQ Queue.add', ratio: ratioOf(trusted('single'), trusted('bull-add')), atLeast: 1.5 },
    { what: `throughput: enqueueMany x${BATCH} (glide) / server ceiling`, ratio: ratioOf(trusted('batch'), trusted(CEILING)), atLeast: 0.8 },
    { what: 'CPU per request: gateway / webdis (path-style EVALSHA)', ratio: ratioOf(cpu('gateway', 'gateway'), cpu('webdis', 'webdis')), atMost: 2.5 },
    {
      what: "CPU per request: producer Worker's isolate / the 1-fetch Worker's",
      ratio: ratioOf(cpu('worker', 'workerd', true), cpu('fetch-worker', 'workerd', true)),
      atMost: 1.25,
    },
    { what: 'throughput: enqueue, REST connection on Node / over fetch', ratio: ratioOf(trusted('rest-node'), trusted('rest-fetch')), atLeast: 4 },
    { what: 'client CPU per enqueue: REST connection on Node', ratio: cpu('rest-node', 'bench'), atMost: 150, unit: 'µs' },
    {
      what: "CPU per request: emq producer's Node process / Hono + BullMQ's",
      ratio: ratioOf(cpu('producer', 'node'), cpu('hono-bullmq', 'node')),
      atMost: 1.0,
    },
  ]);
  const ratios = [
    ['throughput: producer Worker / 1-fetch Worker floor', 'worker', 'fetch-worker'],
    ['throughput: emq producer on Node / Hono + BullMQ', 'producer', 'hono-bullmq'],
    ['throughput: gateway / webdis (path-style EVALSHA)', 'gateway', 'webdis'],
    ['cluster / single node, enqueue', 'cluster-single', 'single'],
    ['REST, a request per enqueue: undici / fetch', 'rest-undici', 'rest-fetch'],
    ['cluster / single node, enqueueMany', 'cluster-batch', 'batch'],
    ['enqueueMany / BullMQ addBulk', 'batch', 'bull-bulk'],
    ['producer Worker / no-op Worker', 'worker', 'noop-worker'],
    ['emq producer / no-op Hono on Node', 'producer', 'noop-node'],
  ].flatMap(([what, a, b]) => {
    const r = ratioOf(figure(rows, a)?.opsPerSec, figure(rows, b)?.opsPerSec);
    return r === undefined ? [] : [`${what}: ${fmtRatio(r)}`];
  });
  // latency under the same load (64 connections): the Worker path against its floor
  const worker = figure(rows, 'worker');
  const floor = figure(rows, 'fetch-worker');
  if (worker?.p99Ms !== undefined && floor?.p99Ms !== undefined) {
    ratios.push(
      `p99: producer Worker ${worker.p99Ms.toFixed(1)} ms, 1-fetch Worker floor ${floor.p99Ms.toFixed(1)} ms (${fmtRatio(worker.p99Ms / floor.p99Ms)}); p50 ${worker.p50Ms?.toFixed(1)} and ${floor.p50Ms?.toFixed(1)} ms`,
    );
  }
  return { verdict, ratios };
}
