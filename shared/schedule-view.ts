// Reading the library's repeatables (EchoMQ.Repeat): one registration, or a page of them, as
// a reader is shown them. A pause lives in the score alone (lua/lib/repeat.lua: PAUSED + the
// next run it had), so `paused` and `nextRunAt` are read from the score.
import type { Connection, Outcome, Reply } from './connection.js';
import { dispatch, evalsha, runScript } from './dispatch.js';
import { InvalidArgumentError, ProtocolError, fromReply, replyText } from './errors.js';
import { repeatKey, repeatKeys, validateQueue } from './keyspace.js';
import { repeatPageScript, repeatReadScript } from './scripts.js';

/** A paused registration is scored PAUSED_SCORE + its next run (Unix ms): far past any real run, so the Pump never finds it due. */
export const PAUSED_SCORE = 1_000_000_000_000_000;
/** The largest cursor ZSCAN takes (an unsigned 64-bit number): past it the server answers an error, not a page. */
const CURSOR_MAX = 18_446_744_073_709_551_615n;

/** A registry page's cursor: 0, or the 1 to 20 digits a page answered, at most 2^64 - 1 (leading zeros as the server reads them). */
export function isScheduleCursor(cursor: unknown): cursor is string {
  return typeof cursor === 'string' && /^[0-9]{1,20}$/.test(cursor) && BigInt(cursor) <= CURSOR_MAX;
}

/** The most registrations one page asks the server to walk (ZSCAN's COUNT); 100 unless given. */
export const SCHEDULE_PAGE_MAX = 1_000;

export interface ScheduleView {
  name: string;
  /** The period, ms. */
  everyMs: number;
  /** When the library's Pump next finds it due (Unix ms); null while paused, or when the registry holds no score for it (the Pump never fires it). */
  nextRunAt: number | null;
  paused: boolean;
  /** The template's bytes, exactly as stored: readSchedule only. */
  template?: Uint8Array;
}

export interface SchedulePage {
  schedules: ScheduleView[];
  /** Pass it back for the next page; absent when the walk is done. */
  cursor?: string;
}

const bad = (script: string, value: unknown) =>
  new ProtocolError(
    `@${script} replied ${JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v instanceof Uint8Array ? replyText(v) : v))?.slice(0, 200)}`,
  );

/** A reply of @repeat-read or @repeat-move as the registration's view: null when there is no record. */
export function viewOf(name: string, outcome: Outcome, script = 'repeat-read'): ScheduleView | null {
  if (!outcome.ok) throw fromReply(outcome.error);
  const reply = outcome.value;
  if (reply === null) return null;
  if (!Array.isArray(reply) || reply.length < 2 || reply.length > 3) throw bad(script, reply);
  const every = replyText(reply[0]);
  const score = reply[1] === null ? null : Number(replyText(reply[1]));
  // the library stores Integer.to_string(every_ms): one whole number, at least 1
  if (every === undefined || !/^[1-9][0-9]{0,14}$/.test(every)) throw bad(script, reply);
  if (score !== null && !(Number.isSafeInteger(score) && score >= 0 && score < 2 * PAUSED_SCORE)) throw bad(script, reply);
  const paused = score !== null && score >= PAUSED_SCORE;
  const view: ScheduleView = { name, everyMs: Number(every), nextRunAt: paused ? null : score, paused };
  if (reply.length === 3) {
    const template = reply[2] as Reply;
    // bytes exactly: a view of the reply's bytes (glide hands a Buffer, REST a Uint8Array)
    if (!(template instanceof Uint8Array)) throw bad(script, reply);
    view.template = new Uint8Array(template.buffer, template.byteOffset, template.byteLength);
  }
  return view;
}

/** One registration with its template, or null when the queue has none of that name. Reads only. */
export async function readSchedule(connection: Connection, queue: string, name: string): Promise<ScheduleView | null> {
  return viewOf(name, await runScript(connection, repeatReadScript, repeatKeys(queue, name), [name, '1']));
}

/** The raw record, template included, for registerSchedule's comparison: [every_ms, template], or null. */
export async function recordOf(connection: Connection, keys: readonly string[], name: string): Promise<[string, Uint8Array] | null> {
  const outcome = await runScript(connection, repeatReadScript, keys, [name, '1']);
  if (!outcome.ok) throw fromReply(outcome.error);
  const reply = outcome.value;
  if (reply === null) return null;
  const every = Array.isArray(reply) ? replyText(reply[0]) : undefined;
  const template = Array.isArray(reply) ? reply[2] : undefined;
  // a record the library made may lack a field: it then differs from any registration of ours
  return [every ?? '', template instanceof Uint8Array ? template : new Uint8Array(0)];
}

/**
 * One page of the queue's registrations (without templates), sorted by name within the page.
 * Pages walk the registry with ZSCAN: bounded work per call (`count`, 1 to 1000, default 100,
 * is the work asked; a small registry comes whole in one page), and every registration there
 * for the whole walk is met at least once, a name possibly twice across pages. A name outside
 * the rule (only the library's own register can make one) is not shown: no route could name it.
 */
export async function listSchedules(
  connection: Connection,
  queue: string,
  page: { cursor?: string | undefined; count?: number | undefined } = {},
): Promise<SchedulePage> {
  validateQueue(queue);
  const { cursor = '0', count = 100 } = page;
  if (!isScheduleCursor(cursor)) {
    throw new InvalidArgumentError('a schedules cursor is 0 or the 1 to 20 digits a page answered, at most 18446744073709551615');
  }
  if (!Number.isSafeInteger(count) || count < 1 || count > SCHEDULE_PAGE_MAX) {
    throw new InvalidArgumentError(`a schedules page's count is a whole number from 1 to ${SCHEDULE_PAGE_MAX}`);
  }
  const outcome = await runScript(connection, repeatPageScript, [repeatKey(queue)], [cursor, String(count)]);
  if (!outcome.ok) throw fromReply(outcome.error);
  const reply = outcome.value;
  const next = Array.isArray(reply) ? replyText(reply[0]) : undefined;
  if (next === undefined || !/^[0-9]{1,20}$/.test(next)) throw bad('repeat-page', reply);
  const names = [...new Set((reply as Reply[]).slice(1).map((n) => replyText(n) ?? ''))].filter((n) => /^[A-Za-z0-9._-]{1,255}$/.test(n));
  // each record read with its declared keys (no key is built from data in a script), in one round trip
  const commands = names.map((n) => evalsha(repeatReadScript, repeatKeys(queue, n), [n, '0']));
  const outcomes = commands.length === 0 ? [] : await dispatch(connection, repeatReadScript, commands);
  const schedules = names
    .map((n, i) => viewOf(n, outcomes[i]!))
    .filter((v): v is ScheduleView => v !== null) // cancelled between the two reads
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); // names are ASCII: < is byte order
  return next === '0' ? { schedules } : { schedules, cursor: next };
}
