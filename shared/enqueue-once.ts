// enqueueOnce: enqueue behind the library's dedup key (a webhook delivery's signed id or
// body hash, an Idempotency-Key), in one atomic script, one round trip. The first use of a
// key enqueues and parks the job's id at emq:{q}:de:<dedupId>; every later use within the
// key's lifetime answers that job, as `duplicate`.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { ProtocolError, ServerError, fromReply, replyText } from './errors.js';
import { mintId, remint } from './ids.js';
import { dedupIdOf, dedupKey, enqueueKeys, validateId } from './keyspace.js';
import { enqueueOnceScript } from './scripts.js';
import { MINT_TRIES, checkPayload, type Payload, type Verdict } from './enqueue.js';

export interface OnceOptions {
  /** What the key belongs to, e.g. `webhook:<source>`, `webhook-body:<source>` or `key:<token digest>`. */
  scope: string;
  /** The delivery id, the body's SHA-256, or the Idempotency-Key. */
  key: string;
  payload: Payload;
  /** Compare payloads on reuse (Idempotency-Key); a different one is a ConflictError. */
  compare: boolean;
  /** How long the dedup key lives, in seconds: a whole number from 1 to TTL_MAX_SECONDS. */
  ttlSeconds: number;
  /** The caller's id for a new job; when it already names a job, that job is the answer. */
  id?: string | undefined;
  /** Where a new job's id comes from when `id` is not given; this process's minter by default. */
  mint?: (() => string) | undefined;
}

/** The longest dedup-key lifetime @enqueue-once takes (10 digits of seconds). */
export const TTL_MAX_SECONDS = 9_999_999_999;

/** Throws RangeError unless `ttlSeconds` is a dedup key's lifetime: a whole number from 1 to TTL_MAX_SECONDS. */
export function checkTtlSeconds(ttlSeconds: number): void {
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > TTL_MAX_SECONDS) {
    throw new RangeError(`ttlSeconds must be a whole number from 1 to ${TTL_MAX_SECONDS}, got ${ttlSeconds}`);
  }
}

/** Ids minted for one call, in all, before enqueueOnce stops trying. */

/**
 * Enqueues `payload` unless (scope, key) was used within its lifetime, in which case it
 * answers the job that use made (`duplicate`; with `compare`, another payload is a
 * ConflictError and nothing is written). Without `id`, the job's id is minted; an id that
 * turns out to name another minter's job is a collision, and a fresh one is sent (at most
 * MINT_TRIES in all), so the caller never sees a job that is not its own.
 */
export async function enqueueOnce(connection: Connection, queue: string, options: OnceOptions): Promise<{ id: string; verdict: Verdict }> {
  const { scope, key, payload, compare, ttlSeconds, id: given, mint = mintId } = options;
  const keysOf = enqueueKeys(queue);
  checkPayload(payload);
  checkTtlSeconds(ttlSeconds);
  if (given !== undefined) validateId(given);
  const dedup = dedupKey(queue, await dedupIdOf(scope, key));
  const flags = [compare ? '1' : '0', String(ttlSeconds)] as const;

  const { flag, id } = await sendOnce(given, mint, '@enqueue-once', async (id) => {
    const [row, pending] = keysOf(id);
    const outcome = await runScript(connection, enqueueOnceScript, [row, pending, dedup], [id, ...flags, payload]);
    if (!outcome.ok) throw fromReply(outcome.error); // EMQCONFLICT is a ConflictError
    return replyOf(outcome.value, id);
  });
  return { id, verdict: flag === 1 ? 'enqueued' : 'duplicate' };
}

/**
 * The id loop every dedup-keyed admission shares: `send` runs the script for one id and
 * answers its checked reply. With a caller's id (`given`), one call: a 2 (a row for it
 * exists) is that job, a duplicate. Without, ids from `mint`: a 2 for an id just minted
 * is another minter's job, so a fresh id is sent, at most MINT_TRIES in all. Resolves to
 * flag 1 (admitted under `id`) or 0 (a duplicate of `id`).
 */
export async function sendOnce(
  given: string | undefined,
  mint: () => string,
  name: string,
  send: (id: string) => Promise<{ flag: 0 | 1 | 2; id: string }>,
): Promise<{ flag: 0 | 1; id: string }> {
  if (given !== undefined) {
    const { flag, id } = await send(given);
    return { flag: flag === 1 ? 1 : 0, id };
  }
  for (let tries = 0; tries < MINT_TRIES; tries++) {
    const minted = tries === 0 ? mint() : remint(mint);
    validateId(minted);
    const { flag, id } = await send(minted);
    if (flag !== 2) return { flag, id };
    // flag 2: the id we just minted names a job we never sent, so another minter made it
  }
  throw new ServerError(
    `${name}: ${MINT_TRIES} freshly minted ids in a row each named an existing job; ids kept colliding, ` +
      "so another minter shares this one's node id (check EMQ_NODE_ID); nothing was written",
  );
}

/** The reply, checked: [1, sent id] admitted, [0, a JOB id] duplicate, [2, sent id] taken. */
export function replyOf(value: unknown, sent: string, name = '@enqueue-once'): { flag: 0 | 1 | 2; id: string } {
  const wrong = () => new ProtocolError(`${name} replied ${describe(value)}; expected [1|0|2, job id]`);
  if (!Array.isArray(value) || value.length !== 2) throw wrong();
  const flag = typeof value[0] === 'bigint' ? Number(value[0]) : value[0];
  const id = replyText(value[1]);
  if ((flag !== 0 && flag !== 1 && flag !== 2) || id === undefined) throw wrong();
  try {
    validateId(id);
  } catch {
    throw wrong();
  }
  if (flag !== 0 && id !== sent) throw wrong();
  return { flag, id };
}

function describe(value: unknown): string {
  const text = JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v instanceof Uint8Array ? new TextDecoder().decode(v) : v));
  return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
