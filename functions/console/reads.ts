// The reads a page makes, each bounded: the queue list paged to its end (up to a cap), a
// queue's lanes paged (up to a cap), a page of one state's jobs; each through the typed
// client (GET /v1/queues, GET /v1/queues/{q}, GET /v1/queues/{q}/jobs: docs/api.md).
import type { GroupView, JobListing, QueueListing, QueueView } from '../../client/index.js';
import type { Api } from './producer.js';

export type QueueRow = QueueListing;
export type JobRow = JobListing;

/** A listing page's SCAN COUNT: the route's most (its default, 1,000, takes 3x the round trips over a keyspace of 10,000 jobs). */
const QUEUE_PAGE_COUNT = 5_000;
/** Pages of the queue list one load follows at most (a page is the producer's; a name may repeat across pages). */
const QUEUE_PAGES_MAX = 200;
/** Queues one load shows at most. */
export const QUEUES_MAX = 5_000;
/** Lanes a queue's page shows at most (pages of 1,000). */
export const LANES_MAX = 2_000;
/** Jobs of each state a queue's page lists. */
export const JOBS_SHOWN = 50;

/** Every queue (deduplicated, by name), and whether the list was cut at a cap. */
export async function allQueues(api: Api): Promise<{ queues: QueueRow[]; cut: boolean }> {
  const byName = new Map<string, QueueRow>();
  let cursor: string | undefined;
  for (let page = 0; page < QUEUE_PAGES_MAX; page++) {
    const answer = await api.client.listQueues({ ...(cursor !== undefined && { cursor }), count: QUEUE_PAGE_COUNT });
    for (const q of answer.queues) byName.set(q.name, q);
    if (answer.cursor === null || answer.cursor === undefined || byName.size >= QUEUES_MAX) {
      return { queues: sorted(byName), cut: answer.cursor !== null && answer.cursor !== undefined };
    }
    cursor = answer.cursor;
  }
  return { queues: sorted(byName), cut: true };
}

const sorted = (m: Map<string, QueueRow>) => [...m.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, QUEUES_MAX);

/** The queue's counts and its lanes, every page up to LANES_MAX; `cut` when more were left. */
export async function queueWithLanes(api: Api, queue: string): Promise<{ view: QueueView; lanes: GroupView[]; cut: boolean }> {
  const view = await api.client.queue(queue, { count: 1_000 });
  const lanes = [...view.groups];
  let cursor = view.cursor;
  while (cursor !== undefined && lanes.length < LANES_MAX) {
    const next = await api.client.queue(queue, { cursor, count: 1_000 });
    lanes.push(...next.groups);
    cursor = next.cursor;
  }
  return { view, lanes: lanes.slice(0, LANES_MAX), cut: cursor !== undefined };
}

/** A page of the queue's jobs in one state: pending newest first (flat, or a lane's with `group`), scheduled soonest first. */
export async function jobsOf(
  api: Api,
  queue: string,
  state: 'pending' | 'scheduled' | 'dead',
  group?: string,
  limit = JOBS_SHOWN,
): Promise<{ jobs: JobRow[]; more: boolean }> {
  const answer = await api.client.listJobs(queue, { state, limit, ...(group !== undefined && { group }) });
  return { jobs: answer.jobs, more: answer.cursor !== null && answer.cursor !== undefined };
}
