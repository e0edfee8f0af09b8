// The listings' part of the OpenAPI document (openapi.ts builds it): GET /v1/queues and
// GET /v1/queues/{queue}/jobs, their query parameters and their answers' schemas. Functions, called while openapi.ts is built:
// this file and openapi.ts import each other, so nothing here runs at its own load.
import { JOB_LIST_STATES, JOB_PAGE, JOB_PAGE_MAX } from '../../shared/job-list.js';
import { QUEUE_SCAN_COUNT, QUEUE_SCAN_COUNT_MAX } from '../../shared/queue-list.js';
import { QUEUE, VALKEY, obj, schema, str, type Json, type Route } from './openapi.js';

export function listQueuesRoute(): Route {
  return {
    summary:
      "A page of the queues that exist and the token may use, with their counts: one SCAN step over the library's key families (a page may hold none while cursor is not null; a name may come again on a later page)",
    bearer: true,
    query: ['queueCursor', 'scanCount'],
    ok: { 200: schema('QueuePage') },
    fails: ['unauthorized', 'forbidden_action', 'invalid_query', ...VALKEY],
  };
}

export function listJobsRoute(): Route {
  return {
    summary:
      "A page of the queue's jobs in one state: pending newest first (a group's lane with group=), scheduled soonest first, dead newest first; no payloads",
    queue: true,
    query: ['state', 'limit', 'jobCursor', 'groupQuery'],
    ok: { 200: schema('JobPage') },
    fails: [...QUEUE, 'invalid_query'],
  };
}

/** Query parameters: component name → [description, schema, name as sent]. */
export function listQuery(): Record<string, [string, Json, string?]> {
  return {
    state: ['The jobs listed (default pending)', { enum: JOB_LIST_STATES }],
    limit: [`Jobs a page, 1-${JOB_PAGE_MAX} (default ${JOB_PAGE})`, { type: 'integer', minimum: 1, maximum: JOB_PAGE_MAX }],
    jobCursor: ['The cursor the page before answered (opaque)', str, 'cursor'],
    queueCursor: ['The cursor the page before answered (opaque)', str, 'cursor'],
    scanCount: [
      `Keys the server looks at for this page (SCAN COUNT), 1-${QUEUE_SCAN_COUNT_MAX} (default ${QUEUE_SCAN_COUNT})`,
      { type: 'integer', minimum: 1, maximum: QUEUE_SCAN_COUNT_MAX },
      'count',
    ],
    groupQuery: ["pending only: this group's lane instead of the flat pending", schema('Group'), 'group'],
  };
}

export function listSchemas(): Json {
  const count = { type: 'integer', minimum: 0 };
  return {
    JobRow: {
      ...obj(
        {
          id: schema('Id'),
          state: { enum: JOB_LIST_STATES },
          attempts: count,
          group: schema('Group'),
          runAt: { type: 'integer' },
          lastError: str,
          bytes: count,
        },
        true,
      ),
      required: ['id', 'state', 'attempts', 'bytes'],
    },
    QueueSummary: obj({
      name: schema('Queue'),
      counts: obj(Object.fromEntries(['pending', 'active', 'scheduled', 'dead', 'completed', 'failed'].map((n) => [n, count]))),
      paused: { type: 'boolean' },
    }),
    QueuePage: obj({ queues: { type: 'array', items: schema('QueueSummary') }, cursor: { type: ['string', 'null'] } }),
    JobPage: obj({
      queue: schema('Queue'),
      state: { enum: JOB_LIST_STATES },
      jobs: { type: 'array', items: schema('JobRow') },
      cursor: { type: ['string', 'null'] },
    }),
  };
}
