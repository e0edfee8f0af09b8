// The listings a reader (the console, a CLI) pages through (issue 28), read capability:
//   GET /v1/queues?cursor=&count=
//       → 200 {queues: [{name, counts: {pending, active, scheduled, dead, completed, failed}, paused}], cursor}
//       the queues the caller's token may use, found by one SCAN step of COUNT `count` (default
//       1000, at most 5000) over the library's key families (shared/queue-list.ts); a page may
//       hold few queues or none while cursor is not null, and a name may come again on a later
//       page (SCAN's rule), never twice on one; counts as GET /v1/queues/{q} reads them
//   GET /v1/queues/:queue/jobs?state=pending|scheduled|dead&limit=&cursor=&group=
//       → 200 {queue, state, jobs: [{id, state, attempts, group?, runAt?, lastError?, bytes}], cursor}
//       pending newest first (the library's browse order; with group=, that group's lane),
//       scheduled soonest first, dead newest first (lua/job-list.lua); no payload bytes
// Every query parameter is checked before anything is sent: 400 invalid_query.
import { InvalidArgumentError, JOB_LIST_STATES, JOB_PAGE, JOB_PAGE_MAX, isJobCursor, listJobs, validateGroup, type JobListState } from '../../shared/index.js';
import { QUEUE_SCAN_COUNT, QUEUE_SCAN_COUNT_MAX, listQueues, parseScanCursor } from '../../shared/queue-list.js';
import { scoped } from '../../shared/observe.js';
import { json, type Answer, type Call, type Service } from './call.js';
import { Problem } from './problem.js';
import { pageCount, queueOf, via } from './queue-routes.js';

const badQuery = (detail: string) => new Problem(400, 'invalid_query', detail);

/** `?limit=`: a whole number from 1 to JOB_PAGE_MAX, JOB_PAGE when absent. */
function limitOf(call: Call): number {
  const given = call.request.query('limit');
  if (given === undefined) return JOB_PAGE;
  const limit = /^[1-9][0-9]{0,2}$/.test(given) ? Number(given) : 0;
  if (limit < 1 || limit > JOB_PAGE_MAX) throw badQuery(`limit must be a whole number from 1 to ${JOB_PAGE_MAX}`);
  return limit;
}

export async function getJobs(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const { request } = call;
  const state = (request.query('state') ?? 'pending') as JobListState;
  if (!JOB_LIST_STATES.includes(state)) throw badQuery(`state must be one of ${JOB_LIST_STATES.join(', ')}`);
  const limit = limitOf(call);
  const group = request.query('group');
  if (group !== undefined) {
    if (state !== 'pending') throw badQuery('group lists a lane of pending jobs: only with state=pending');
    try {
      validateGroup(group);
    } catch (err) {
      throw badQuery(`group: ${(err as Error).message}`);
    }
  }
  const cursor = request.query('cursor');
  if (cursor !== undefined && !isJobCursor(state, cursor)) throw badQuery(`cursor must be the cursor a page of ${state} jobs answered`);
  const page = await listJobs(via(call, service, queue), queue, {
    state,
    limit,
    ...(group !== undefined && { group }),
    ...(cursor !== undefined && { cursor }),
  });
  return json(call, 200, { queue, state, jobs: page.jobs, cursor: page.cursor ?? null });
}

export async function getQueues(call: Call, service: Service): Promise<Answer> {
  const count = pageCount(call, QUEUE_SCAN_COUNT_MAX, QUEUE_SCAN_COUNT);
  const cursor = call.request.query('cursor') ?? '0';
  if (parseScanCursor(cursor) === undefined) throw badQuery('cursor must be the cursor a page answered');
  const { record, caller } = call;
  // the local Valkey: the one that takes the jobs of queues no region claims
  const connection = scoped(service.connection(), { headers: record.headers, observer: record });
  try {
    const page = await listQueues(connection, { cursor, count, allows: (q) => caller.allows(q) });
    return json(call, 200, { queues: page.queues, cursor: page.cursor ?? null });
  } catch (err) {
    // a cursor of another deployment's form (a cluster's on a single server, or the reverse)
    if (err instanceof InvalidArgumentError) throw badQuery(err.message);
    throw err;
  }
}
