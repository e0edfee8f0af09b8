// The producer half's soak (no consumer): concurrent producers enqueue flat jobs through the
// Worker, the gateway and Valkey (AOF, appendfsync always) while the four infrastructure
// faults are injected on a schedule; then Valkey is read back and the result printed as a
// table. Its short run is part of `npm test` (test/soak.test.ts); `npm run soak` runs the whole
// proof with the library's consumer (soak/run.ts).
import { EDGE_FAULT_KINDS as FAULT_KINDS, runFaults, type FaultRecord } from '../faults.js';
import { newLedger, produce, type Ledger } from './producers.js';
import { startStack } from '../stack.js';
import { readBack, type Findings } from './verify.js';

export interface SoakOptions {
  seconds: number;
  producers: number;
  /** Faults of each kind, spread over the run. */
  faultsEach: number;
  queues?: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  options: Required<Omit<SoakOptions, 'log'>>;
  ledger: Ledger;
  faults: FaultRecord[];
  findings: Findings;
  elapsedMs: number;
  /** Rows of [measure, value, must be]; `ok` false when a must is not met. */
  table: Array<{ measure: string; value: string; must: string; ok: boolean }>;
  ok: boolean;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { seconds, producers, faultsEach, queues: queueCount = 8, log = (l: string) => console.log(l) } = options;
  const stack = await startStack();
  try {
    const run = Date.now().toString(36);
    const queues = Array.from({ length: queueCount }, (_, i) => `soak-${run}-${i}`);
    const ledger = newLedger();
    const started = Date.now();
    const until = started + seconds * 1000;
    const progress = setInterval(() => {
      const acked = [...ledger.jobs.values()].filter((j) => j.acked).length;
      log(`${((Date.now() - started) / 1000).toFixed(0)} s: ${acked} acknowledged, ${ledger.retries} retries`);
    }, 10_000);
    let faults: FaultRecord[];
    try {
      const loads = Array.from({ length: producers }, (_, i) =>
        produce(i, { worker: stack.worker, token: stack.token, queues, until, giveUpMs: 60_000 }, ledger),
      );
      faults = await runFaults(stack, null, seconds, faultsEach, log, FAULT_KINDS);
      await Promise.all(loads);
    } finally {
      clearInterval(progress);
    }
    const elapsedMs = Date.now() - started;
    const findings = await readBack(stack.admin, ledger, queues);
    const table = tableOf(ledger, faults, findings, { seconds, producers, faultsEach }, elapsedMs);
    return {
      options: { seconds, producers, faultsEach, queues: queueCount },
      ledger,
      faults,
      findings,
      elapsedMs,
      table,
      ok: table.every((r) => r.ok),
    };
  } finally {
    await stack.stop();
  }
}

function tableOf(ledger: Ledger, faults: FaultRecord[], f: Findings, o: { seconds: number; producers: number; faultsEach: number }, elapsedMs: number) {
  const jobs = [...ledger.jobs.values()];
  const acked = jobs.filter((j) => j.acked).length;
  const bad5xx = [...ledger.bad5xx.values()].reduce((n, s) => n + s.count, 0);
  const rows: SoakResult['table'] = [];
  const row = (measure: string, value: number | string, must = '', ok = true) => rows.push({ measure, value: String(value), must, ok });
  const zero = (measure: string, value: number) => row(measure, value, '0', value === 0);
  row('producers (concurrent)', o.producers, '≥ 32', o.producers >= 32);
  row('run', `${(elapsedMs / 1000).toFixed(0)} s`);
  for (const kind of FAULT_KINDS) {
    const n = faults.filter((r) => r.kind === kind).length;
    row(`faults: ${kind}`, n, `${o.faultsEach}`, n === o.faultsEach);
  }
  row('jobs attempted', jobs.length);
  row('acknowledged', acked);
  row('requests (retries)', `${ledger.requests} (${ledger.retries})`);
  row('acknowledged as duplicate after a retry', ledger.duplicates);
  zero('lost (acknowledged, absent)', f.lost);
  zero('doubled', f.doubled);
  zero('rows without a pending entry', f.rowsWithoutPending);
  zero('pending entries without a row', f.pendingWithoutRow);
  zero('payloads not byte-exact', f.notByteExact);
  zero('rows no producer sent', f.unknownRows);
  zero('5xx other than 503', bad5xx);
  zero('4xx (a good job refused)', ledger.refused.length);
  zero('jobs given up (60 s without an ack)', ledger.gaveUp);
  row('longest outage seen by a producer', `${ledger.longestOutageMs} ms`);
  row('throughput', `${((acked / elapsedMs) * 1000).toFixed(0)} acknowledged/s`);
  return rows;
}

export { printTable } from '../run.js';
