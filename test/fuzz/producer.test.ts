// The fuzz of the producer Worker's endpoints (POST jobs, POST batch, POST flows, GET a job,
// POST a webhook, anything else), Valkey up; then lanes and the schedule (Emq-Group, Emq-Delay,
// Emq-Not-Before, a batch item's group, delay, notBefore); then flows (valid, hostile, sent again);
// then the control and schedule routes, on a second Worker over the gateway's control token,
// with tokens with and without `control`. Setup and the oracle: ./setup.ts,
// ./oracle.ts; the placement rules and values: ./placement.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUp, printTallies, statusesOf } from './oracle.js';
import {
  CONTROL_EXAMPLES,
  PLACEMENT_EXAMPLES,
  PRODUCER_EXAMPLES,
  controlArb,
  placementArb,
  planProducer,
  producerArb,
  type ProducerCase,
} from './producer-cases.js';
import { FLOW_EXAMPLES, flowsArb } from './producer-flows.js';
import { printReached, reachedOf } from './placement.js';
import { RUNS, alive, budget, controlUrl, params, producerUrl, startControlWorker, startParts, stopParts } from './setup.js';

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
      if (RUNS >= 60) {
        // (from the default 60 runs on: at fewer, a rare landing may go unreached by chance)
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

  it(
    'the producer Worker: POST flows in one queue and across queues, valid, hostile and sent again, every key landed checked',
    async () => {
      await fc.assert(
        fc.asyncProperty(flowsArb, async (c) => {
          await runUp(planProducer(c), producerUrl, 'up', true);
        }),
        { ...params(RUNS * 3), examples: FLOW_EXAMPLES.map((e) => [e] as [ProducerCase]) },
      );
      await alive('after the flows fuzz');
      // not vacuous: every landing, duplicate and refusal was reached
      if (RUNS >= 60) {
        for (const what of [
          'flows 201 in its queue',
          'flows 201 in its queue, every id given',
          'flows 201 in its queue, as JSON',
          'flows 201 in its queue, as JSON, bytes not UTF-8',
          'flows 201 in its queue, bytes not UTF-8',
          'flows 201 across queues',
          'flows 201 across queues, bytes not UTF-8',
          'flows 201 across queues, a child in its queue not UTF-8',
          'flows 201 a child onFailure ignore',
          'flows 200 duplicate in its queue: a held parent',
          'flows 200 duplicate across queues: the same flow',
          'flows 200 duplicate across queues: a held parent, another payload',
          'flows 409 job_exists in its queue',
          'flows 409 job_exists across queues',
          'flows 409 conflict',
          'flows 400 invalid_flow, a child',
          'flows 400 invalid_flow',
          'flows 403 forbidden_queue, a child',
          'flows 413 payload_too_large',
        ]) {
          expect(reachedOf(what), `flows: ${what}…`).toBeGreaterThan(0);
        }
      }
    },
    budget(RUNS * 3),
  );

  it(
    'the producer Worker: the control routes (a job, a queue, a lane) and the repeatables, tokens with and without control, hostile ids, names, durations, bodies and queries',
    async () => {
      await startControlWorker();
      await fc.assert(
        fc.asyncProperty(controlArb, async (c) => {
          await runUp(planProducer(c), controlUrl, 'up', true);
        }),
        { ...params(RUNS * 6), examples: CONTROL_EXAMPLES.map((e) => [e] as [ProducerCase]) },
      );
      await alive('after the control fuzz');
      // not vacuous: each verb's answer and each refusal was reached (the examples walk them all once)
      for (const what of [
        'control 403 forbidden_action (control)',
        'delete 200 pending',
        'delete 200 scheduled',
        'delete 200 pending, its key freed',
        'promote 200',
        'promote 409 not_scheduled',
        'patch 200 rescheduled in',
        'patch 200 rescheduled at',
        'patch 409 not_scheduled',
        'patch 400 invalid_delay',
        'group 200 set, paused',
        'group 200 set, resumed',
        'group 200 read',
        'group 400 invalid_body',
        'queue 200 read',
        'queue 200 pause',
        'queue 200 resume',
        'queue 400 invalid_query',
        'schedules 201 registered',
        'schedules 200 exists',
        'schedules 409 schedule_exists',
        'schedules 400 invalid_body',
        'schedules 200 read, with its template',
        'schedules 200 listed',
        'schedules 200 pause',
        'schedules 200 resume',
        'schedules 200 run-now',
        'schedules 200 cancelled',
        'schedules 400 invalid_query (cursor)',
      ]) {
        expect(reachedOf(what), `control: ${what}…`).toBeGreaterThan(0);
      }
      // (a flow's job, from the flows phase: at fewer runs it may go unpicked)
      if (RUNS >= 60) expect(reachedOf('delete 409 job_in_flow'), 'control: delete 409 job_in_flow').toBeGreaterThan(0);
    },
    budget(RUNS * 6, 30_000),
  );
});
