// The fuzz of the producer Worker's endpoints (POST jobs, POST batch, GET a job, POST a
// webhook, anything else), Valkey up; then lanes and the schedule (Emq-Group, Emq-Delay,
// Emq-Not-Before, a batch item's group, delay, notBefore). Setup and the oracle: ./setup.ts,
// ./oracle.ts; the placement rules and values: ./placement.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUp, printTallies, statusesOf } from './oracle.js';
import { PLACEMENT_EXAMPLES, PRODUCER_EXAMPLES, placementArb, planProducer, producerArb, type ProducerCase } from './producer-cases.js';
import { printReached, reachedOf } from './placement.js';
import { RUNS, alive, budget, params, producerUrl, startParts, stopParts } from './setup.js';

describe(`fuzz the producer Worker (FUZZ_RUNS=${RUNS})`, () => {
  beforeAll(startParts, 120_000);
  afterAll(async () => {
    printTallies('the producer Worker');
    printReached();
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

  it(
    'the producer Worker: Emq-Group, Emq-Delay, Emq-Not-Before and batch placement, valid and hostile, each landing checked',
    async () => {
      await fc.assert(
        fc.asyncProperty(placementArb, async (c) => {
          await runUp(planProducer(c), producerUrl, 'up', true);
        }),
        { ...params(RUNS * 4), examples: PLACEMENT_EXAMPLES.map((e) => [e] as [ProducerCase]) },
      );
      await alive('after the placement fuzz');
      // not vacuous: every landing and every refusal was reached
      if (RUNS >= 20) {
        for (const what of [
          'jobs 201 flat',
          'jobs 201 lane',
          'jobs 201 scheduled in',
          'jobs 201 scheduled at',
          'jobs 201 scheduled in, grouped',
          'jobs 201 scheduled at, grouped',
          'jobs 201 lane (default lane)',
          'jobs 400 invalid_group',
          'jobs 400 invalid_delay',
          'jobs 400 invalid_not_before',
          'batch 200 scheduled in',
          'batch 200 scheduled at',
          'batch 200 lane',
          'batch 400 invalid_delay',
          'batch 400 invalid_not_before',
          'batch 400 invalid_group',
        ]) {
          expect(reachedOf(what), `placement: ${what}…`).toBeGreaterThan(0);
        }
      }
    },
    budget(RUNS * 4),
  );
});
