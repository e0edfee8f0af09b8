// The routes under /v1/queues/:queue, each a plain function of the call (call.ts); core.ts has
// checked the caller before any of them runs.
//   POST …/jobs       body = payload; Emq-Job-Id, Idempotency-Key, Emq-Group, Emq-Delay | Emq-Not-Before
//                     → 201 enqueued | 201 scheduled | 200 duplicate, Location: the job
//   POST …/batch      JSON items → 200 {queue, results: [{id, verdict}]}
//   POST …/flows      a parent and its children → 201 | 200 duplicate, Location: the parent
//   GET  …/jobs/:id   → 200 {id, queue, state, attempts, group?, runAt?, parent?, parentQueue?, lastError?}
//                     and with ?payload=1 the payload (as text, or base64 when not UTF-8) | 404
import { BatchError, ConflictError, FLOW_MAX_CHILDREN, addFlow, admitMany, jobDetail, validateId, validateQueue, type FlowResult } from '../../shared/index.js';
import { payloadField } from '../../shared/base64.js';
import type { Connection } from '../../shared/index.js';
import { scoped } from '../../shared/observe.js';
import { TooLarge } from '../http/body.js';
import { parseBatch } from './batch.js';
import { json, type Answer, type Call, type Service } from './call.js';
import { flowProblem, problemOf } from './error-problems.js';
import { parseFlow } from './flow-body.js';
import { admitJob, planJob, withDefaultLane } from './jobs.js';
import { Problem } from './problem.js';

/** The route's job id, valid. */
export function idOf(call: Call): string {
  const id = call.request.param('id') ?? '';
  validateId(id);
  return id;
}

/** A page's `?count=`: a whole number from 1 to `most`, else 400 invalid_query; `fallback` when absent. */
export function pageCount(call: Call, most: number, fallback: number): number {
  const given = call.request.query('count');
  if (given === undefined) return fallback;
  const count = /^[1-9][0-9]{0,3}$/.test(given) ? Number(given) : 0;
  if (count < 1 || count > most) throw new Problem(400, 'invalid_query', `count must be a whole number from 1 to ${most}`);
  return count;
}

/** The route's queue, valid and allowed for this caller. */
export function queueOf(call: Call): string {
  const queue = call.request.param('queue') ?? '';
  validateQueue(queue);
  if (!call.caller.allows(queue)) throw new Problem(403, 'forbidden_queue', `this token may not use queue "${queue}"`);
  return queue;
}

/**
 * The queue's connection, scoped to the request (its calls report to the request's record and
 * carry its id and traceparent over REST); every answer then tells which region takes its jobs.
 */
export function via(call: Call, service: Service, queue: string): Connection {
  const region = service.regionOf(queue);
  if (region) call.headers['Emq-Region'] = region;
  const { record } = call;
  return scoped(service.connection(queue), { headers: record.headers, observer: record });
}

/** The request body under `max`; past it, 413 saying what was too large (`what`: "the payload"...). */
export function requestBody(call: Call, max: number, what: string): Promise<Uint8Array> {
  return call.request.body(max, call.record).catch((err: unknown) => {
    if (err instanceof TooLarge) throw new Problem(413, 'payload_too_large', `${what} is larger than ${max} bytes`);
    throw err;
  });
}

const created = (verdict: string) => (verdict === 'duplicate' ? 200 : 201);

export async function postJob(call: Call, service: Service): Promise<Answer> {
  const { request } = call;
  const plan = planJob(queueOf(call), (name) => request.header(name), service.settings);
  const valkey = via(call, service, plan.queue);
  const payload = await requestBody(call, plan.maxPayloadBytes, 'the payload');
  const { id, verdict } = await admitJob(valkey, plan, call.caller, payload, service.mint);
  // the request's own path (…/v1/queues/<queue>/jobs): right under any prefix the app is mounted at
  return json(call, created(verdict), { id, queue: plan.queue, verdict }, { Location: `${request.path}/${id}` });
}

export async function postBatch(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const { maxBatchBytes, maxBatchItems, maxPayloadBytes, maxDelayMs, groupOf, dedupeTtlSeconds } = service.settings();
  const body = await requestBody(call, maxBatchBytes, 'the batch body');
  const items = parseBatch(body, maxBatchItems, maxPayloadBytes, maxDelayMs);
  // an item's Idempotency-Key lives where the header's does: the queue's slot, the caller's scope
  const scope = items.some((item) => item.idempotencyKey !== undefined) ? `key:${await call.caller.scope()}` : '';
  const jobs = items.map(({ idempotencyKey: key, ...job }) => ({
    ...job,
    ...withDefaultLane(queue, job, groupOf),
    once: key === undefined ? undefined : { scope, key, compare: true, ttlSeconds: dedupeTtlSeconds },
  }));
  // flat, lane and scheduled items alike: one pipeline, a result per item in order
  try {
    return json(call, 200, { queue, results: await admitMany(via(call, service, queue), queue, jobs, service.mint) });
  } catch (err) {
    if (!(err instanceof BatchError)) throw err;
    // each item is atomic on its own: say which landed, so none is lost to the caller
    const p = itemProblem(err.cause);
    const results = (err as BatchError<string>).results.map((r) =>
      'error' in r ? { id: r.id, code: itemProblem(r.error).code } : { id: r.id, verdict: r.verdict },
    );
    throw new Problem(p.status, p.code, `${p.detail}; results says which items landed`, { ...p.extra, results }, p.hidden);
  }
}

/** A batch item's error as a problem: an Idempotency-Key reused with another payload or group is the header's 422. */
const itemProblem = (err: unknown): Problem =>
  err instanceof ConflictError
    ? new Problem(422, 'idempotency_conflict', `an idempotencyKey was used with another payload or group (${err.message})`)
    : problemOf(err);

export async function postFlow(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const { maxBatchBytes, maxPayloadBytes } = service.settings();
  const flow = parseFlow(await requestBody(call, maxBatchBytes, 'the flow body'), FLOW_MAX_CHILDREN, maxPayloadBytes);
  const home = service.regionOf(queue);
  flow.children.forEach(({ queue: other }, index) => {
    if (other === undefined) return;
    if (!call.caller.allows(other)) throw new Problem(403, 'forbidden_queue', `child ${index}: this token may not use queue "${other}"`, { index });
    // the library's fan-in runs on one Valkey: a child whose queue another region takes could never release its parent
    const region = service.regionOf(other);
    if (region !== home) {
      const detail = `child ${index}: queue "${other}" is taken by region ${region}, the parent's by ${home}: a flow's jobs share one Valkey`;
      throw new Problem(400, 'invalid_flow', detail, { index });
    }
  });
  let landed: FlowResult;
  try {
    landed = await addFlow(via(call, service, queue), queue, flow, service.mint);
  } catch (err) {
    throw flowProblem(err);
  }
  const { verdict, parent, children } = landed;
  // the parent's job, under any mount prefix
  const location = `${call.request.path.replace(/\/flows$/, '/jobs')}/${parent.id}`;
  return json(call, created(verdict), { queue, parent: { id: parent.id }, children, verdict }, { Location: location });
}

export async function getJob(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const id = idOf(call);
  const withPayload = call.request.query('payload') === '1';
  const found = await jobDetail(via(call, service, queue), queue, id, { payload: withPayload });
  if (!found) throw new Problem(404, 'not_found', `no job ${id} in queue "${queue}"`);
  const { payload, ...detail } = found;
  return json(call, 200, { id, queue, ...detail, ...(payload !== undefined && payloadField(payload)) });
}
