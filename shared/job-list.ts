// listJobs: one page of a queue's jobs in one state, for a reader: pending newest first (the
// library's browse order), a group's lane the same, scheduled soonest first, dead newest
// first; each job's id, attempts, group, due time, last error and payload length, never the
// payload (lua/job-list.lua says how a page is found, and what it costs).
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { InvalidArgumentError, ProtocolError, fromReply, replyText, shownReply } from './errors.js';
import { laneKey, pendingKey, scheduleKey, validateId, validateQueue } from './keyspace.js';
import { jobListScript } from './scripts.js';

export const JOB_LIST_STATES = ['pending', 'scheduled', 'dead'] as const;
export type JobListState = (typeof JOB_LIST_STATES)[number];

export const JOB_PAGE = 50;
export const JOB_PAGE_MAX = 100;

/** One listed job. */
export interface JobRow {
  id: string;
  state: JobListState;
  attempts: number;
  /** The group its row names (a lane's job). */
  group?: string;
  /** Its due time, Unix ms (scheduled). */
  runAt?: number;
  /** The last error its row holds (dead). */
  lastError?: string;
  /** The payload's length in bytes (0 when the set names a job with no row). */
  bytes: number;
}

export interface JobPage {
  jobs: JobRow[];
  /** Present when more jobs follow: pass it as `cursor` for the next page. */
  cursor?: string;
}

export interface JobListOptions {
  /** pending (default), scheduled or dead. */
  state?: JobListState;
  /** pending only: this group's lane instead of the queue's flat pending. */
  group?: string;
  /** The previous page's cursor. */
  cursor?: string;
  /** 1 to 100 (default 50). */
  limit?: number;
}

const SCORED = /^(0|[1-9][0-9]{0,14}):(.{14})$/;

/** Whether `cursor` has the form of a cursor of `state`'s listing (a page's id, or score:id). */
export function isJobCursor(state: JobListState, cursor: string): boolean {
  const id = state === 'pending' ? cursor : SCORED.exec(cursor)?.[2];
  if (id === undefined) return false;
  try {
    validateId(id);
    return true;
  } catch {
    return false;
  }
}

/** The set a listing reads: emq:{q}:pending, its lane, schedule or dead. Checks the queue and group. */
function setOf(queue: string, state: JobListState, group: string | undefined): string {
  if (group !== undefined) {
    if (state !== 'pending') throw new InvalidArgumentError('group lists a lane: only with state pending');
    return laneKey(queue, group);
  }
  if (state === 'pending') return pendingKey(queue);
  if (state === 'scheduled') return scheduleKey(queue);
  validateQueue(queue);
  return `emq:{${queue}}:dead`;
}

const count = (v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? Number(v) : Number(replyText(v) ?? Number.NaN));

/** One page of the queue's jobs in `state`; an empty set (or an unknown queue) is an empty page. */
export async function listJobs(connection: Connection, queue: string, options: JobListOptions = {}): Promise<JobPage> {
  const { state = 'pending', group, cursor = '', limit = JOB_PAGE } = options;
  if (!(JOB_LIST_STATES as readonly unknown[]).includes(state)) throw new InvalidArgumentError(`state must be one of ${JOB_LIST_STATES.join(', ')}`);
  const set = setOf(queue, state, group);
  if (typeof cursor !== 'string' || (cursor !== '' && !isJobCursor(state, cursor))) {
    throw new InvalidArgumentError('cursor must be the cursor of a previous page of this listing');
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > JOB_PAGE_MAX) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${JOB_PAGE_MAX}`);
  }
  const outcome = await runScript(connection, jobListScript, [set], [cursor, String(limit)]);
  if (!outcome.ok) throw fromReply(outcome.error);
  const reply = Array.isArray(outcome.value) ? outcome.value : [];
  const next = replyText(reply[0]);
  const bad = () =>
    new ProtocolError(`@job-list replied ${shownReply(outcome.value)}; expected [cursor, [id, attempts, group, score, last_error, bytes], ...]`);
  if (next === undefined || reply.length - 1 > limit) throw bad();
  const jobs = reply.slice(1).map((entry): JobRow => {
    if (!Array.isArray(entry) || entry.length !== 6) throw bad();
    const [id, attempts, g, score, lastError] = entry.slice(0, 5).map((v) => (v === null ? undefined : replyText(v)));
    const tries = Number(attempts);
    const bytes = count(entry[5]);
    if (id === undefined || !/^\d{1,15}$/.test(attempts ?? '') || !Number.isSafeInteger(bytes)) throw bad();
    const at = state === 'scheduled' && score !== undefined ? Number(score) : undefined;
    if (at !== undefined && !Number.isSafeInteger(at)) throw bad();
    // the answer's field order: id, state, attempts, group?, runAt?, lastError?, bytes
    return {
      id,
      state,
      attempts: tries,
      ...(g !== undefined && { group: g }),
      ...(at !== undefined && { runAt: at }),
      ...(lastError !== undefined && { lastError }),
      bytes,
    };
  });
  return { jobs, ...(next === '' ? {} : { cursor: next }) };
}
