// The fuzz of the gateway with producer tokens and wrong ones: /, /pipeline, /multi-exec,
// path-style, Valkey up. Setup and the oracle: ./setup.ts, ./oracle.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_EXAMPLES, gwAuthArb, gwCaseArb, planGateway, producerCmdArb, type GwCase } from './gateway-cases.js';
import { printTallies, runUp, statusesOf } from './oracle.js';
import { RUNS, admin, alive, budget, gw, params, startParts, stopParts } from './setup.js';

describe(`fuzz the gateway with producer tokens (FUZZ_RUNS=${RUNS})`, () => {
  beforeAll(startParts, 120_000);
  afterAll(async () => {
    printTallies('the gateway, producer tokens');
    expect(await stopParts()).toBe(0);
  }, 60_000);

  it(
    'the gateway: /, /pipeline, /multi-exec, path-style; producer and wrong tokens; Valkey up',
    async () => {
      await fc.assert(
        fc.asyncProperty(gwCaseArb(producerCmdArb, gwAuthArb(0)), async (c) => {
          await runUp(planGateway(c, 'up'), gw.url, 'up', true);
        }),
        { ...params(RUNS * 6), examples: GATEWAY_EXAMPLES.map((e) => [e] as [GwCase]) },
      );
      expect(await admin.call('EXISTS', 'pwned')).toBe(0);
      await alive('after the gateway fuzz');
      if (RUNS >= 20) expect(statusesOf('gateway').get(200)).toBeGreaterThan(0);
    },
    budget(RUNS * 6),
  );
});
