// The soak, short: 32 producers through the Worker (workerd), the gateway and Valkey (AOF,
// appendfsync always) for 25 s, with one fault of each kind. `npm run soak` is the whole proof,
// with the library's consumer running (soak/run.ts, docs/proof.md).
import { expect, it } from 'vitest';
import { printTable, runSoak } from '../soak/edge/run.js';

it('under kill -9, SCRIPT FLUSH, CLIENT KILL and a gateway restart: nothing lost, nothing doubled, every byte exact', { timeout: 180_000 }, async () => {
  const result = await runSoak({ seconds: 25, producers: 32, faultsEach: 1, log: () => undefined });
  console.log(printTable(result));
  const acked = [...result.ledger.jobs.values()].filter((j) => j.acked).length;
  expect(acked).toBeGreaterThan(200);
  expect(result.faults.map((f) => f.kind)).toEqual(['kill -9 Valkey + restart', 'SCRIPT FLUSH', "CLIENT KILL of the gateway's connections", 'gateway restart']);
  expect(result.faults[2]!.note).toMatch(/^[1-9]\d* connection/);
  expect(result.findings).toMatchObject({ lost: 0, doubled: 0, rowsWithoutPending: 0, pendingWithoutRow: 0, notByteExact: 0, unknownRows: 0 });
  expect(result.findings.rows).toBe(result.ledger.jobs.size);
  expect(result.table.filter((r) => !r.ok)).toEqual([]);
});
