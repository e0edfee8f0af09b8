// The REST connection: enqueue() over connectRest → `emq gateway` → Valkey, three ways in one
// sitting: fetch, a request per enqueue (as before undici and auto-pipelining); undici, a request
// per enqueue; and Node's default (shared/connections/rest-node.ts): undici, auto-pipelined.
import { startGatewayProcess, type GatewayProcess } from '../../scripts/gateway-process.js';
import { undiciTransport } from '../../shared/connections/rest-node.js';
import { connectRest, fetchTransport, type RestTransport } from '../../shared/connections/rest.js';
import { IN_FLIGHT, QUEUES, drivenRow, logFile, queuesOf, steps, type Bench } from '../common.js';
import { adopt, type Child } from '../procs.js';
import { usPerOp, type Row } from '../report.js';

/** `emq gateway` in front of the bench's server, with fresh tokens, stopped (and its exit checked) at the end of `row`. */
export async function startBenchGateway(bench: Bench, row: Row, cleanup: Array<() => Promise<void>>): Promise<GatewayProcess & { pid: number }> {
  const gw = await startGatewayProcess(bench.server.url, {}, undefined, logFile(bench.tmp, 'gateway'));
  const pid = gw.child.pid!;
  const child: Pick<Child, 'label' | 'stop' | 'output'> = { label: 'gateway', stop: adopt('gateway', pid, () => gw.stop()), output: () => gw.stderr() };
  cleanup.push(bench.stopAtEnd(row, child));
  return Object.assign(gw, { pid });
}

const SENDS = [
  { key: 'rest-fetch', send: "Node's fetch, autoPipeline off", transport: () => fetchTransport(), autoPipeline: false },
  { key: 'rest-undici', send: "undici's Pool, autoPipeline off", transport: () => undiciTransport(), autoPipeline: false },
  { key: 'rest-node', send: "undici's Pool, autoPipeline on: the package's Node entry", transport: () => undiciTransport(), autoPipeline: true },
];

export async function restRows(bench: Bench): Promise<void> {
  for (const { key, send, transport, autoPipeline } of SENDS) {
    await bench.row(key, async (r, cleanup) => {
      const gw = await startBenchGateway(bench, r, cleanup);
      let requests = 0;
      const inner = transport();
      const counted: RestTransport = { post: (...a) => (requests++, inner.post(...a)), close: () => inner.close() };
      const connection = connectRest({ url: gw.url, token: gw.producer, transport: counted, autoPipeline });
      cleanup.push(() => connection.close());
      const queues = queuesOf(`bench-${key}`);
      const step = steps(connection, queues).single;
      const between = [{ label: 'gateway', pid: gw.pid }];
      let from = 0;
      const measuring = () => void (from = requests);
      const m = await drivenRow(r, { inFlight: IN_FLIGHT, step, valkey: bench.valkey, between, count: () => bench.zcards(queues), measuring });
      const perRequest = m.ops / (requests - from);
      const gateway = usPerOp(r, r.between.find((p) => p.label === 'gateway')?.use?.cores);
      r.notes.push(
        `connectRest (${send}) → \`emq gateway\` ${gw.url} → Valkey; ${IN_FLIGHT} calls in flight over ${QUEUES} queues`,
        `client CPU ${usPerOp(r, r.load?.cores)?.toFixed(0)} µs per enqueue; ${perRequest.toFixed(2)} enqueues per request; gateway CPU ${gateway === undefined ? '?' : (gateway * perRequest).toFixed(0)} µs per request`,
      );
    });
  }
}
