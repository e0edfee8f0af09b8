// Where and when a job is admitted: Emq-Group (a lane), Emq-Delay or Emq-Not-Before (the
// schedule), as headers of POST /v1/queues/{q}/jobs and as a batch item's group, delay and
// notBefore. Everything is checked before anything is written.
import { validateGroup } from '../../shared/index.js';
import { durationText, parseDuration, parseTime } from '../../shared/duration.js';
import { Problem, type ProblemCode } from './problem.js';

/** A job's placement: its lane (none: flat) and its due time (none: due now). */
export interface Placement {
  group?: string | undefined;
  /** Due at this Unix time in ms (Emq-Not-Before, the caller's clock). */
  at?: number | undefined;
  /** Due this many ms from now (Emq-Delay, the server's clock). */
  inMs?: number | undefined;
}

export interface PlacementInput {
  group?: string | undefined;
  delay?: string | undefined;
  notBefore?: string | undefined;
}

/** The names a refusal uses: the headers, or a batch item's fields. */
export interface PlacementNames {
  group: string;
  delay: string;
  notBefore: string;
}

export const HEADERS: PlacementNames = { group: 'Emq-Group', delay: 'Emq-Delay', notBefore: 'Emq-Not-Before' };

/** Checks the placement; throws a 400 Problem naming the header (or field) at fault. */
export function placementOf(input: PlacementInput, maxDelayMs: number, names: PlacementNames = HEADERS, now = Date.now()): Placement {
  const refuse = (code: ProblemCode, detail: string) => new Problem(400, code, detail);
  const out: Placement = {};
  if (input.group !== undefined) {
    try {
      validateGroup(input.group);
    } catch (err) {
      throw refuse('invalid_group', `${names.group}: ${(err as Error).message}`);
    }
    out.group = input.group;
  }
  if (input.delay !== undefined && input.notBefore !== undefined) {
    throw refuse('invalid_delay', `send ${names.delay} or ${names.notBefore}, not both`);
  }
  if (input.delay !== undefined) {
    let ms: number;
    try {
      ms = parseDuration(input.delay);
    } catch (err) {
      throw refuse('invalid_delay', `${names.delay}: ${(err as Error).message}`);
    }
    if (ms > maxDelayMs) throw refuse('invalid_delay', `${names.delay}: the delay is beyond ${durationText(maxDelayMs)} (EMQ_MAX_DELAY)`);
    out.inMs = ms;
  }
  if (input.notBefore !== undefined) {
    let at: number;
    try {
      at = parseTime(input.notBefore);
    } catch (err) {
      throw refuse('invalid_not_before', `${names.notBefore}: ${(err as Error).message}`);
    }
    if (at > now + maxDelayMs) {
      throw refuse('invalid_not_before', `${names.notBefore}: the time is beyond now + ${durationText(maxDelayMs)} (EMQ_MAX_DELAY)`);
    }
    out.at = Math.max(at, 0);
  }
  return out;
}

/** Whether the placement schedules the job (a due time) rather than admitting it now. */
export const isScheduled = (p: Placement): boolean => p.at !== undefined || p.inMs !== undefined;
