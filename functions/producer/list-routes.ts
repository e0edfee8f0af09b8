// The listings a reader (the console, a CLI) pages through (issue 28), read capability:
//   GET /v1/queues/:queue/jobs?state=pending|scheduled|dead&limit=&cursor=&group=
//       → 200 {queue, state, jobs: [{id, state, attempts, group?, runAt?, lastError?, bytes}], cursor}
//       pending newest first (the library's browse order; with group=, that group's lane),
//       scheduled soonest first, dead newest first (lua/job-list.lua); no payload bytes
// Every query parameter is checked before anything is sent: 400 invalid_query.
import { JOB_LIST_STATES, JOB_PAGE, JOB_PAGE_MAX, isJobCursor, listJobs, validateGroup, type JobListState } from '../../shared/index.js';
import { json, type Answer, type Call, type Service } from './call.js';
import { Problem } from './problem.js';
import { queueOf, via } from './queue-routes.js';

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
