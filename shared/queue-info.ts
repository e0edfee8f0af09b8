// queueInfo: a queue at a glance, read in one script: paused or not, its counts as the
// library's @counts reads them, and a page of its groups, including groups whose jobs all
// wait (which the library's own Dashboard, looking only at gactive, misses).
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { InvalidArgumentError, ProtocolError, fromReply, replyText, shownReply } from './errors.js';
import { groupViewOf, type GroupView } from './group-control.js';
import { idShapeProblem } from './ids.js';
import { queueInfoKeys } from './keyspace.js';
import { queueInfoScript } from './scripts.js';

export interface QueueCounts {
  pending: number;
  active: number;
  scheduled: number;
  dead: number;
  completed: number;
  failed: number;
}

export interface QueueInfo {
  queue: string;
  paused: boolean;
  counts: QueueCounts;
  /** A page of groups, ordered by name (as bytes). */
  groups: GroupView[];
  /** Present when more groups follow: pass it as `cursor` for the next page. */
  cursor?: string;
}

export const QUEUE_INFO_PAGE = 100;
export const QUEUE_INFO_PAGE_MAX = 1000;

/**
 * The queue's pause flag, counts and a page of groups (`count`, default 100, at most 1000,
 * after `cursor`, the previous page's). An unknown queue is unpaused, all zeros, no groups.
 */
export async function queueInfo(connection: Connection, queue: string, options: { cursor?: string; count?: number } = {}): Promise<QueueInfo> {
  const keys = queueInfoKeys(queue); // checks the queue
  const { cursor = '', count = QUEUE_INFO_PAGE } = options;
  if (typeof cursor !== 'string' || (cursor !== '' && idShapeProblem(cursor) !== undefined)) {
    throw new InvalidArgumentError('cursor must be the cursor of a previous page (a group name)');
  }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > QUEUE_INFO_PAGE_MAX) {
    throw new InvalidArgumentError(`count must be an integer from 1 to ${QUEUE_INFO_PAGE_MAX}`);
  }
  const outcome = await runScript(connection, queueInfoScript, keys, [cursor, String(count)]);
  if (!outcome.ok) throw fromReply(outcome.error);
  return queueInfoOf(queue, outcome.value);
}

/** @queue-info's reply for `queue` as a QueueInfo; a ProtocolError when it is not one (the listing reads a page of them). */
export function queueInfoOf(queue: string, value: unknown): QueueInfo {
  const [head, more, views] = Array.isArray(value) && value.length === 3 ? value : [];
  const numbers = Array.isArray(head) && head.length === 7 ? head.map((n) => (typeof n === 'number' || typeof n === 'bigint' ? Number(n) : Number.NaN)) : [];
  const next = replyText(more);
  if (numbers.length !== 7 || !numbers.every(Number.isSafeInteger) || next === undefined || !Array.isArray(views)) {
    throw new ProtocolError(`@queue-info replied ${shownReply(value)}; expected [counts, cursor, groups]`);
  }
  const [paused, pending, active, scheduled, dead, completed, failed] = numbers as [number, number, number, number, number, number, number];
  return {
    queue,
    paused: paused === 1,
    counts: { pending, active, scheduled, dead, completed, failed },
    groups: views.map((v) => groupViewOf(v, '@queue-info')),
    ...(next === '' ? {} : { cursor: next }),
  };
}
