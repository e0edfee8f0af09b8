// The producer Worker's endpoints: every endpoint's cases in one arbitrary and one plan
// (each endpoint's in its own producer-<endpoint>.ts), the placement fuzz, and the
// regression examples replayed first.
import fc from 'fast-check';
import { bodyArb, bytesOf, headersOf, rawSegArb, validId, type Body } from './arbitraries.js';
import { model } from './model.js';
import { violation, type Plan, type Req } from './oracle.js';
import { placeArb, type PlaceV } from './placement.js';
import { MAX_PAYLOAD, admin } from './setup.js';
import { type AuthV, type IdV, authArb, authHeader, idArb, ok, okAuthArb, CLEAN_QUEUES } from './producer-common.js';
import { type JobsCase, jobsArb, planJobs } from './producer-jobs.js';
import { type BatchCase, type ItemV, batchArb, placedItemArb, planBatch } from './producer-batch.js';
import { type GetCase, getArb, planGet } from './producer-get.js';
import { type HookCase, hookArb, planHook } from './producer-hooks.js';
import { type FlowCase, flowArb, planFlow } from './producer-flows.js';
import {
  type GroupCtlCase,
  type JobCtlCase,
  type QueueCtlCase,
  groupCtlArb,
  jobCtlArb,
  planGroupCtl,
  planJobCtl,
  planQueueCtl,
  queueCtlArb,
} from './producer-control.js';
import { type SchedCase, planSched, schedArb } from './producer-schedules.js';
import { type ListCase, listArb, planList } from './producer-lists.js';

// ---------------------------------------------------------------- producer: any other request

interface OtherCase {
  t: 'other';
  method: string;
  prefix: string;
  segs: string[];
  auth: AuthV;
  body: Body | undefined;
}
const methodArb = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'QUERY');
const otherArb: fc.Arbitrary<OtherCase> = fc.record({
  t: fc.constant('other' as const),
  method: methodArb,
  prefix: fc.constantFrom('', '/v1', '/v1/queues', '/v1/queues/fz-b', '/v1/queues/fz-b/jobs', '/v1/webhooks', '/healthz', '/readyz', '/v2'),
  segs: fc.array(rawSegArb, { maxLength: 4 }),
  auth: authArb,
  body: fc.option(bodyArb(MAX_PAYLOAD), { nil: undefined }),
});
function planOther(c: OtherCase): Plan {
  const path = `${c.prefix}/${c.segs.join('/')}`;
  const hasBody = c.body !== undefined && c.method !== 'GET' && c.method !== 'HEAD';
  const req: Req = {
    method: c.method,
    path,
    headers: headersOf([['Authorization', authHeader(c.auth)]], undefined),
    ...(hasBody ? { body: bytesOf(c.body!) } : {}),
  };
  const base = { label: 'producer any other request', req, service: 'producer' as const };
  if ((c.method === 'GET' || c.method === 'HEAD') && (path === '/healthz' || path === '/readyz'))
    return { ...base, status: 200, valkey: path === '/readyz', writes: () => false };
  // a POST may hit a write route by chance: then it must answer like one
  return {
    ...base,
    valkey: undefined,
    writes: (ans) => (c.method === 'POST' && ans.status < 300 ? 'maybe' : false),
    async check(ans) {
      if (c.method !== 'POST') return;
      const j = ans.json as { id?: string; queue?: string; results?: Array<{ id: string }> };
      for (const id of j?.results?.map((r) => r.id) ?? (j?.id ? [j.id] : [])) {
        if (!(await admin.hgetall(`emq:{${String(j.queue)}}:job:${id}`)).payload) violation(base, ans, `a 2xx naming ${id}, which is not there`);
      }
      if (j?.queue)
        for (const id of j.results?.map((r) => r.id) ?? (j.id ? [j.id] : [])) {
          const row = await admin.hgetall(`emq:{${j.queue}}:job:${id}`);
          const due = row.state?.toString() === 'scheduled' ? Number(await admin.text('ZSCORE', `emq:{${j.queue}}:schedule`, id)) : undefined;
          model.addJob(j.queue, id, row.payload!, { group: row.group?.toString(), due });
        }
    },
  };
}

