// The typed client's reads and control calls (issue 25): a job's detail, cancel, promote,
// reschedule; a queue's counts and lanes, pause and resume; a group's limit, weight and pause.
// Control calls need a token whose `can` holds `control` (else ProducerError 403
// forbidden_action). A call retried after a timeout may find its own first try's work done:
// a DELETE then answers null (no such job), a promote 409 not_scheduled.
/** A job as GET …/jobs/:id answers it. */
export interface JobInfo {
  id: string;
  queue: string;
  state: string;
  attempts: number;
  /** Its lane. */
  group?: string;
  /** Unix ms it is due (a scheduled job). */
  runAt?: number;
  /** A flow child's parent, and the parent's queue when it is another. */
  parent?: string;
  parentQueue?: string;
  /** A dead job's last error. */
  lastError?: string;
  /** With `payload: true`: its payload as text, or `payloadBase64` when it is not UTF-8. */
  payload?: string;
  payloadBase64?: string;
}

// the wire's own views: what GET …/groups/{g} and GET /v1/queues/{q} answer, as JSON
export type { GroupChange, GroupView } from '../shared/group-control.js';
export type { QueueInfo as QueueView } from '../shared/queue-info.js';
import type { GroupChange, GroupView } from '../shared/group-control.js';
import type { QueueInfo as QueueView } from '../shared/queue-info.js';

type Send = (target: string, init: RequestInit) => Promise<{ status: number; body: unknown }>;
type NotFound = (err: unknown) => boolean;

/** The calls, given the client's `send`, its queue path and how it tells a 404 not_found. */
export function controlCalls(send: Send, queuePath: (queue: string) => string, notFound: NotFound) {
  const orNull = orNullOf(notFound);
  return calls(send, queuePath, orNull);
}

/** A call's body, or null when it answered 404 not_found. */
export function orNullOf(notFound: NotFound) {
  return async <T>(call: Promise<{ body: unknown }>): Promise<T | null> => {
    try {
      return (await call).body as T;
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  };
}

function calls(send: Send, queuePath: (queue: string) => string, orNull: ReturnType<typeof orNullOf>) {
  const job = (queue: string, id: string) => `${queuePath(queue)}/jobs/${encodeURIComponent(id)}`;
  const json = (body: unknown): RequestInit => ({ headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return {
    /** The job (with its payload when asked), or null when there is no such job. */
    job: (queue: string, id: string, options: { payload?: boolean } = {}) =>
      orNull<JobInfo>(send(`${job(queue, id)}${options.payload ? '?payload=1' : ''}`, { method: 'GET' })),

    /**
     * Removes a pending, scheduled or dead job; with `idempotencyKey`, also frees that key (if
     * it names this job) so it can be used again. Null: no such job. A claimed job is 409
     * job_active, a flow's member 409 job_in_flow, a locked job 409 job_locked.
     */
    remove: (queue: string, id: string, options: { idempotencyKey?: string } = {}) =>
      orNull<{ id: string; queue: string; verdict: 'removed'; state: 'pending' | 'scheduled' | 'dead' }>(
        send(job(queue, id), { method: 'DELETE', headers: options.idempotencyKey === undefined ? {} : { 'Idempotency-Key': options.idempotencyKey } }),
      ),

    /** A scheduled job due now. 409 not_scheduled otherwise; null: no such job. */
    promote: (queue: string, id: string) => orNull<{ id: string; queue: string; verdict: 'promoted' }>(send(`${job(queue, id)}/promote`, { method: 'POST' })),

    /** A scheduled job's new due time: `delay` (`30s`, or ms) or `notBefore` (Date, Unix ms, RFC 3339). */
    reschedule: (queue: string, id: string, when: { delay: string | number } | { notBefore: Date | number | string }) => {
      const headers =
        'delay' in when
          ? { 'Emq-Delay': typeof when.delay === 'number' ? `${when.delay}ms` : when.delay }
          : { 'Emq-Not-Before': when.notBefore instanceof Date ? String(when.notBefore.getTime()) : String(when.notBefore) };
      return orNull<{ id: string; queue: string; verdict: 'rescheduled'; runAt: number }>(send(job(queue, id), { method: 'PATCH', headers }));
    },

    /** The queue's counts and lanes (a page of up to `count` groups, after `cursor`). */
    queue: async (queue: string, page: { cursor?: string; count?: number } = {}): Promise<QueueView> => {
      const query = new URLSearchParams();
      if (page.cursor !== undefined) query.set('cursor', page.cursor);
      if (page.count !== undefined) query.set('count', String(page.count));
      const search = query.size > 0 ? `?${query}` : '';
      return (await send(`${queuePath(queue)}${search}`, { method: 'GET' })).body as QueueView;
    },

    /** Claims stop (admission goes on) until resumed. */
    pause: async (queue: string) => (await send(`${queuePath(queue)}/pause`, { method: 'POST' })).body as { queue: string; paused: boolean },
    resume: async (queue: string) => (await send(`${queuePath(queue)}/resume`, { method: 'POST' })).body as { queue: string; paused: boolean },

    group: async (queue: string, group: string) => (await send(`${queuePath(queue)}/groups/${encodeURIComponent(group)}`, { method: 'GET' })).body as GroupView,

    /** Sets a lane's limit (its most claimed at once), weight, or pause; answers the group after. */
    setGroup: async (queue: string, group: string, change: GroupChange) =>
      (await send(`${queuePath(queue)}/groups/${encodeURIComponent(group)}`, { method: 'PUT', ...json(change) })).body as GroupView,
  };
}
