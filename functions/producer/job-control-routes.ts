// The routes that act on one job a caller enqueued (issue 25), each through the library's own
// verb or the writes it would make (lua/job-remove.lua, job-promote.lua, job-reschedule.lua):
//   DELETE …/jobs/:id           pending (flat or in its lane), scheduled or dead → 200 removed;
//                               Idempotency-Key: also frees the caller's key, if it names this job
//   POST   …/jobs/:id/promote   a scheduled job due now → 200 promoted
//   PATCH  …/jobs/:id           Emq-Delay | Emq-Not-Before: a scheduled job's new due time → 200 rescheduled
// Each needs `control` (core.ts) and refuses with a stable code, writing nothing: 404 not_found,
// 409 job_active (claimed: its worker's complete must still succeed), job_in_flow, job_locked,
// not_scheduled.
import { dedupIdOf, promoteJob, removeJob, rescheduleJob } from '../../shared/index.js';
import { json, type Answer, type Call, type Service } from './call.js';
import { idempotencyKeyOf } from './jobs.js';
import { placementOf } from './placement.js';
import { Problem } from './problem.js';
import { idOf, queueOf, via } from './queue-routes.js';

const missing = (id: string, queue: string) => new Problem(404, 'not_found', `no job ${id} in queue "${queue}"`);

const REFUSALS = {
  job_active: 'is claimed by a worker: it can be removed once its worker completes or fails it',
  job_in_flow: 'belongs to a flow that is not done: removing it would break the flow',
  job_locked: 'is locked',
} as const;

export async function deleteJob(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const id = idOf(call);
  const key = idempotencyKeyOf((name) => call.request.header(name));
  // the key as the caller's POST …/jobs parked it (jobs.ts admitJob): its scope, then the key
  const dedupId = key === undefined ? undefined : await dedupIdOf(`key:${await call.caller.scope()}`, key);
  const outcome = await removeJob(via(call, service, queue), queue, id, dedupId === undefined ? {} : { dedupId });
  if (outcome.removed) return json(call, 200, { id, queue, verdict: 'removed', state: outcome.state });
  if (outcome.reason === 'absent') throw missing(id, queue);
  throw new Problem(409, outcome.reason, `job ${id} ${REFUSALS[outcome.reason]}`);
}

export async function promote(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const id = idOf(call);
  const outcome = await promoteJob(via(call, service, queue), queue, id);
  if (outcome === 'absent') throw missing(id, queue);
  if (outcome === 'not_scheduled') throw new Problem(409, 'not_scheduled', `job ${id} is not scheduled: only a scheduled job can be promoted`);
  return json(call, 200, { id, queue, verdict: 'promoted' });
}

export async function reschedule(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const id = idOf(call);
  const { request } = call;
  const { maxDelayMs } = service.settings();
  // admission's own parsing and bounds (placement.ts)
  const placed = placementOf({ delay: request.header('Emq-Delay'), notBefore: request.header('Emq-Not-Before') }, maxDelayMs);
  const at = placed.inMs !== undefined ? { delayMs: placed.inMs } : placed.at !== undefined ? { runAtMs: placed.at } : undefined;
  if (at === undefined) throw new Problem(400, 'invalid_delay', 'send Emq-Delay or Emq-Not-Before: the new due time');
  const outcome = await rescheduleJob(via(call, service, queue), queue, id, at);
  if (outcome.rescheduled) return json(call, 200, { id, queue, verdict: 'rescheduled', runAt: outcome.runAt });
  if (outcome.reason === 'absent') throw missing(id, queue);
  throw new Problem(409, 'not_scheduled', `job ${id} is not scheduled: only a scheduled job's due time can move`);
}
