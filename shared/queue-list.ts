// listQueues: the queues that exist, found by a cursor-paged SCAN over the library's key
// families (never KEYS), with each page's counts read as GET /v1/queues/{q} reads them
// (@queue-info, one pipeline for the page). Each call makes one SCAN step of COUNT `count`
// (the server looks at about that many keys), so its work is bounded whatever the keyspace
// holds; a page may hold few queues or none while the cursor is not done. SCAN may meet a key
// twice across a walk, so a name can appear on two pages (never twice on one); a queue that
// exists for the whole walk is met at least once. A queue whose keys hold what the library
// never writes (a string where a set belongs: @queue-info refuses it) is left out of the page,
// so that one such queue does not hide every other; GET /v1/queues/{q} names its fault.
import type { Connection, Outcome, ScanStep } from './connection.js';
import { dispatch, evalsha } from './dispatch.js';
import { InvalidArgumentError, ProtocolError, RefusalError, ServerError, fromReply, replyText, shownReply } from './errors.js';
import { queueInfoKeys } from './keyspace.js';
import { queueInfoOf, type QueueCounts } from './queue-info.js';
import { queueInfoScript } from './scripts.js';

/**
 * The keys a listing asks SCAN for: every per-queue key but job rows and their subkeys (most
 * of a busy keyspace), which name a queue only alongside its sets. Braces are not special in
 * the server's glob, and a queue name holds none, so `{*}` is exactly the hash tag.
 */
export const QUEUE_SCAN_MATCH = 'emq:{*}:[^j]*';
export const QUEUE_SCAN_COUNT = 1_000;
export const QUEUE_SCAN_COUNT_MAX = 5_000;

/** The families that say a queue exists (LIBRARY.md b): its sets, settings, lanes, registry, metrics. */
const FAMILY =
  /^emq:\{([A-Za-z0-9._-]{1,128})\}:(?:pending|active|schedule|dead|meta|repeat|metrics:completed|metrics:failed|ring|paused|glimit|gactive|gweight|g:[A-Z]{3}[0-9A-Za-z]{11}:pending)$/;

const U64_MAX = 18_446_744_073_709_551_615n;
/** A walk's cursor: the server's (a 64-bit number), or on a cluster <slot>:<the node's>, the slot the first of the node walked. */
const CURSOR = /^(?:(0|[1-9][0-9]{0,4}):)?(0|[1-9][0-9]{0,19})$/;

/** A cursor as its parts, or undefined when it is none: a node cursor past 2^64 - 1, a slot past 16383. */
export function parseScanCursor(cursor: string): { slot?: number; node: string } | undefined {
  const m = CURSOR.exec(cursor);
  if (!m || BigInt(m[2]!) > U64_MAX) return undefined;
  if (m[1] === undefined) return { node: m[2]! };
  const slot = Number(m[1]);
  return slot > 16_383 ? undefined : { slot, node: m[2]! };
}

/** A SCAN step's outcome as a ScanStep; a cursor the server (or the gateway) calls invalid is InvalidArgumentError. */
export function scanStepOf(outcome: Outcome): ScanStep {
  if (!outcome.ok) {
    if (/^ERR invalid cursor/i.test(outcome.error)) throw new InvalidArgumentError('cursor must be the cursor a page answered, on this deployment');
    throw fromReply(outcome.error);
  }
  const [next, keys] = Array.isArray(outcome.value) && outcome.value.length === 2 ? outcome.value : [];
  const cursor = replyText(next);
  if (cursor === undefined || parseScanCursor(cursor) === undefined || !Array.isArray(keys)) {
    throw new ProtocolError(`SCAN replied ${shownReply(outcome.value)}; expected [cursor, keys]`);
  }
  return { cursor, keys: keys as Array<string | Uint8Array> };
}

export interface QueueSummary {
  name: string;
  counts: QueueCounts;
  paused: boolean;
}

export interface QueuePage {
  /** Sorted by name (as bytes), each once. */
  queues: QueueSummary[];
  /** Present while the walk is not done: pass it as `cursor` for the next page. */
  cursor?: string;
}

export interface QueueListOptions {
  /** The previous page's cursor; absent or '0' to start. */
  cursor?: string;
  /** SCAN's COUNT for this call, 1 to 5000 (default 1000): the work asked of it. */
  count?: number;
  /** Only the queues this says yes to are read and answered (a token's queues). */
  allows?: (queue: string) => boolean;
}

const latin1 = new TextDecoder('latin1');
const keyText = (k: unknown) => (typeof k === 'string' ? k : k instanceof Uint8Array ? latin1.decode(k) : '');

/** One page of the queues that exist (one SCAN step), with their counts and pause flag. */
export async function listQueues(connection: Connection, options: QueueListOptions = {}): Promise<QueuePage> {
  const { cursor = '0', count = QUEUE_SCAN_COUNT, allows = () => true } = options;
  if (typeof cursor !== 'string' || parseScanCursor(cursor) === undefined) throw new InvalidArgumentError('cursor must be the cursor a page answered');
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > QUEUE_SCAN_COUNT_MAX) {
    throw new InvalidArgumentError(`count must be an integer from 1 to ${QUEUE_SCAN_COUNT_MAX}`);
  }
  if (!connection.scan) throw new ServerError('this connection cannot walk the keyspace (its transport has no scan): queues cannot be listed over it');
  const step = await connection.scan(cursor, QUEUE_SCAN_MATCH, count);
  const names = new Set<string>();
  for (const key of step.keys) {
    const queue = FAMILY.exec(keyText(key))?.[1];
    if (queue !== undefined && queue !== 'emq' && allows(queue)) names.add(queue);
  }
  // ASCII names: code-unit order is byte order
  const sorted = [...names].sort();
  const outcomes =
    sorted.length === 0
      ? []
      : await dispatch(
          connection,
          queueInfoScript,
          sorted.map((q) => evalsha(queueInfoScript, queueInfoKeys(q), ['', '1'])),
        );
  const queues: QueueSummary[] = [];
  sorted.forEach((name, i) => {
    const outcome = outcomes[i]!;
    if (!outcome.ok) {
      const error = fromReply(outcome.error);
      if (error instanceof RefusalError) return; // WRONGTYPE, EMQLAYOUT: not the library's wire
      throw error;
    }
    const { counts, paused } = queueInfoOf(name, outcome.value);
    queues.push({ name, counts, paused });
  });
  return { queues, ...(step.cursor === '0' ? {} : { cursor: step.cursor }) };
}