export type ProducerCase = JobsCase | BatchCase | GetCase | HookCase | FlowCase | OtherCase | JobCtlCase | QueueCtlCase | GroupCtlCase | SchedCase | ListCase;
export function planProducer(c: ProducerCase): Plan {
  switch (c.t) {
    case 'jobs':
      return planJobs(c);
    case 'batch':
      return planBatch(c);
    case 'get':
      return planGet(c);
    case 'hook':
      return planHook(c);
    case 'flow':
      return planFlow(c);
    case 'other':
      return planOther(c);
    case 'job-ctl':
      return planJobCtl(c);
    case 'queue-ctl':
      return planQueueCtl(c);
    case 'group-ctl':
      return planGroupCtl(c);
    case 'sched':
      return planSched(c);
    case 'list':
      return planList(c);
  }
}
export const producerArb: fc.Arbitrary<ProducerCase> = fc.oneof(
  { weight: 4, arbitrary: jobsArb },
  { weight: 3, arbitrary: batchArb },
  { weight: 2, arbitrary: getArb },
  { weight: 4, arbitrary: hookArb },
  { weight: 2, arbitrary: flowArb },
  { weight: 1, arbitrary: otherArb },
  { weight: 2, arbitrary: listArb },
);

// ---------------------------------------------------------------- the placement fuzz: lanes and the schedule

const placeQueueArb = fc.constantFrom(...CLEAN_QUEUES, 'fz-a.lane', 'fz-a.lx', 'fz-b').map((seg) => ({ seg }));
/** A few pooled payloads: a reused Idempotency-Key then meets the same payload, and its lane decides. */
const pooledBodyArb = fc.oneof(
  { weight: 3, arbitrary: fc.nat(2).map((n) => ({ t: 'text' as const, text: `pooled ${n}` })) },
  { weight: 1, arbitrary: bodyArb(MAX_PAYLOAD) },
);
const placedJobsArb: fc.Arbitrary<JobsCase> = fc.record({
  t: fc.constant('jobs' as const),
  auth: okAuthArb,
  queue: placeQueueArb,
  id: fc.option(idArb, { nil: undefined, freq: 3 }),
  key: fc.option(fc.record({ t: fc.constant('pool' as const), n: fc.nat(4) }), { nil: undefined, freq: 2 }),
  contentType: fc.constant(undefined),
  body: pooledBodyArb,
  extra: fc.constant(undefined),
  place: placeArb,
});
const placedBatchArb: fc.Arbitrary<BatchCase> = fc.record({
  t: fc.constant('batch' as const),
  auth: okAuthArb,
  queue: placeQueueArb,
  doc: fc.array(placedItemArb, { minLength: 1, maxLength: 6 }).map((items) => ({ t: 'items' as const, items })),
  contentType: fc.constant(undefined),
  extra: fc.constant(undefined),
});
const placedGetArb: fc.Arbitrary<GetCase> = fc.record({
  t: fc.constant('get' as const),
  auth: okAuthArb,
  queue: placeQueueArb,
  id: fc.record({ t: fc.constant('known' as const), n: fc.nat(), alt: validId }),
  head: fc.constant(false),
  extra: fc.constant(undefined),
});
/** Authorized requests to clean queues, each carrying a placement (or a batch whose items do), and reads of what landed. */
export const placementArb: fc.Arbitrary<ProducerCase> = fc.oneof(
  { weight: 6, arbitrary: placedJobsArb },
  { weight: 3, arbitrary: placedBatchArb },
  { weight: 1, arbitrary: placedGetArb },
);

