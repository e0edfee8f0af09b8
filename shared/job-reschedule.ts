// rescheduleJob: a scheduled job's due time moved, `ZADD schedule XX` and nothing else
// (lua/job-reschedule.lua); a delay is counted on the server's clock, as admission's.
import type { Connection } from './connection.js';
import { flagged, oneOf } from './control-reply.js';
import { runScript } from './dispatch.js';
import { ProtocolError, fromReply } from './errors.js';
import { jobKey } from './keyspace.js';
import { jobRescheduleScript } from './scripts.js';

export type RescheduleOutcome = { rescheduled: true; runAt: number } | { rescheduled: false; reason: 'not_scheduled' | 'absent' };

/** The most the script takes: 15 decimal digits, below 2^53 so exact. The caller holds values to admission's bounds (shared/schedule.ts). */
const MOST = 999_999_999_999_999;

/**
 * Moves a scheduled job to `runAtMs` (Unix ms, the caller's clock) or `delayMs` from now (the
 * server's clock, TIME). Resolves `{rescheduled: true, runAt}` (the score written) or
 * `{rescheduled: false, reason}` with nothing written. Throws RangeError for a time that is
 * not a whole number from 0 to 999,999,999,999,999 (nothing sent); typed errors for a bad
 * queue or id, or the script's refusals.
 */
export async function rescheduleJob(
  connection: Connection,
  queue: string,
  id: string,
  at: { delayMs: number } | { runAtMs: number },
): Promise<RescheduleOutcome> {
  const row = jobKey(queue, id); // checks the queue and the id
  const [mode, ms] = 'delayMs' in at ? (['in', at.delayMs] as const) : (['at', at.runAtMs] as const);
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MOST)
    throw new RangeError(`${mode === 'in' ? 'delayMs' : 'runAtMs'} must be a whole number of ms from 0 to ${MOST}, got ${String(ms)}`);
  const outcome = await runScript(connection, jobRescheduleScript, [row, `emq:{${queue}}:schedule`], [id, mode, String(ms)]);
  if (!outcome.ok) throw fromReply(outcome.error);
  const [flag, [a]] = flagged('job-reschedule', outcome.value);
  if (flag === 0) return { rescheduled: false, reason: oneOf('job-reschedule', a, ['not_scheduled', 'absent'] as const) };
  const runAt = Number(a);
  if (flag !== 1 || !Number.isSafeInteger(runAt) || runAt < 0)
    throw new ProtocolError(`@job-reschedule replied [${flag}, ${JSON.stringify(a)}]; expected [1, runAt]`);
  return { rescheduled: true, runAt };
}
