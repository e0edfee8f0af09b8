// The fuzz of the gateway with the admin token: any command the server knows, scripts that
// write and then fail; no keyspace check (an admin may write and still answer 4xx), but never
// a 5xx and never a crash. Setup and the oracle: ./setup.ts, ./oracle.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCmdArb, gwAuthArb, gwCaseArb, planGateway } from './gateway-cases.js';
import { printTallies, runUp } from './oracle.js';
import { RUNS, admin, alive, budget, gw, params, startParts, stopParts } from './setup.js';

describe(`fuzz the gateway with the admin token (FUZZ_RUNS=${RUNS})`, () => {
  beforeAll(startParts, 120_000);
  afterAll(async () => {
    printTallies('the gateway, admin token');
    expect(await stopParts()).toBe(0);
  }, 60_000);

  it(
    'the gateway with the admin token: anything goes, but never a 5xx, never a crash',
    async () => {
      await fc.assert(
        fc.asyncProperty(gwCaseArb(adminCmdArb, gwAuthArb(30)), async (c) => {
          await runUp(planGateway(c, 'admin'), gw.url, 'admin', false);
        }),
        params(RUNS * 4),
      );
      await admin.call('FLUSHALL');
      await alive('after the admin fuzz');
    },
    budget(RUNS * 4),
  );
});
