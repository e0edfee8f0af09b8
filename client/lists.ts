// The typed client's listings (issue 28): the queues that exist, a page at a time, and a
// queue's jobs in one state, a page at a time. Both need `read`. Pass each page's `cursor`
// back for the next; null: the walk is done. A queue page may hold no queues while its cursor
// is not null (each page is one bounded SCAN step), and a queue may come again on a later page.
export type JobListState = 'pending' | 'scheduled' | 'dead';

/** A queue as GET /v1/queues lists it. */
export interface QueueListing {
  name: string;
  counts: { pending: number; active: number; scheduled: number; dead: number; completed: number; failed: number };
  paused: boolean;
}

/** A job as GET /v1/queues/{q}/jobs lists it: no payload, its length in `bytes`. */
export interface JobListing {
  id: string;
  state: JobListState;
  attempts: number;
  group?: string;
  /** Unix ms it is due (scheduled). */
  runAt?: number;
  /** Its last error (dead). */
  lastError?: string;
  bytes: number;
}

export interface QueuesPage {
  queues: QueueListing[];
  cursor: string | null;
}

export interface JobsPage {
  queue: string;
  state: JobListState;
  jobs: JobListing[];
  cursor: string | null;
}

type Send = (target: string, init: RequestInit) => Promise<{ status: number; body: unknown }>;

/** `?a=1&b=2` of the options given, or ''. */
function query(options: Record<string, string | number | undefined>): string {
  const given = Object.entries(options).filter((e): e is [string, string | number] => e[1] !== undefined);
  return given.length === 0 ? '' : `?${new URLSearchParams(given.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

export function listCalls(send: Send, queuePath: (queue: string) => string, base: string) {
  return {
    /** One page of the queues that exist and this token may use; `count`: keys the server looks at (1-5000, default 1000). */
    listQueues: async (options: { cursor?: string; count?: number } = {}) =>
      (await send(`${base}/v1/queues${query({ cursor: options.cursor, count: options.count })}`, { method: 'GET' })).body as QueuesPage,

    /**
     * One page of the queue's jobs in `state` (default pending, newest first; with `group`, that
     * lane; scheduled soonest first; dead newest first), `limit` 1-100 (default 50).
     */
    listJobs: async (queue: string, options: { state?: JobListState; limit?: number; cursor?: string; group?: string } = {}) => {
      const { state, limit, cursor, group } = options;
      return (await send(`${queuePath(queue)}/jobs${query({ state, limit, cursor, group })}`, { method: 'GET' })).body as JobsPage;
    },
  };
}
