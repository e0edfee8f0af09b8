// schedule / scheduleMany / scheduleOnce: scheduled admission on the library's wire. The row
// is born `state scheduled` and the id waits in emq:{q}:schedule at its run-at score (Unix
// ms) until the library's @promote moves it to pending (or, with a group, to the group's
// lane). EVALSHA first, EVAL only after NOSCRIPT, as every script.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { EmqError, fromReply } from './errors.js';
import { admissionOf, checkPayload, type Payload } from './enqueue.js';
import { checkTtlSeconds, replyOf, sendOnce, type OnceOptions } from './enqueue-once.js';
import { mintId } from './ids.js';
import { dedupIdOf, dedupKey, scheduleKeys, validateGroup, validateId } from './keyspace.js';
import { scheduleOnceScript, scheduleScript } from './scripts.js';

export type ScheduleVerdict = 'scheduled' | 'duplicate';

/** The latest run-at time @schedule takes: the snowflake horizon, 2093-09-06T15:47:35.551Z (Unix ms). */
export const SCHEDULE_AT_MAX_MS = 3_903_090_455_551;
/** The longest delay @schedule takes: ten years of 365.25 days, in ms. */
export const SCHEDULE_DELAY_MAX_MS = 315_576_000_000;

/**
 * When a scheduled job becomes due: `at` a Unix time in ms (or a Date), on the caller's
 * clock; or `inMs` from now, on the server's clock (TIME, the clock @promote reads). Exactly
 * one of the two. With `group`, the job joins that group's lane when promoted (a branded id
 * of any namespace); without, the queue's pending set.
 */
export interface ScheduleOptions {
  at?: number | Date | undefined;
  inMs?: number | undefined;
  group?: string | undefined;
}

/** The script's [mode, value] for `when`; throws RangeError (saying the bounds) unless it is one whole, bounded time. */
export function scheduleArgs(when: ScheduleOptions): ['at' | 'in', string] {
  const { at, inMs } = when;
  if ((at === undefined) === (inMs === undefined)) throw new RangeError('a scheduled job needs exactly one of at (Unix ms) and inMs');
  if (at !== undefined) {
    const ms = at instanceof Date ? at.getTime() : at;
    if (!Number.isSafeInteger(ms) || ms < 0 || ms > SCHEDULE_AT_MAX_MS) {
      throw new RangeError(`at must be a whole number of Unix ms from 0 to ${SCHEDULE_AT_MAX_MS} (2093-09-06T15:47:35.551Z), got ${String(ms)}`);
    }
    return ['at', String(ms)];
  }
  if (!Number.isSafeInteger(inMs) || inMs! < 0 || inMs! > SCHEDULE_DELAY_MAX_MS) {
    throw new RangeError(`inMs must be a whole number of ms from 0 to ${SCHEDULE_DELAY_MAX_MS} (ten years), got ${String(inMs)}`);
  }
  return ['in', String(inMs)];
}

/** Checks one scheduled job's parts and answers @schedule's arguments after the id (payload last). */
function argsOf(payload: Payload, options: ScheduleOptions): [string, string, ...string[], Payload] {
  const [mode, value] = scheduleArgs(options);
  if (options.group !== undefined) validateGroup(options.group);
  checkPayload(payload);
  return options.group === undefined ? [mode, value, payload] : [mode, value, options.group, payload];
}

/**
 * Schedules one job: its row is born `state scheduled` (with `group` when given) and it
 * waits in the schedule set until due. Resolves to `scheduled`, or `duplicate` when the id
 * exists (nothing written). Refusals throw typed errors before anything is sent (queue, id,
 * group, payload; RangeError for the time) or after the script refused (kind, layout, wrong
 * type); a transport failure throws ConnectionError, and the same call may be retried
 * safely: the id makes it idempotent (an `inMs` retried counts from the retry).
 */
export async function schedule(connection: Connection, queue: string, id: string, payload: Payload, options: ScheduleOptions): Promise<ScheduleVerdict> {
  const keys = scheduleKeys(queue)(id);
  const args = argsOf(payload, options);
  const verdict = admissionOf(await runScript(connection, scheduleScript, keys, [id, ...args]), '@schedule', 'scheduled');
  if (verdict instanceof EmqError) throw verdict;
  return verdict;
}

export interface ScheduleResult {
  id: string;
  verdict: ScheduleVerdict;
}

/** scheduleOnce's options: enqueueOnce's (scope, key, payload, compare, ttlSeconds, id, mint) and the time (and group). */
export interface ScheduleOnceOptions extends OnceOptions, ScheduleOptions {}

/**
 * Schedules `payload` unless (scope, key) was used within its lifetime, in which case it
 * answers the job that use made (`duplicate`; with `compare`, another payload or another
 * group is a ConflictError and nothing is written; the time is never compared). As
 * enqueueOnce otherwise: a minted id that names another minter's job is minted again.
 */
export async function scheduleOnce(connection: Connection, queue: string, options: ScheduleOnceOptions): Promise<{ id: string; verdict: ScheduleVerdict }> {
  const { scope, key, payload, compare, ttlSeconds, id: given, mint = mintId } = options;
  const keysOf = scheduleKeys(queue);
  const [mode, value, ...rest] = argsOf(payload, options);
  checkTtlSeconds(ttlSeconds);
  if (given !== undefined) validateId(given);
  const dedup = dedupKey(queue, await dedupIdOf(scope, key));
  const { flag, id } = await sendOnce(given, mint, '@schedule-once', async (id) => {
    const [row, schedule] = keysOf(id);
    const outcome = await runScript(
      connection,
      scheduleOnceScript,
      [row, schedule, dedup],
      [id, compare ? '1' : '0', String(ttlSeconds), mode, value, ...rest],
    );
    if (!outcome.ok) throw fromReply(outcome.error);
    return replyOf(outcome.value, id, '@schedule-once');
  });
  return { id, verdict: flag === 1 ? 'scheduled' : 'duplicate' };
}
