// The REST connection: enqueue() over connectRest (Node's fetch) → `emq gateway` → Valkey,
// the gateway started by scripts/gateway-process.ts. Row 9.
import { startGatewayProcess, type GatewayProcess } from '../../scripts/gateway-process.js';
import { connectRest } from '../../shared/connections/rest.js';
import { IN_FLIGHT, QUEUES, drivenRow, logFile, queuesOf, steps, type Bench } from '../common.js';
import { adopt, type Child } from '../procs.js';
import type { Row } from '../report.js';

/** `emq gateway` in front of the bench's server, with fresh tokens, stopped (and its exit checked) at the end of `row`. */
export async function startBenchGateway(bench: Bench, row: Row, cleanup: Array<() => Promise<void>>): Promise<GatewayProcess & { pid: number }> {
  const gw = await startGatewayProcess(bench.server.url, {}, undefined, logFile(bench.tmp, 'gateway'));
  const pid = gw.child.pid!;
  const child: Pick<Child, 'label' | 'stop' | 'output'> = { label: 'gateway', stop: adopt('gateway', pid, () => gw.stop()), output: () => gw.stderr() };
  cleanup.push(bench.stopAtEnd(row, child));
  return Object.assign(gw, { pid });
}

export async function restRows(bench: Bench): Promise<void> {
  await bench.row('rest', async (r, cleanup) => {
    const gw = await startBenchGateway(bench, r, cleanup);
    const connection = connectRest({ url: gw.url, token: gw.producer });
    cleanup.push(() => connection.close());
    const queues = queuesOf('bench-rest');
    const step = steps(connection, queues).single;
    const procs = [{ label: 'gateway', pid: gw.pid }, ...bench.valkey];
    const count = () => bench.zcards(queues);
    await drivenRow(r, { inFlight: IN_FLIGHT, step, procs, valkey: bench.valkey, count, where: `the ${QUEUES} pending sets` });
    r.notes.push(`connectRest (Node's fetch) → \`emq gateway\` ${gw.url} → Valkey; ${IN_FLIGHT} calls in flight over ${QUEUES} queues`);
  });
}
