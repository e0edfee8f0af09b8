// The keyspace: every key this project sends is built here, after its parts are checked.
import { InvalidArgumentError, InvalidIdError, InvalidQueueError, KindError } from './errors.js';
import { checkIdShape, idShapeProblem } from './ids.js';

/**
 * Queue names: 1 to 128 characters of `A-Z a-z 0-9 . _ -`. That keeps `{`, `}` (the
 * cluster hash tag), `:` (the key separator), whitespace, control bytes and non-ASCII
 * out of keys, so a name can never reshape the layout or move a key to another slot.
 * `emq` itself is the library's reserved name (its `{emq}:` keys), so it is refused too.
 */
export const QUEUE_MAX_LENGTH = 128;
const QUEUE_RULE = /^[A-Za-z0-9._-]+$/;

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
  if (queue === 'emq') throw new InvalidQueueError('queue name "emq" is reserved by the EchoMQ wire ({emq}:version and its kin); choose another');
  if (!QUEUE_RULE.test(queue)) {
    const bad = [...queue].find((c) => !QUEUE_RULE.test(c)) ?? '';
    const shown = /^[\x21-\x7e]$/.test(bad) ? `'${bad}'` : `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw new InvalidQueueError(`queue name ${describe(queue)} contains ${shown}; use only letters, digits, '.', '_' and '-'`);
  }
}

/**
 * Throws unless `id` is a job id, checked in the library's order: shape first (InvalidIdError
 * unless it is a 14-byte branded id of any namespace, saying what is wrong), kind second
 * (KindError unless its namespace is JOB, the wire's EMQKIND rule).
 */
export function validateId(id: unknown): asserts id is string {
  checkIdShape(id);
  if (!id.startsWith('JOB')) {
    throw new KindError(`job id ${JSON.stringify(id)} is a well-formed id of namespace ${id.slice(0, 3)}; a job id must be JOB-namespaced`);
  }
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

/**
 * Throws InvalidIdError saying what is wrong unless `group` names a lane: a 14-byte branded
 * id of any namespace (the library's `lane_key!` check), e.g. `PRT0KHTOWnGLuC`.
 */
export function validateGroup(group: unknown): asserts group is string {
  if (typeof group !== 'string') throw new InvalidIdError(`group must be a string, got ${typeof group}`);
  const problem = idShapeProblem(group);
  if (problem) {
    throw new InvalidIdError(
      `group ${describe(group)} ${problem}: a group (lane) is named by a 14-character branded id of any namespace, such as PRT0KHTOWnGLuC`,
    );
  }
}

// A queue's other keys, `emq:{<queue>}:<suffix>`, for checked queues.
const keyOf = (queue: string, suffix: string) => `emq:{${queue}}:${suffix}`;

/** `emq:{<queue>}:schedule`, the queue's schedule set (scored by run-at Unix ms). */
export function scheduleKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'schedule');
}

/** `emq:{<queue>}:g:<group>:pending`, one group's lane. */
export function laneKey(queue: string, group: string): string {
  validateQueue(queue);
  validateGroup(group);
  return keyOf(queue, `g:${group}:pending`);
}

/** `emq:{<queue>}:ring`, the groups that can be served now (a list). */
export function ringKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'ring');
}

/** `emq:{<queue>}:paused`, the paused groups (a set; the queue's own pause flag is in `meta`). */
export function pausedGroupsKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'paused');
}

/** `emq:{<queue>}:glimit`, group → concurrency ceiling (a hash). */
export function groupLimitKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'glimit');
}

/** `emq:{<queue>}:gactive`, group → jobs claimed now (a hash). */
export function groupActiveKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'gactive');
}

/** `emq:{<queue>}:meta`, the queue's settings (a hash; its `paused` field stops the library's claims). */
export function metaKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'meta');
}

/**
 * The keys of one group's settings, as @group-set takes them: its lane, ring, paused, glimit,
 * gactive, gweight, wake (@group-read takes the first six). Checks the queue and the group.
 */
export function groupKeys(queue: string, group: string): string[] {
  validateQueue(queue);
  validateGroup(group);
  return [`g:${group}:pending`, 'ring', 'paused', 'glimit', 'gactive', 'gweight', 'wake'].map((s) => keyOf(queue, s));
}

/** The twelve keys @queue-info takes: meta, the four sets, the two metrics hashes, ring, paused, glimit, gactive, gweight. */
export function queueInfoKeys(queue: string): string[] {
  validateQueue(queue);
  return ['meta', 'pending', 'active', 'schedule', 'dead', 'metrics:completed', 'metrics:failed', 'ring', 'paused', 'glimit', 'gactive', 'gweight'].map((s) =>
    keyOf(queue, s),
  );
}

/** The longest name of a repeatable (the library's EchoMQ.Repeat registration): 255, as a dedup id. */
export const SCHEDULE_NAME_MAX_LENGTH = 255;
const SCHEDULE_NAME = /^[A-Za-z0-9._-]{1,255}$/;

/**
 * Throws InvalidArgumentError saying what is wrong unless `name` names a repeatable: 1 to 255
 * of `A-Z a-z 0-9 . _ -`, so it travels in a URL path as itself and keeps `:` and braces out
 * of its record's key.
 */
export function validateScheduleName(name: unknown): asserts name is string {
  if (typeof name === 'string' && SCHEDULE_NAME.test(name)) return;
  const what = typeof name !== 'string' ? `a ${typeof name}` : name.length === 0 ? 'empty' : `${describe(name)} (${name.length} characters)`;
  throw new InvalidArgumentError(`a schedule's name is 1 to ${SCHEDULE_NAME_MAX_LENGTH} of A-Z a-z 0-9 . _ -; this one is ${what}`);
}

