// The fuzz with Valkey stopped (the producer Worker and the gateway at once), then restarted
// on the same port: everything recovers, and the producer and gateway fuzz run again on the
// new, empty server. Setup and the oracle: ./setup.ts, ./oracle.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gwAuthArb, gwCaseArb, planGateway, producerCmdArb } from './gateway-cases.js';
import { model } from './model.js';
import { Violation, printTallies, runDown, runUp } from './oracle.js';
import { planProducer, producerArb } from './producer-cases.js';
import { RUNS, alive, budget, gw, params, producerUrl, restartValkey, resnap, seed, startParts, stopParts, stopValkey, waitReady } from './setup.js';

describe(`fuzz with Valkey stopped and restarted (FUZZ_RUNS=${RUNS})`, () => {
  beforeAll(startParts, 120_000);
  afterAll(async () => {
    printTallies('Valkey stopped and restarted');
    expect(await stopParts()).toBe(0);
  }, 60_000);

  it(
    'Valkey stopped: refusals stay refusals, everything else 503 with Retry-After; restarted on the same port: all recovers',
    async () => {
      // every part up and connected, the Worker to the gateway and the gateway to Valkey, before Valkey goes away
      await alive('before Valkey is stopped');
      await stopValkey();
      const batch = 12;
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.array(producerArb, { minLength: batch, maxLength: batch }),
            fc.array(gwCaseArb(producerCmdArb, gwAuthArb(0)), { minLength: batch, maxLength: batch }),
            async (ps, gs) => {
              await Promise.all([
                ...ps.map((c) => runDown(planProducer(c), producerUrl)),
                ...gs.map((c) => runDown(planGateway(c, 'down'), gw.url)),
                (async () => {
                  const r = await fetch(`${producerUrl}/readyz`);
                  if (r.status !== 503) throw new Violation(`Worker /readyz answered ${r.status} while Valkey is down`);
                  const g = await fetch(`${gw.url}/readyz`);
                  if (g.status !== 503) throw new Violation(`gateway /readyz answered ${g.status} while Valkey is down`);
                })(),
              ]);
            },
          ),
          // each run is 24 requests at once; shrinking would take long at ~5 s a run (the Worker's retries)
          { ...params(Math.max(1, Math.ceil(RUNS / 40))), endOnFailure: true },
        );
        await alive('while Valkey is down');
      } finally {
        // the same port: the gateway reconnects by itself
        await restartValkey();
      }
      await waitReady(`${gw.url}/readyz`, 20_000);
      await waitReady(`${producerUrl}/readyz`, 20_000);
      model.reset(); // a new, empty server (and an empty script cache: NOSCRIPT, then EVAL)
      await seed();
      await resnap();
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            producerArb.map((p) => ({ p })),
            gwCaseArb(producerCmdArb, gwAuthArb(0)).map((g) => ({ g })),
          ),
          async (c) => {
            if ('p' in c) await runUp(planProducer(c.p), producerUrl, 'restarted', true);
            else await runUp(planGateway(c.g, 'restarted'), gw.url, 'restarted', true);
          },
        ),
        params(RUNS * 2),
      );
      await alive('after Valkey came back');
    },
    budget(RUNS * 2, 60_000 + Math.ceil(RUNS / 40) * 30_000),
  );
});
