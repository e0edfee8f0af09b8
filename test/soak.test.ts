// The soak, short: 32 producers send every verb through the Worker (workerd), the gateway and
// Valkey (AOF, appendfsync always) for 25 s while 4 of the library's consumer loops take the
// jobs to the end, with one fault of each kind; then the ledger is held against the completion
// log and the keyspace. `npm run soak` is the long run. Needs dist/ (npm run build:node): the
// consumer loops run as processes of their own.
import { expect, it } from 'vitest';
import { FAULT_KINDS } from '../soak/faults.js';
import { printTable, runSoak } from '../soak/run.js';

it('every verb, the library consumer running, under kill -9, SCRIPT FLUSH, CLIENT KILL, a gateway restart and a consumer killed mid-job: every acknowledged job done once, nothing early, nothing left', {
  timeout: 300_000,
}, async () => {
  const result = await runSoak({ seconds: 25, producers: 32, faultsEach: 1, drainSeconds: 120, log: () => undefined });
  console.log(printTable(result));
  expect(result.findings.acked).toBeGreaterThan(200);
  expect(result.faults.map((f) => f.kind)).toEqual([...FAULT_KINDS]);
  expect(result.faults[2]!.note).toMatch(/^[1-9]\d* connection/);
  expect(result.findings).toMatchObject({ lost: 0, doubled: 0, unknown: 0, early: 0, reclaimedInLease: 0, notByteExact: 0, cancelledCompleted: 0, orphans: 0 });
  expect(result.findings.completed).toBe(result.findings.expected);
  expect(result.table.filter((r) => !r.ok)).toEqual([]);
});
