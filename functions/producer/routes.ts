// Every route of the producer, in the order they are matched (the first that matches answers):
//   GET  /v1/queues                   getQueues     (list-routes.ts): a page of the queues that exist
//   POST /v1/queues/:queue/jobs       postJob       (queue-routes.ts)
//   POST /v1/queues/:queue/batch      postBatch
//   POST /v1/queues/:queue/flows      postFlow
//   GET  /v1/queues/:queue/jobs       getJobs       (list-routes.ts): a page of one state's jobs
//   GET  /v1/queues/:queue/jobs/:id   getJob
//   DELETE /v1/queues/:queue/jobs/:id deleteJob    (job-control-routes.ts; needs control)
//   PATCH /v1/queues/:queue/jobs/:id  reschedule
//   POST …/jobs/:id/promote           promote
//   GET  /v1/queues/:queue            getQueue      (queue-control-routes.ts)
//   POST …/pause, …/resume            pause, resume (needs control)
//   GET  …/groups/:group              getGroup
//   PUT  …/groups/:group              putGroup      (needs control)
//   PUT, GET, DELETE …/schedules/:name, GET …/schedules, POST …/schedules/:name/pause,
//   …/resume, …/run-now: the library's repeatables (schedule-routes.ts)
//   GET  /v1/schedules                getCronSchedules (cron-routes.ts; needs read): EMQ_CRONS, next fires
//   POST /v1/webhooks/:source         postWebhook   (webhook-route.ts)
//   GET  /healthz, GET /readyz, GET /openapi.json (the OpenAPI 3.1 document: openapi.ts)
//   any other method or path under /v1: 405 (under /v1/queues, after the caller is checked);
//   anything else: 404 (core.ts).
// Both adapters serve this one table: hono-app.ts registers it on Hono (the Worker, and the
// app users mount), node-http.ts matches it itself (`emq producer`).
import { jobState } from '../../shared/index.js';
import { json, type Answer, type Call, type Route, type Service } from './call.js';
import { getCronSchedules } from './cron-routes.js';
import { openApi } from './openapi.js';
import { Problem } from './problem.js';
import { deleteJob, promote, reschedule } from './job-control-routes.js';
import { getGroup, getQueue, pause, putGroup, resume } from './queue-control-routes.js';
import { getJobs, getQueues } from './list-routes.js';
import { getJob, postBatch, postFlow, postJob } from './queue-routes.js';
import { deleteSchedule, getSchedule, getSchedules, pauseRoute, putSchedule, resumeRoute, runNowRoute } from './schedule-routes.js';
import type { Capability } from './tokens.js';
import { postWebhook } from './webhook-route.js';
import { scoped } from '../../shared/observe.js';

const healthz = async (call: Call): Promise<Answer> => json(call, 200, { status: 'ok' });

/**
 * A read of a job that never exists: proves the whole path (REST, gateway, Valkey, scripts).
 * No token: its problems have fixed details (error-problems.ts); a wire mismatch names both
 * versions but not an error reply's words (NOPERM names the Valkey user).
 */
async function readyz(call: Call, service: Service): Promise<Answer> {
  const { record } = call;
  await jobState(scoped(service.connection(), { headers: record.headers, observer: record }), 'emq-readyz', 'JOB00000000000');
  return json(call, 200, { status: 'ready' });
}

/** No token: it names no queue. Under a mount prefix it says so (its servers entry). */
const openapi = async (call: Call): Promise<Answer> => json(call, 200, openApi(call.request.path.slice(0, -'/openapi.json'.length)));

const notAllowed = async (call: Call): Promise<Answer> => {
  throw new Problem(405, 'not_allowed', `${call.request.method} is not allowed on ${call.request.path}`);
};

/** A route behind the caller's token, needing `needs`; its name (the log's and the metrics') is its pattern. */
const queueRoute = (method: Route['method'], pattern: string, needs: Capability, handle: Route['handle']): Route => ({
  method,
  pattern,
  name: pattern,
  auth: true,
  needs,
  handle,
});
const job = '/v1/queues/:queue/jobs/:id';
const group = '/v1/queues/:queue/groups/:group';
const schedule = '/v1/queues/:queue/schedules/:name';

export const ROUTES: readonly Route[] = [
  queueRoute('GET', '/v1/queues', 'read', getQueues),
  queueRoute('POST', '/v1/queues/:queue/jobs', 'enqueue', postJob),
  queueRoute('POST', '/v1/queues/:queue/batch', 'enqueue', postBatch),
  queueRoute('POST', '/v1/queues/:queue/flows', 'enqueue', postFlow),
  queueRoute('GET', '/v1/queues/:queue/jobs', 'read', getJobs),
  queueRoute('GET', job, 'read', getJob),
  queueRoute('DELETE', job, 'control', deleteJob),
  queueRoute('PATCH', job, 'control', reschedule),
  queueRoute('POST', `${job}/promote`, 'control', promote),
  queueRoute('GET', '/v1/queues/:queue', 'read', getQueue),
  queueRoute('POST', '/v1/queues/:queue/pause', 'control', pause),
  queueRoute('POST', '/v1/queues/:queue/resume', 'control', resume),
  queueRoute('GET', group, 'read', getGroup),
  queueRoute('PUT', group, 'control', putGroup),
  queueRoute('GET', '/v1/queues/:queue/schedules', 'read', getSchedules),
  queueRoute('GET', schedule, 'read', getSchedule),
  queueRoute('PUT', schedule, 'control', putSchedule),
  queueRoute('DELETE', schedule, 'control', deleteSchedule),
  queueRoute('POST', `${schedule}/pause`, 'control', pauseRoute),
  queueRoute('POST', `${schedule}/resume`, 'control', resumeRoute),
  queueRoute('POST', `${schedule}/run-now`, 'control', runNowRoute),
  queueRoute('GET', '/v1/schedules', 'read', getCronSchedules),
  { method: 'POST', pattern: '/v1/webhooks/:source', name: '/v1/webhooks/:source', auth: false, handle: postWebhook },
  { method: 'GET', pattern: '/healthz', name: '/healthz', auth: false, handle: healthz },
  { method: 'GET', pattern: '/readyz', name: '/readyz', auth: false, handle: readyz },
  { method: 'GET', pattern: '/openapi.json', name: '/openapi.json', auth: false, handle: openapi },
  // one route name for both: the metrics' and the log's label for a method or path no route has
  { method: 'ALL', pattern: '/v1/queues/*', name: '/v1/*', auth: true, handle: notAllowed },
  { method: 'ALL', pattern: '/v1/*', name: '/v1/*', auth: false, handle: notAllowed },
];