// ---------------------------------------------------------------- the control fuzz: jobs, queues, lanes, repeatables

/** Tokens that may enqueue and those that may not (ctlsome: read and control), for the jobs the control routes then act on. */
const ctlJobAuthArb = fc.constantFrom<AuthV>(
  { t: 'ok', who: 'ctl' },
  { t: 'ok', who: 'ctl' },
  { t: 'ok', who: 'ctl' },
  { t: 'ok', who: 'all' },
  { t: 'ok', who: 'ctlsome' },
  { t: 'ok', who: 'enq' },
);
/**
 * The control and schedule routes (./producer-control.ts, ./producer-schedules.ts), with placed
 * and keyed jobs to act on (their keys the control token's: a DELETE with one frees it) and
 * reads of the jobs they acted on.
 */
export const controlArb: fc.Arbitrary<ProducerCase> = fc.oneof(
  { weight: 5, arbitrary: jobCtlArb },
  { weight: 2, arbitrary: queueCtlArb },
  { weight: 3, arbitrary: groupCtlArb },
  { weight: 6, arbitrary: schedArb },
  {
    weight: 3,
    arbitrary: placedJobsArb.map((c): ProducerCase => ({ ...c, auth: c.auth.t === 'ok' && c.auth.who === 'some' ? { t: 'ok', who: 'ctl' } : c.auth })),
  },
  { weight: 2, arbitrary: fc.tuple(placedJobsArb, ctlJobAuthArb).map(([c, auth]): ProducerCase => ({ ...c, auth })) },
  { weight: 1, arbitrary: fc.tuple(placedGetArb, ctlJobAuthArb).map(([c, auth]): ProducerCase => ({ ...c, auth })) },
);

// ---------------------------------------------------------------- the bugs this fuzz found, replayed first on every run

/** A POST …/jobs to fz-a.1, unplaced, with `over` laid on. */
const plainJob = (over: Partial<JobsCase>): ProducerCase => ({
  t: 'jobs',
  auth: ok,
  queue: { seg: 'fz-a.1' },
  id: undefined,
  key: undefined,
  contentType: undefined,
  body: { t: 'text', text: 'plain' },
  extra: undefined,
  place: {},
  ...over,
});
const hook = (over: Partial<HookCase>): HookCase => ({
  t: 'hook',
  source: { known: 'gh' },
  mutation: 'valid',
  secret: 0,
  body: { t: 'bytes', bytes: new Uint8Array([1, 2]) },
  stripe: 'event',
  jsonJunk: 'null',
  delivery: { t: 'fresh', value: 'regression' },
  event: undefined,
  skew: 0,
  junk: '',
  contentType: undefined,
  extra: undefined,
  ...over,
});
/** A POST …/jobs of `size` bytes under Idempotency-Key pool[n], in queue fz-a.1. */
const keyedJob = (n: number, size: number, fill: 'mixed' | 'ascii' | 'ff'): ProducerCase => ({
  t: 'jobs',
  auth: ok,
  queue: { seg: 'fz-a.1' },
  id: undefined,
  key: { t: 'pool', n },
  contentType: undefined,
  body: { t: 'sized', size, fill },
  extra: undefined,
  place: {},
});

