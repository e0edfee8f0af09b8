// A batch request's body: a JSON array of at most `max` items, each
//   {"payload": "<utf-8 text>"} or {"payloadBase64": "<base64>"}, with an optional "id", and
//   optional "group" (a lane), "delay" or "notBefore" (the schedule), and "idempotencyKey",
//   as the headers of one job.
// Every item is checked before anything is written; the first bad one is named by index.
import { validateId, type JobInput } from '../../shared/index.js';
import { Problem } from './problem.js';
import { IDEMPOTENCY_KEY } from './jobs.js';
import { placementOf, type Placement } from './placement.js';
import { fromBase64 } from '../../shared/base64.js';

const utf8 = new TextEncoder();

function bad(index: number, detail: string): Problem {
  return new Problem(400, 'invalid_batch', `item ${index}: ${detail}`, { index });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A batch item: its payload, its id or none (one is minted), its placement, and its Idempotency-Key if any. */
export type BatchItem = JobInput & Placement & { idempotencyKey?: string };

const ITEM_NAMES = { group: 'group', delay: 'delay', notBefore: 'notBefore' };

/**
 * An item's payload bytes from exactly one of `payload` (UTF-8 text) and `payloadBase64`;
 * anything else throws `refuse(detail)`. Shared by batch items and flow jobs.
 */
export function itemPayload(payload: unknown, payloadBase64: unknown, refuse: (detail: string) => Error): Uint8Array {
  if (typeof payload === 'string' && payloadBase64 === undefined) {
    if (!payload.isWellFormed()) throw refuse('payload has a lone surrogate, which has no UTF-8 form: send payloadBase64');
    return utf8.encode(payload);
  }
  if (typeof payloadBase64 === 'string' && payload === undefined) {
    const decoded = fromBase64(payloadBase64);
    if (!decoded) throw refuse('payloadBase64 is not base64 (standard alphabet, padded)');
    return decoded;
  }
  throw refuse('needs exactly one of payload (a string) or payloadBase64 (a base64 string)');
}

/** Checks an item's optional job id; a bad one throws `refuse(detail)` saying what is wrong. */
export function itemId(id: unknown, refuse: (detail: string) => Error): asserts id is string | undefined {
  if (id === undefined) return;
  if (typeof id !== 'string') throw refuse('id must be a string');
  try {
    validateId(id);
  } catch (err) {
    throw refuse((err as Error).message);
  }
}

/** The body as UTF-8 JSON (fatal: a body that is not UTF-8 would otherwise be decoded into other bytes), or undefined. */
export function jsonOf(body: Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(strictUtf8.decode(body)) };
  } catch {
    return undefined;
  }
}

export function parseBatch(body: Uint8Array, max: number, maxPayloadBytes: number, maxDelayMs = 365 * 86_400_000, now = Date.now()): BatchItem[] {
  const parsed = jsonOf(body);
  if (!parsed) throw new Problem(400, 'invalid_batch', 'the body is not valid UTF-8 JSON: send an array of {"payload"} or {"payloadBase64"} items');
  const items = parsed.value;
  if (!Array.isArray(items) || items.length === 0) throw new Problem(400, 'invalid_batch', 'the body must be a non-empty JSON array');
  if (items.length > max) throw new Problem(400, 'invalid_batch', `${items.length} items; a batch holds at most ${max}`);
  return items.map((item: unknown, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw bad(i, 'must be an object');
    const { payload, payloadBase64, id, group, delay, notBefore, idempotencyKey, ...rest } = item as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) {
      throw bad(i, `unknown field "${unknown[0]}"; fields are payload, payloadBase64, id, group, delay, notBefore and idempotencyKey`);
    }
    if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey))) {
      throw bad(i, 'idempotencyKey must be 1 to 255 printable ASCII characters');
    }
    for (const [name, value] of Object.entries({ group, delay, notBefore })) {
      if (value !== undefined && typeof value !== 'string' && !(name === 'notBefore' && typeof value === 'number')) {
        throw bad(i, `${name} must be a string${name === 'notBefore' ? ' (RFC 3339) or a number (Unix ms)' : ''}`);
      }
    }
    let placement: Placement;
    try {
      placement = placementOf(
        { group: group as string | undefined, delay: delay as string | undefined, notBefore: notBefore === undefined ? undefined : String(notBefore) },
        maxDelayMs,
        ITEM_NAMES,
        now,
      );
    } catch (err) {
      throw bad(i, (err as Error).message);
    }
    const bytes = itemPayload(payload, payloadBase64, (detail) => bad(i, detail));
    if (bytes.length > maxPayloadBytes) throw bad(i, `payload is ${bytes.length} bytes; the limit is ${maxPayloadBytes}`);
    itemId(id, (detail) => bad(i, detail));
    // an item without an id gets one minted when it is sent (and a fresh one should it collide)
    const job: BatchItem = id === undefined ? { payload: bytes, ...placement } : { id: id as string, payload: bytes, ...placement };
    return idempotencyKey === undefined ? job : { ...job, idempotencyKey: idempotencyKey as string };
  });
}