/** `emq:{<queue>}:repeat`, the library's registry of repeatables (a sorted set: name by next run, Unix ms). */
export function repeatKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'repeat');
}

/** The registry and `emq:{<queue>}:repeat:<name>`, the record (a hash: every_ms, template), as the repeat scripts take them. */
export function repeatKeys(queue: string, name: string): [registry: string, record: string] {
  validateQueue(queue);
  validateScheduleName(name);
  return [keyOf(queue, 'repeat'), keyOf(queue, `repeat:${name}`)];
}

/** `emq:{<queue>}:wake`, wake tokens for parked consumers (a list of at most 64). */
export function wakeKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'wake');
}

/** The keys @schedule takes for jobs of one queue, as KEYS[1] and KEYS[2]; checks the queue once. */
export function scheduleKeys(queue: string): (id: string) => [row: string, schedule: string] {
  validateQueue(queue);
  const schedule = keyOf(queue, 'schedule');
  return (id) => {
    validateId(id);
    return [rowOf(queue, id), schedule];
  };
}

/**
 * The seven keys @genqueue takes for jobs of one queue: the row, the group's lane, ring,
 * paused, glimit, gactive, wake. Checks the queue once, then the id and the group per job.
 */
export function genqueueKeys(queue: string): (id: string, group: string) => string[] {
  validateQueue(queue);
  const shared = ['ring', 'paused', 'glimit', 'gactive', 'wake'].map((s) => keyOf(queue, s));
  return (id, group) => {
    validateId(id);
    validateGroup(group);
    return [rowOf(queue, id), keyOf(queue, `g:${group}:pending`), ...shared];
  };
}

/** `emq:{<queue>}:job:<id>:dependencies`, a flow parent's count of children not done yet (a string). */
export function dependenciesKey(queue: string, parentId: string): string {
  return `${jobKey(queue, parentId)}:dependencies`;
}

/** `emq:{<queue>}:job:<id>:processed`, a flow parent's completed children: child id → result (a hash). */
export function processedKey(queue: string, parentId: string): string {
  return `${jobKey(queue, parentId)}:processed`;
}

/**
 * `emq:{<queue>}:flow:outbox`, the completions of this queue's flow children whose parent runs
 * in another queue, waiting for the library's Pump to count them on the parent's slot (a list).
 */
export function flowOutboxKey(queue: string): string {
  validateQueue(queue);
  return keyOf(queue, 'flow:outbox');
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** The characters a dedup id may hold, as the library's `de:` keys take them. */
const DEDUP_RULE = /^[A-Za-z0-9._-]{1,255}$/;

/**
 * `emq:{<queue>}:de:<dedupId>`, the library's dedup key: a string holding the bare id of the
 * job it parked. Throws InvalidIdError unless the dedup id is 1 to 255 of `A-Z a-z 0-9 . _ -`.
 */
export function dedupKey(queue: string, dedupId: string): string {
  validateQueue(queue);
  if (!DEDUP_RULE.test(dedupId)) throw new InvalidIdError('a dedup id is 1 to 255 characters of A-Z a-z 0-9 . _ -');
  return `emq:{${queue}}:de:${dedupId}`;
}

/**
 * The dedup id for a caller's key (an Idempotency-Key, a webhook delivery id or body hash)
 * within a scope (a token's digest, a webhook source): the SHA-256 of both, in hex, so any
 * key of any caller makes a short, safe dedup id and two scopes never share one.
 */
export async function dedupIdOf(scope: string, key: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${scope}\u0000${key}`));
  return hex(digest);
}

/** The SHA-256 of bytes, in hex (a token digest scopes its Idempotency-Keys). */
export async function sha256Hex(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  return hex(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}