export const PRODUCER_EXAMPLES: ProducerCase[] = [
  // an Idempotency-Key's payload went into the REST path (it was not @enqueue-once's last
  // argument): past 16 KiB the gateway answered 431 (a 502 here) or cut the reply (a 500);
  // then non-UTF-8 bytes past ~2.6 KB had no REST form (400) until the payload went last
  keyedJob(0, 6392, 'mixed'),
  keyedJob(1, 40_000, 'ascii'),
  keyedJob(2, 2_000, 'ff'),
  keyedJob(3, 40_000, 'ff'),
  // a webhook's envelope is @enqueue-once's payload too
  hook({ body: { t: 'sized', size: 40_000, fill: 'mixed' }, delivery: { t: 'fresh', value: 'regression-big' } }),
  hook({ source: { known: 'st' }, stripe: 'jsonJunk', jsonJunk: 'null' }),
  hook({ source: { known: 'sw' }, stripe: 'jsonJunk', jsonJunk: 'null', delivery: { t: 'fresh', value: 'regression-sw' } }),
  // each answer the property insists it saw, so that no seed can miss one
  plainJob({}),
  plainJob({ auth: { t: 'none' } }),
  plainJob({ id: { t: 'raw', value: 'JOB' } }),
  plainJob({ body: { t: 'sized', size: MAX_PAYLOAD + 1, fill: 'ascii' } }),
  {
    t: 'batch',
    auth: ok,
    queue: { seg: 'fz-a.1' },
    doc: { t: 'items', items: [{ t: 'text', payload: 'batched', id: undefined, place: {} }] },
    contentType: undefined,
    extra: undefined,
  },
];

/** A POST …/jobs to fz-a.1 with this placement. */
const placedJob = (place: PlaceV): ProducerCase => plainJob({ body: { t: 'text', text: 'pooled 0' }, place });
const repeated = { t: 'fresh' as const, id: 'JOB0KHTOWnGLuC' };
const text = (payload: string, id: IdV | undefined, place: PlaceV): ItemV => ({ t: 'text', payload, id, place });

/** The placement fuzz's findings, replayed first on every run. */
export const PLACEMENT_EXAMPLES: ProducerCase[] = [
  // Date.parse rolled a day past its month's end over (Feb 30 was scheduled for Mar 2), and
  // read hour 24 as the next midnight: both were 201 scheduled
  placedJob({ notBefore: { t: 'fixed', text: '2025-02-30T09:30:00.8Z' } }),
  placedJob({ notBefore: { t: 'fixed', text: '2025-02-29T09:30:00+01:00' } }),
  placedJob({ notBefore: { t: 'fixed', text: '2025-01-01T24:00:00Z' } }),
  // an id repeated in a batch in items of other kinds: the pipelines ran at once, and the
  // lane item landed first (enqueued) while the first, scheduled, item answered duplicate
  {
    t: 'batch',
    auth: ok,
    queue: { seg: 'fz-a.lx' },
    doc: {
      t: 'items',
      items: [
        text('first', repeated, { group: { t: 'pool', n: 0 }, delay: { t: 'unit', unit: 'm', n: 99, edge: 'n', zeros: 0 } }),
        text('second', { t: 'again', n: 0, alt: repeated.id }, {}),
        text('third', { t: 'again', n: 0, alt: repeated.id }, { group: { t: 'fresh', ns: 'WXA', s: 1n } }),
      ],
    },
    contentType: undefined,
    extra: undefined,
  },
  // one of each refusal the property insists on reaching, so that no seed misses one (a
  // clean-clone run of 60 drew no batch with a bad Emq-Delay)
  ...(
    [
      { delay: { t: 'raw', text: '5 minutes' } },
      { notBefore: { t: 'fixed', text: '2025-13-01T00:00:00Z' } },
      { group: { t: 'raw', text: 'not a group' } },
    ] satisfies PlaceV[]
  ).flatMap((place): ProducerCase[] => [
    placedJob(place),
    {
      t: 'batch',
      auth: ok,
      queue: { seg: 'fz-a.1' },
      doc: { t: 'items', items: [text('refused', undefined, place)] },
      contentType: undefined,
      extra: undefined,
    },
  ]),
];

// ---------------------------------------------------------------- the control fuzz's walk through each verb, replayed first

