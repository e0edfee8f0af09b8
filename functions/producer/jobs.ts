// A job's steps, as plain functions: its plan from the request's headers (made before the body
// is read), and its admission (flat, into a lane, or scheduled; the -once twin with an
// Idempotency-Key or a webhook delivery). POST …/jobs (queue-routes.ts) and the webhooks
// (webhook-route.ts) take them.
import {
  ConflictError,
  enqueue,
  enqueueGrouped,
  enqueueGroupedMany,
  enqueueGroupedOnce,
  enqueueNew,
  enqueueOnce,
  schedule,
  scheduleMany,
  scheduleOnce,
  validateId,
  type BatchOnce,
  type Connection,
  type Payload,
} from '../../shared/index.js';
import type { Config } from './config.js';
import { isScheduled, placementOf, type Placement } from './placement.js';
import { Problem } from './problem.js';
import type { Caller } from './tokens.js';

/** POST …/jobs's checks, made before its body is read: the job's id, Idempotency-Key and placement, and the payload's cap. */
export interface JobPlan {
  queue: string;
  given: string | undefined;
  key: string | undefined;
  placement: Placement;
  maxPayloadBytes: number;
  dedupeTtlSeconds: number;
}

export type Admitted = { id: string; verdict: 'enqueued' | 'scheduled' | 'duplicate' };

/** What makes a job -once: its dedup key's scope and key, whether a repeat must carry the same payload, the key's life. */
export type Once = BatchOnce;

/** An Idempotency-Key (the header, or a batch item's `idempotencyKey`): 1 to 255 printable ASCII characters, not starting with a space. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** The request's Idempotency-Key (`header`: any case), or undefined; one that is not 1 to 255 printable ASCII characters is 400. */
export function idempotencyKeyOf(header: (name: string) => string | undefined): string | undefined {
  const key = header('Idempotency-Key');
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new Problem(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  return key;
}

/** A job's placement from its own group or the queue's default lane (EMQ_QUEUE_GROUPS). */
export const withDefaultLane = (queue: string, placement: Placement, groupOf: Config['groupOf']): Placement =>
  placement.group === undefined ? { ...placement, group: groupOf(queue) } : placement;

/** The plan of a job for `queue` from its request headers (`header`: any case); a refused header throws its problem. The headers are checked before the configuration is read. */
export function planJob(queue: string, header: (name: string) => string | undefined, settings: () => Config): JobPlan {
  const given = header('Emq-Job-Id');
  if (given !== undefined) validateId(given);
  const key = idempotencyKeyOf(header);
  const { maxPayloadBytes, dedupeTtlSeconds, maxDelayMs, groupOf } = settings();
  const placed = placementOf({ group: header('Emq-Group'), delay: header('Emq-Delay'), notBefore: header('Emq-Not-Before') }, maxDelayMs);
  return { queue, given, key, placement: withDefaultLane(queue, placed, groupOf), maxPayloadBytes, dedupeTtlSeconds };
}

/**
 * One job, placed: scheduled (@schedule, with its group if any) when it has a due time, else
 * into a lane (@genqueue) when it has a group, else flat (@enqueue). With `once`, the -once
 * twin of the same script. Without an id, `mint` makes one.
 */
export async function admit(
  valkey: Connection,
  queue: string,
  job: { id?: string | undefined; payload: Payload; placement: Placement },
  mint: () => string,
  once?: Once,
): Promise<Admitted> {
  const { id, payload, placement } = job;
  const { group } = placement;
  if (isScheduled(placement)) {
    const when = { at: placement.at, inMs: placement.inMs, group };
    if (once) return scheduleOnce(valkey, queue, { ...once, id, mint, payload, ...when });
    if (id !== undefined) return { id, verdict: await schedule(valkey, queue, id, payload, when) };
    return (await scheduleMany(valkey, queue, [{ payload, ...when }], mint))[0]!;
  }
  if (group !== undefined) {
    if (once) return enqueueGroupedOnce(valkey, queue, { ...once, id, mint, payload, group });
    if (id !== undefined) return { id, verdict: await enqueueGrouped(valkey, queue, group, id, payload) };
    return (await enqueueGroupedMany(valkey, queue, [{ group, payload }], mint))[0]!;
  }
  if (once) return enqueueOnce(valkey, queue, { ...once, id, mint, payload });
  if (id !== undefined) return { id, verdict: await enqueue(valkey, queue, id, payload) };
  return { id: await enqueueNew(valkey, queue, payload, mint), verdict: 'enqueued' };
}

/**
 * The planned job admitted. An Idempotency-Key is the caller's own: scoped to the queue (the
 * dedup key's slot) and the caller; without Emq-Job-Id, the -once script's caller mints the id
 * (and mints again on a collision). The same key with another payload or group is 422.
 */
export async function admitJob(valkey: Connection, plan: JobPlan, caller: Caller, payload: Payload, mint: () => string): Promise<Admitted> {
  const { queue, given, key, placement, dedupeTtlSeconds } = plan;
  if (key === undefined) return admit(valkey, queue, { id: given, payload, placement }, mint);
  const scope = `key:${await caller.scope()}`;
  try {
    return await admit(valkey, queue, { id: given, payload, placement }, mint, { scope, key, compare: true, ttlSeconds: dedupeTtlSeconds });
  } catch (err) {
    if (err instanceof ConflictError) {
      throw new Problem(422, 'idempotency_conflict', `this Idempotency-Key was used with another payload or group (${err.message})`);
    }
    throw err;
  }
}
