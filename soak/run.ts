// The soak: producers send every verb through the Worker, the gateway and Valkey (AOF,
// appendfsync always), or in glide mode through `emq producer` over glide, while the library's consumer loops (soak/library/) take the jobs to the
// end and faults are injected on a schedule; then the run drains, and the producers' ledger
// is held against the consumers' completion log and what Valkey holds. `npm run soak` runs it
// for 5 minutes (soak/main.ts); a short run is part of the tests (test/soak.test.ts).
import type { GlideString } from '@valkey/valkey-glide';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAULT_KINDS, type FaultKind, type FaultRecord, GLIDE_FAULT_KINDS, runFaults } from './faults.js';
import { type FleetConfig, readLogs, startFleet } from './library/fleet.js';
import { startPump } from './library/pump.js';
import { type Ledger, newLedger } from './ledger.js';
import { produce, tenantsOf } from './producers.js';
import { type SoakMode, type Stack, startStack } from './stack.js';
import { type Findings, verify } from './verify.js';
import { webhookSources } from './webhooks.js';

export interface SoakOptions {
  seconds: number;
  producers: number;
  /** Faults of each kind, spread over the run. */
  faultsEach: number;
  /** The library's consumer loops (processes). */
  consumers?: number;
  tenants?: number;
  /** How long the drain after the run may take before the verdict. */
  drainSeconds?: number;
  /** worker (the Worker in workerd, the gateway; the default) or glide (`emq producer` over glide). */
  mode?: SoakMode;
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

const LEASE_MS = 5_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const {
    seconds,
    producers,
    faultsEach,
    consumers = 4,
    tenants: tenantCount = 16,
    drainSeconds = 90,
    mode = 'worker',
    log = (l: string) => console.log(l),
  } = options;
  const run = Date.now().toString(36);
  const queues = { main: `soak-${run}-main`, lanes: `soak-${run}-lanes`, side: `soak-${run}-side` };
  // webhook deliveries go to the side queue (flat, and kept up with)
  const hooks = webhookSources(queues.side);
  const stack = await startStack({ mode, sources: hooks.sources });
  const kinds = mode === 'glide' ? GLIDE_FAULT_KINDS : FAULT_KINDS;
  const dir = mkdtempSync(join(tmpdir(), 'emq-soak-'));
  let ledgerOf: Ledger['jobs'] | undefined;
  try {
    const all = [queues.main, queues.lanes, queues.side];
    const cfg: FleetConfig = { port: stack.valkey.port, queues: all, leaseMs: LEASE_MS, beatMs: 250, retryDelayMs: 300, maxAttempts: 3, drainCap: 200 };
    const fleet = startFleet(consumers, cfg, dir);
    const pump = await startPump(stack.valkey.port, all);
    const ledger = newLedger();
    ledgerOf = ledger.jobs;
    const started = Date.now();
    const until = started + seconds * 1000;
    const progress = setInterval(() => {
      const acked = [...ledger.jobs.values()].filter((j) => j.acked).length;
      log(`${((Date.now() - started) / 1000).toFixed(0)} s: ${acked} acknowledged, ${ledger.retries} retries`);
    }, 10_000);
    let faults: FaultRecord[];
    const tenants = tenantsOf(tenantCount);
    try {
      const loads = Array.from({ length: producers }, (_, i) =>
        produce(i, { worker: stack.worker, token: stack.token, queues, tenants, until, giveUpMs: 60_000, hooks }, ledger),
      );
      faults = await runFaults(stack, fleet, seconds, faultsEach, log, kinds);
      await Promise.all(loads);
      const quietAt = await drain(stack.admin, ledger, all, Date.now() + drainSeconds * 1000);
      log(quietAt ? `drained ${((quietAt - until) / 1000).toFixed(1)} s after the producers stopped` : `not drained after ${drainSeconds} s`);
    } finally {
      clearInterval(progress);
      await fleet.stop();
      await pump.stop();
    }
    const elapsedMs = Date.now() - started;
    const findings = await verify(stack.admin, ledger, readLogs(dir), all, LEASE_MS);
    const table = tableOf(ledger, faults, findings, { seconds, producers, faultsEach, consumers, mode, kinds }, elapsedMs, fleet.restarts(), pump.delivered());
    return {
      options: { seconds, producers, faultsEach, consumers, tenants: tenantCount, drainSeconds, mode },
      ledger,
      faults,
      findings,
      elapsedMs,
      table,
      ok: table.every((r) => r.ok),
    };
  } finally {
    await stack.stop();
    if (process.env.SOAK_KEEP_LOGS) {
      writeFileSync(join(dir, 'ledger.json'), JSON.stringify([...(ledgerOf ?? new Map()).values()]));
      log(`completion logs and the ledger kept in ${dir}`);
    } else rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits until no queue holds work (pending, active, ring, outbox, a scheduled job but one that may stay); answers when, or null at the deadline. */
async function drain(admin: Stack['admin'], ledger: Ledger, queues: string[], deadline: number): Promise<number | null> {
  // a failed read counts as work: the queue is not known to be quiet
  const n = async (...args: GlideString[]) => Number(await admin.customCommand(args).catch(() => Number.NaN));
  const ids = async (key: string) => ((await admin.customCommand(['ZRANGE', key, '0', '-1']).catch(() => null)) as GlideString[] | null)?.map(String);
  while (Date.now() < deadline) {
    let busy = 0;
    for (const q of queues) {
      const p = `emq:{${q}}:`;
      busy += (await n('ZCARD', `${p}pending`)) + (await n('ZCARD', `${p}active`)) + (await n('LLEN', `${p}ring`)) + (await n('LLEN', `${p}flow:outbox`));
      // by id, not by count: a job counted as maybe staying may have run after all
      const scheduled = await ids(`${p}schedule`);
      busy += scheduled ? scheduled.filter((id) => !ledger.jobs.get(id)?.mayStayScheduled).length : Number.NaN;
    }
    if (busy === 0) return Date.now();
    await sleep(500);
  }
  return null;
}

function tableOf(
  ledger: Ledger,
  faults: FaultRecord[],
  f: Findings,
  o: { seconds: number; producers: number; faultsEach: number; consumers: number; mode: SoakMode; kinds: readonly FaultKind[] },
  elapsedMs: number,
  restarts: number,
  delivered: number,
) {
  const jobs = [...ledger.jobs.values()];
  const bad5xx = [...ledger.bad5xx.values()].reduce((n, s) => n + s.count, 0);
  const rows: SoakResult['table'] = [];
  const row = (measure: string, value: number | string, must = '', ok = true) => rows.push({ measure, value: String(value), must, ok });
  const zero = (measure: string, value: number) => row(measure, value, '0', value === 0);
  row('mode', o.mode === 'glide' ? 'glide: emq producer over glide, no gateway' : 'worker: the Worker in workerd, REST to emq gateway');
  row('producers (concurrent) / library consumer loops', `${o.producers} / ${o.consumers}`);
  row('run (producing, then draining)', `${(elapsedMs / 1000).toFixed(0)} s`);
  for (const kind of o.kinds) {
    const n = faults.filter((r) => r.kind === kind).length;
    row(`faults: ${kind}`, n, `${o.faultsEach}`, n === o.faultsEach);
  }
  row('consumer loops restarted', restarts);
  row('jobs attempted', jobs.length);
  row('acknowledged', f.acked);
  for (const v of ['flat', 'batch', 'idem', 'group', 'delay', 'notbefore', 'gdelay', 'flow', 'xflow', 'cancel', 'promote', 'reschedule', 'webhook'])
    row(`  of them ${v}`, jobs.filter((j) => j.acked && j.verb === v).length);
  row('requests (retries)', `${ledger.requests} (${ledger.retries})`);
  row('acknowledged as duplicate after a retry', ledger.duplicates);
  row('Idempotency-Key sent again: same id', ledger.idemReuse.ok);
  zero('Idempotency-Key sent again: another answer', ledger.idemReuse.mismatch);
  for (const [k, n] of [...ledger.control].sort()) row(`control: ${k}`, n);
  const w = ledger.webhooks;
  row('webhook deliveries (signed; standard and github)', w.deliveries);
  row('  of them sent twice at once', w.concurrent);
  row('  redelivered later (of them after the job completed)', `${w.redelivered} (${w.afterCompletion})`);
  zero('webhook redeliveries not answered duplicate with the original id', w.mismatch);
  row('expected to complete (acknowledged, not cancelled, not doomed)', f.expected);
  row('completed (once, by token)', f.completed);
  row('  of them confirmed after a lost reply (gone on asking again)', f.confirmedAfterError);
  row('  of them done in a process killed with the complete in flight (unlogged, row gone)', f.completedInKilled);
  zero('lost (acknowledged, never completed)', f.lost);
  zero('doubled (completed more than once in one admission)', f.doubled);
  zero('run again after completing: a retried POST re-admitted the id once its row was gone', f.readmitted);
  zero('completed or claimed, never sent', f.unknown);
  zero('early (claimed before due, server clock)', f.early);
  zero('claimed again inside a lease, no retry', f.reclaimedInLease);
  row('claimed again after a lease ran out (reaped)', f.reclaimedAfterLease);
  zero('payloads not byte-exact at the consumer', f.notByteExact);
  row('cancelled (DELETE 200)', f.cancelled);
  zero('cancelled, then claimed', f.cancelledCompleted);
  zero('doomed jobs not in the dead set (or completed)', f.doomedNotDead);
  zero('fail-once jobs completed without their retry', f.failOnceNotRetried);
  row('flow parents (cross-queue completions the pump delivered)', `${f.flowParents} (${delivered})`);
  zero('flow parents claimed before all their children were done', f.flowsOutOfOrder);
  zero('flow parents left held', f.flowsHeld);
  row('fairness: most claims one tenant got in a row while another waited', f.fairnessMax, `≤ ${o.consumers * 2}`, f.fairnessMax <= o.consumers * 2);
  zero('orphans at the end (rows, lane or ring entries, set members)', f.orphans);
  row("library's completed counter / completions seen", `${f.counter.library} / ${f.counter.logged}`, 'equal', f.counter.library === f.counter.logged);
  zero('5xx other than 503', bad5xx);
  zero('4xx (a good request refused)', ledger.refused.length);
  zero('requests given up (60 s without an answer)', ledger.gaveUp);
  row('longest outage seen by a producer', `${ledger.longestOutageMs} ms`);
  for (const [v, l] of f.latency) row(`ack → completion, ${v} (n ${l.n})`, `p50 ${l.p50} ms, p99 ${l.p99} ms`);
  return rows;
}

/** What a table is printed from: either soak's result (this one, or the producer half's in soak/edge/). */
export interface Printable {
  table: SoakResult['table'];
  findings: { examples: string[] };
  ledger: { bad5xx: Map<number, { count: number; sample: string }>; refused: string[] };
}

export function printTable(result: Printable): string {
  const lines = ['| measure | value | must be |', '| --- | --: | --- |'];
  for (const r of result.table) lines.push(`| ${r.measure} | ${r.value} | ${r.must}${r.ok ? '' : ' **FAILED**'} |`);
  const notes = [
    ...result.findings.examples,
    ...[...result.ledger.bad5xx].map(([status, s]) => `${s.count}× ${status}: ${s.sample}`),
    ...result.ledger.refused.slice(0, 5),
  ];
  return [...lines, ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : [])].join('\n');
}