const CTL: AuthV = { t: 'ok', who: 'ctl' };
const EXAMPLE_JOB = 'JOB0000000Ct1a';
const jobCtl = (verb: JobCtlCase['verb'], over: Partial<JobCtlCase> = {}): ProducerCase => ({
  t: 'job-ctl',
  verb,
  auth: CTL,
  queue: { seg: 'fz-a.1' },
  id: { t: 'fresh', id: EXAMPLE_JOB },
  key: undefined,
  delay: { t: 'raw', text: '2h' },
  notBefore: { t: 'unix', when: { rel: 600_000 }, zeros: 0, number: false },
  sends: 'delay',
  group: undefined,
  extra: undefined,
  ...over,
});
const sched = (verb: SchedCase['verb'], over: Partial<SchedCase> = {}): ProducerCase => ({
  t: 'sched',
  verb,
  auth: CTL,
  queue: { seg: 'fz-a.1' },
  name: { t: 'text', text: 'ctl-example' },
  body: {
    t: 'fields',
    fields: [
      ['every', '"1h"'],
      ['payload', '"tick"'],
    ],
  },
  count: undefined,
  cursor: undefined,
  template: true,
  extra: undefined,
  ...over,
});
const lane = (verb: GroupCtlCase['verb'], paused: boolean): ProducerCase => ({
  t: 'group-ctl',
  verb,
  auth: CTL,
  queue: { seg: 'fz-a.lane' },
  group: { t: 'pool', n: 0 },
  body: {
    t: 'fields',
    fields: [
      ['paused', String(paused)],
      ['limit', '3'],
    ],
  },
  extra: undefined,
});
const queueCtl = (verb: QueueCtlCase['verb']): ProducerCase => ({
  t: 'queue-ctl',
  verb,
  auth: CTL,
  queue: { seg: 'fz-a.lane' },
  count: '1',
  cursor: undefined,
  extra: undefined,
});
const keyedScheduled = (id: string): ProducerCase =>
  plainJob({
    auth: CTL,
    id: { t: 'fresh', id },
    key: { t: 'raw', value: 'ctl-example' },
    place: { delay: { t: 'unit', unit: 'h', n: 1, edge: 'n', zeros: 0 } },
  });

/** Each verb once, in an order that reaches each outcome the control phase insists on (so that no seed misses one). */
export const CONTROL_EXAMPLES: ProducerCase[] = [
  keyedScheduled(EXAMPLE_JOB),
  jobCtl('patch'),
  jobCtl('patch', { sends: 'notBefore' }),
  jobCtl('patch', { sends: 'both' }),
  jobCtl('promote'),
  jobCtl('promote'),
  jobCtl('patch'),
  jobCtl('delete', { auth: { t: 'ok', who: 'all' } }),
  jobCtl('delete', { key: { t: 'raw', value: 'ctl-example' } }),
  jobCtl('delete'),
  // its key freed: the same key lands a new job
  keyedScheduled('JOB0000000Ct1b'),
  jobCtl('delete', { id: { t: 'fresh', id: 'JOB0000000Ct1b' } }),
  lane('put', true),
  { ...(lane('put', true) as GroupCtlCase), body: { t: 'raw', text: '{}' } },
  { ...(queueCtl('get') as QueueCtlCase), count: '0' },
  queueCtl('get'),
  lane('get', true),
  lane('put', false),
  queueCtl('pause'),
  queueCtl('resume'),
  sched('put'),
  sched('put'),
  sched('put', {
    body: {
      t: 'fields',
      fields: [
        ['every', '"5m"'],
        ['payload', '"tick"'],
      ],
    },
  }),
  sched('put', {
    body: {
      t: 'fields',
      fields: [
        ['every', '"0s"'],
        ['payload', '"tick"'],
      ],
    },
  }),
  sched('get'),
  sched('list'),
  sched('pause'),
  sched('resume'),
  sched('run-now'),
  sched('delete'),
  sched('get'),
  // the control fuzz's find: a cursor past ZSCAN's 2^64 - 1 answered 502
  sched('list', { cursor: '18446744073709551616' }),
  sched('put', { auth: { t: 'ok', who: 'all' } }),
];
