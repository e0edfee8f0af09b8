// The fuzz of the producer Worker's endpoints (POST jobs, POST batch, GET a job, POST a
// webhook, anything else), Valkey up. Setup and the oracle: ./setup.ts, ./oracle.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUp, printTallies, statusesOf } from './oracle.js';
import { PRODUCER_EXAMPLES, planProducer, producerArb, type ProducerCase } from './producer-cases.js';
import { RUNS, alive, budget, params, producerUrl, startParts, stopParts } from './setup.js';

describe(`fuzz the producer Worker (FUZZ_RUNS=${RUNS})`, () => {
  beforeAll(startParts, 120_000);
  afterAll(async () => {
    printTallies('the producer Worker');
    expect(await stopParts()).toBe(0);
  }, 60_000);

  it(
    'the producer Worker: every endpoint, hostile requests, Valkey up',
    async () => {
      await fc.assert(
        fc.asyncProperty(producerArb, async (c) => {
          await runUp(planProducer(c), producerUrl, 'up', true);
        }),
        { ...params(RUNS * 8), examples: PRODUCER_EXAMPLES.map((e) => [e] as [ProducerCase]) },
      );
      await alive('after the producer fuzz');
      // not vacuous: the oracle's every branch was reached
      const seen = statusesOf('producer POST /v1/queues/:queue/jobs');
      if (RUNS >= 20) for (const s of [201, 400, 401, 413]) expect(seen.get(s), `POST jobs answered ${s} at least once`).toBeGreaterThan(0);
      if (RUNS >= 20) expect(statusesOf('producer POST /v1/webhooks').get(201)).toBeGreaterThan(0);
      if (RUNS >= 20) expect(statusesOf('producer POST /v1/queues/:queue/batch').get(200)).toBeGreaterThan(0);
    },
    budget(RUNS * 8),
  );
});
