// enqueue / enqueueNew: one job, EVALSHA first, EVAL only after NOSCRIPT, replies to verdicts (batches: batch.ts).
import type { Connection, Outcome } from './connection.js';
import { runScript } from './dispatch.js';
import { EmqError, InvalidPayloadError, ProtocolError, ServerError, fromReply } from './errors.js';
import { mintId, remint } from './ids.js';
import { enqueueKeys } from './keyspace.js';
import { enqueueScript } from './scripts.js';

export type Verdict = 'enqueued' | 'duplicate';

/** Payload bytes. A string is sent as its UTF-8 bytes, so it must be well-formed. */
export type Payload = Uint8Array | string;

export interface Job {
  id: string;
  payload: Payload;
}

/** A job for enqueueMany: without an id, one is minted (and minted again should it collide). */
export interface JobInput {
  id?: string | undefined;
  payload: Payload;
}

/**
 * How many ids one job may be minted before giving up. Two minters that share a node id
 * can mint the same id in the same millisecond: then the second finds the first's row and
 * is answered `duplicate` for a job never sent. Such a `duplicate` on the first try of an
 * id just minted is a collision, and the cure is a fresh id.
 */
export const MINT_TRIES = 8;

/** Collisions kept coming: something mints on this node id much faster than we do. */
export function collisionError(tries: number): ServerError {
  return new ServerError(
    `${tries} freshly minted ids in a row were already taken: another minter shares this node id (set EMQ_NODE_ID, or a disjoint EMQ_NODE_IDS, per minter)`,
  );
}

export interface JobResult {
  id: string;
  verdict: Verdict;
}

/** Throws InvalidPayloadError unless the payload is bytes, or a string with an exact UTF-8 form. */
export function checkPayload(payload: unknown): asserts payload is Payload {
  if (payload instanceof Uint8Array) return;
  if (typeof payload !== 'string') {
    throw new InvalidPayloadError(`payload must be a Uint8Array or a string, got ${payload === null ? 'null' : typeof payload}`);
  }
  // A lone surrogate has no UTF-8 form: encoding would replace it and change the payload.
  if (!payload.isWellFormed()) {
    throw new InvalidPayloadError('payload string has a lone surrogate, so it has no exact UTF-8 form; pass bytes instead');
  }
}

/**
 * What a reply of @enqueue (or a script replying as it does: @genqueue, @schedule) tells its
 * caller: 1 `admitted` (enqueued, or scheduled for @schedule), 0 duplicate; an error reply as
 * the typed error it stands for. The metrics' and log lines' label is observe.ts's verdictOf.
 */
export function admissionOf<A extends string = 'enqueued'>(outcome: Outcome, name = '@enqueue', admitted = 'enqueued' as A): A | 'duplicate' | EmqError {
  if (!outcome.ok) return fromReply(outcome.error);
  const value = typeof outcome.value === 'bigint' ? Number(outcome.value) : outcome.value;
  if (value === 1) return admitted;
  if (value === 0) return 'duplicate';
  return new ProtocolError(`${name} replied ${String(value)}; expected 1 or 0`);
}

/**
 * Enqueues one job: one round trip in steady state, two right after a script flush.
 * Resolves to `enqueued`, or `duplicate` when the id exists (nothing written). Refusals
 * throw typed errors before anything is sent (queue, id, payload) or after the script
 * refused (kind, layout, wrong type); a transport failure throws ConnectionError, and
 * the same call may be retried safely while the job exists (the id dedups until its job completes; enqueueOnce dedups beyond).
 */
export async function enqueue(connection: Connection, queue: string, id: string, payload: Payload): Promise<Verdict> {
  const keys = enqueueKeys(queue)(id);
  checkPayload(payload);
  const verdict = admissionOf(await runScript(connection, enqueueScript, keys, [id, payload]));
  if (verdict instanceof EmqError) throw verdict;
  return verdict;
}

/**
 * Enqueues one job under an id minted here (`mint`, this process's minter by default). A
 * `duplicate` for an id just minted is a collision with another minter, never the caller's
 * duplicate: a fresh id is minted and sent, at most MINT_TRIES times. Resolves to the id
 * the job landed under.
 */
export async function enqueueNew(connection: Connection, queue: string, payload: Payload, mint: () => string = mintId): Promise<string> {
  const keysOf = enqueueKeys(queue);
  checkPayload(payload);
  for (let tries = 1; tries <= MINT_TRIES; tries++) {
    const id = tries === 1 ? mint() : remint(mint);
    const verdict = admissionOf(await runScript(connection, enqueueScript, keysOf(id), [id, payload]));
    if (verdict instanceof EmqError) throw verdict;
    if (verdict === 'enqueued') return id;
  }
  throw collisionError(MINT_TRIES);
}

/** Some jobs of a batch failed; `results` holds every job's verdict or error, in order. */
export class BatchError<V extends string = Verdict> extends EmqError {
  readonly results: ReadonlyArray<{ id: string; verdict: V } | { id: string; error: EmqError }>;
  constructor(results: ReadonlyArray<{ id: string; verdict: V } | { id: string; error: EmqError }>) {
    const failed = results.filter((r) => 'error' in r);
    const first = failed[0] as { error: EmqError };
    super(first.error.code, `${failed.length} of ${results.length} jobs failed; first: ${first.error.message}`, {
      cause: first.error,
    });
    this.results = results;
  }
}
