// Every route of the producer, in the order they are matched (the first that matches answers):
//   POST /v1/queues/:queue/jobs       postJob       (queue-routes.ts)
//   POST /v1/queues/:queue/batch      postBatch
//   POST /v1/queues/:queue/flows      postFlow
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
import { getJob, postBatch, postFlow, postJob } from './queue-routes.js';
import { deleteSchedule, getSchedule, getSchedules, pauseRoute, putSchedule, resumeRoute, runNowRoute } from './schedule-routes.js';
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

/** The repeatables' routes: reads need read, the rest control. */
function schedules(): Route[] {
  const one = '/v1/queues/:queue/schedules/:name';
  const route = (method: Route['method'], pattern: string, needs: 'read' | 'control', handle: Route['handle']): Route => ({
    method,
    pattern,
    name: pattern,
    auth: true,
    needs,
    handle,
  });
  return [
    route('GET', '/v1/queues/:queue/schedules', 'read', getSchedules),
    route('GET', one, 'read', getSchedule),
    route('PUT', one, 'control', putSchedule),
    route('DELETE', one, 'control', deleteSchedule),
    route('POST', `${one}/pause`, 'control', pauseRoute),
    route('POST', `${one}/resume`, 'control', resumeRoute),
    route('POST', `${one}/run-now`, 'control', runNowRoute),
  ];
}

export const ROUTES: readonly Route[] = [
  { method: 'POST', pattern: '/v1/queues/:queue/jobs', name: '/v1/queues/:queue/jobs', auth: true, needs: 'enqueue', handle: postJob },
  { method: 'POST', pattern: '/v1/queues/:queue/batch', name: '/v1/queues/:queue/batch', auth: true, needs: 'enqueue', handle: postBatch },
  { method: 'POST', pattern: '/v1/queues/:queue/flows', name: '/v1/queues/:queue/flows', auth: true, needs: 'enqueue', handle: postFlow },
  { method: 'GET', pattern: '/v1/queues/:queue/jobs/:id', name: '/v1/queues/:queue/jobs/:id', auth: true, needs: 'read', handle: getJob },
  { method: 'DELETE', pattern: '/v1/queues/:queue/jobs/:id', name: '/v1/queues/:queue/jobs/:id', auth: true, needs: 'control', handle: deleteJob },
  { method: 'PATCH', pattern: '/v1/queues/:queue/jobs/:id', name: '/v1/queues/:queue/jobs/:id', auth: true, needs: 'control', handle: reschedule },
  { method: 'POST', pattern: '/v1/queues/:queue/jobs/:id/promote', name: '/v1/queues/:queue/jobs/:id/promote', auth: true, needs: 'control', handle: promote },
  { method: 'GET', pattern: '/v1/queues/:queue', name: '/v1/queues/:queue', auth: true, needs: 'read', handle: getQueue },
  { method: 'POST', pattern: '/v1/queues/:queue/pause', name: '/v1/queues/:queue/pause', auth: true, needs: 'control', handle: pause },
  { method: 'POST', pattern: '/v1/queues/:queue/resume', name: '/v1/queues/:queue/resume', auth: true, needs: 'control', handle: resume },
  { method: 'GET', pattern: '/v1/queues/:queue/groups/:group', name: '/v1/queues/:queue/groups/:group', auth: true, needs: 'read', handle: getGroup },
  { method: 'PUT', pattern: '/v1/queues/:queue/groups/:group', name: '/v1/queues/:queue/groups/:group', auth: true, needs: 'control', handle: putGroup },
  ...schedules(),
  { method: 'GET', pattern: '/v1/schedules', name: '/v1/schedules', auth: true, needs: 'read', handle: getCronSchedules },
  { method: 'POST', pattern: '/v1/webhooks/:source', name: '/v1/webhooks/:source', auth: false, handle: postWebhook },
  { method: 'GET', pattern: '/healthz', name: '/healthz', auth: false, handle: healthz },
  { method: 'GET', pattern: '/readyz', name: '/readyz', auth: false, handle: readyz },
  { method: 'GET', pattern: '/openapi.json', name: '/openapi.json', auth: false, handle: openapi },
  // one route name for both: the metrics' and the log's label for a method or path no route has
  { method: 'ALL', pattern: '/v1/queues/*', name: '/v1/*', auth: true, handle: notAllowed },
  { method: 'ALL', pattern: '/v1/*', name: '/v1/*', auth: false, handle: notAllowed },
];
