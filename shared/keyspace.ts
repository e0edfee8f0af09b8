// The keyspace: every key this project sends is built here, after its parts are checked.
import { InvalidIdError, InvalidQueueError, KindError } from './errors.js';

/**
 * Queue names: 1 to 128 characters of `A-Z a-z 0-9 . _ -`. That keeps `{`, `}` (the
 * cluster hash tag), `:` (the key separator), whitespace, control bytes and non-ASCII
 * out of keys, so a name can never reshape the layout or move a key to another slot.
 */
export const QUEUE_MAX_LENGTH = 128;
const QUEUE_RULE = /^[A-Za-z0-9._-]+$/;

/** The Crockford base32 alphabet, lowercase; ascending in ASCII, so text order is numeric order. */
export const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** `JOB` + 26 alphabet characters: the 128 bits of a UUIDv7, so the first is 0 to 7. */
export const ID_LENGTH = 29;
const ID_RULE = /^JOB[0-7][0-9a-hjkmnp-tv-z]{25}$/;

function describe(value: string): string {
  return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value);
}

/** Throws InvalidQueueError saying what is wrong unless `queue` is a valid queue name. */
export function validateQueue(queue: unknown): asserts queue is string {
  if (typeof queue !== 'string') throw new InvalidQueueError(`queue name must be a string, got ${typeof queue}`);
  if (queue.length === 0) throw new InvalidQueueError('queue name is empty');
  if (queue.length > QUEUE_MAX_LENGTH) {
    throw new InvalidQueueError(`queue name is ${queue.length} characters long; the limit is ${QUEUE_MAX_LENGTH}`);
  }
  if (!QUEUE_RULE.test(queue)) {
    const bad = [...queue].find((c) => !QUEUE_RULE.test(c)) ?? '';
    const shown = /^[\x21-\x7e]$/.test(bad) ? `'${bad}'` : `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw new InvalidQueueError(
      `queue name ${describe(queue)} contains ${shown}; use only letters, digits, '.', '_' and '-'`,
    );
  }
}

/**
 * Throws unless `id` is an EchoMQ job id: KindError when it is not JOB-namespaced (the
 * wire's own rule), InvalidIdError when it is but is not `JOB` + 26 lowercase Crockford
 * base32 characters (the ids `mintId` makes; ids differing only in case are different jobs).
 */
export function validateId(id: unknown): asserts id is string {
  if (typeof id !== 'string') throw new InvalidIdError(`job id must be a string, got ${typeof id}`);
  if (!id.startsWith('JOB')) throw new KindError(`job id ${describe(id)} must be JOB-namespaced (start with "JOB")`);
  if (ID_RULE.test(id)) return;
  let why: string;
  if (id.length !== ID_LENGTH) why = `is ${id.length} characters long, not ${ID_LENGTH}`;
  else if (/[A-Z]/.test(id.slice(3))) why = 'has uppercase letters after JOB; ids are lowercase';
  else if (!/^[0-7]$/.test(id[3]!)) why = 'starts with a character above 7 after JOB, so it encodes more than 128 bits';
  else why = `has characters outside ${ID_ALPHABET} (no i, l, o, u)`;
  throw new InvalidIdError(`job id ${describe(id)} ${why}: expected JOB + 26 lowercase Crockford base32 characters`);
}

// The builders below assume checked parts; the exported ones check first.
const rowOf = (queue: string, id: string) => `emq:{${queue}}:job:${id}`;
const pendingOf = (queue: string) => `emq:{${queue}}:pending`;

/** `emq:{<queue>}:job:<id>`, the job's row. */
export function jobKey(queue: string, id: string): string {
  validateQueue(queue);
  validateId(id);
  return rowOf(queue, id);
}

/** `emq:{<queue>}:pending`, the queue's pending set. */
export function pendingKey(queue: string): string {
  validateQueue(queue);
  return pendingOf(queue);
}

/** The keys @enqueue takes for jobs of one queue, as KEYS[1] and KEYS[2]; checks the queue once. */
export function enqueueKeys(queue: string): (id: string) => [row: string, pending: string] {
  validateQueue(queue);
  const pending = pendingOf(queue);
  return (id) => {
    validateId(id);
    return [rowOf(queue, id), pending];
  };
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * `emq:{<queue>}:once:<64 hex>`, a dedupe marker: the SHA-256 of the scope and the key, so
 * any delivery id or Idempotency-Key (and a scope holding a token's digest) makes a short,
 * safe key in the queue's slot.
 */
export async function markerKey(queue: string, scope: string, key: string): Promise<string> {
  validateQueue(queue);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${scope}\u0000${key}`));
  return `emq:{${queue}}:once:${hex(digest)}`;
}

/** The SHA-256 of bytes, in hex: payload fingerprints for markers. */
export async function sha256Hex(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  return hex(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}
