// The proof, short: 32 producers send every verb (webhooks too) through the Worker (workerd),
// the gateway and Valkey (AOF, appendfsync always) for 20 s while the library's consumer
// (soak/library/, 4 processes from dist/, which pretest builds) takes the jobs to the end,
// with one fault of each kind; then the queues drain and the verdict holds the producers'
// ledger against the completion logs and every key left. `npm run soak` is the long run
// (soak/run.ts, docs/proof.md), and SOAK_MODE=glide its emq producer mode.
import { expect, it } from 'vitest';
import { FAULT_KINDS } from '../soak/faults.js';
import { VERBS } from '../soak/ledger.js';
import { printTable, runSoak } from '../soak/run.js';

it('every verb, the library consuming, one fault of each kind: every acknowledged job done once, none early, flows in order, no orphans', {
  timeout: 240_000,
}, async () => {
  const result = await runSoak({ seconds: 20, producers: 32, faultsEach: 1, consumers: 4, drainSeconds: 60, log: () => undefined });
  console.log(printTable(result));
  expect(result.faults.map((f) => f.kind)).toEqual([...FAULT_KINDS]);
  // each fault hurt something: connections killed, a consumer killed after a claim
  expect(result.faults.find((f) => f.kind === "CLIENT KILL of the gateway's connections")!.note).toMatch(/^[1-9]\d* connection/);
  expect(result.faults.find((f) => f.kind === 'a consumer killed mid-job')!.note).toMatch(/^loop \d+: SIGKILL/);
  const acked = [...result.ledger.jobs.values()].filter((j) => j.acked);
  expect(acked.length).toBeGreaterThan(200);
  for (const verb of VERBS)
    expect(
      acked.some((j) => j.verb === verb),
      `no ${verb} acknowledged`,
    ).toBe(true);
  expect(result.findings.completed).toBe(result.findings.expected);
  expect(result.ledger.webhooks.concurrent + result.ledger.webhooks.redelivered).toBeGreaterThan(0);
  expect(result.table.filter((r) => !r.ok)).toEqual([]);
});
