// The library's repeatables (EchoMQ.Repeat, LIBRARY.md c.6) from a producer: register and
// cancel with the library's own scripts, byte for byte (lua/library/: their SHA-1 is the
// library's), and pause, resume or run now by moving the registration's score, the one thing
// the library's Pump reads (lua/repeat-move.lua). The library's scripts check nothing, so
// everything is checked here before they are sent (lua/library/*.md: what they would take).
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { InvalidArgumentError, InvalidPayloadError, ProtocolError, ServerError, fromReply } from './errors.js';
import { checkPayload, type Payload } from './enqueue.js';
import { repeatKeys } from './keyspace.js';
import { SCHEDULE_AT_MAX_MS, SCHEDULE_DELAY_MAX_MS } from './schedule.js';
import { recordOf, viewOf, type ScheduleView } from './schedule-view.js';
import { repeatCancelScript, repeatMoveScript, repeatReadScript, repeatRegisterScript } from './scripts.js';

export type RegisterVerdict = 'registered' | 'exists' | 'conflict';

export interface RegisterOptions {
  /** The period, ms: a whole number from 1 to maxDelayMs. */
  everyMs: number;
  /** The payload every occurrence is enqueued with (flat pending), stored byte for byte. */
  template: Payload;
  /** The first occurrence is due this long from now, ms: 0 (the default) to maxDelayMs. */
  firstInMs?: number;
  /** The longest period and first delay taken (admission's EMQ_MAX_DELAY); default ten years, the most a delay may be. */
  maxDelayMs?: number;
  /** The largest template taken, bytes (admission's EMQ_MAX_PAYLOAD_BYTES); default: no bound here. */
  maxPayloadBytes?: number;
  /** The caller's clock, Unix ms (the library prices first_at on its host's clock, as does its Pump); default Date.now(). */
  now?: number;
}

const utf8 = new TextEncoder();

function whole(what: string, value: unknown, lo: number, hi: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < lo || value > hi) {
    throw new InvalidArgumentError(`${what} must be a whole number of ms from ${lo} to ${hi}, got ${String(value).slice(0, 40)}`);
  }
  return value;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A 1/0 reply of the library's scripts as a number, else a ProtocolError. */
function flagOf(value: unknown, script: string): 0 | 1 {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (n === 0 || n === 1) return n;
  throw new ProtocolError(`@${script} replied ${String(value).slice(0, 200)}; expected 1 or 0`);
}

/**
 * Registers a repeatable with the library's @repeat_register, its text verbatim: the record
 * (every_ms, template) and the registry member scored `now + firstInMs`. Answers `registered`;
 * `exists` when the name holds the same period and template (byte for byte); `conflict` when
 * it holds others (nothing written: cancel first). Every argument is checked before anything
 * is sent (InvalidArgumentError, InvalidPayloadError, InvalidQueueError), and both keys' types
 * by @repeat-read (WrongTypeError), since the library's script checks nothing.
 *
 * Not atomic: the record is read (@repeat-read), then registered when absent. The library's
 * script answers "exists" without comparing, so a register that lost a race to another is
 * read again and compared; a record cancelled between those reads is registered again (at most
 * three rounds). A key made another type between the type check and the register meets the
 * library's script unguarded (lua/library/repeat-register.md).
 */
export async function registerSchedule(connection: Connection, queue: string, name: string, options: RegisterOptions): Promise<RegisterVerdict> {
  const keys = repeatKeys(queue, name);
  const { maxDelayMs = SCHEDULE_DELAY_MAX_MS, maxPayloadBytes, now = Date.now() } = options;
  whole('maxDelayMs', maxDelayMs, 1, SCHEDULE_DELAY_MAX_MS);
  const every = whole('everyMs', options.everyMs, 1, maxDelayMs);
  const firstAt = whole('now', now, 0, SCHEDULE_AT_MAX_MS) + whole('firstInMs', options.firstInMs ?? 0, 0, maxDelayMs);
  const { template } = options;
  checkPayload(template);
  const bytes = typeof template === 'string' ? utf8.encode(template) : template;
  if (maxPayloadBytes !== undefined && bytes.length > maxPayloadBytes) {
    throw new InvalidPayloadError(`the template is ${bytes.length} bytes; the limit is ${maxPayloadBytes}`);
  }
  for (let round = 0; round < 3; round++) {
    const held = await recordOf(connection, keys, name);
    if (held) return held[0] === String(every) && sameBytes(held[1], bytes) ? 'exists' : 'conflict';
    const outcome = await runScript(connection, repeatRegisterScript, keys, [name, String(every), bytes, String(firstAt)]);
    if (!outcome.ok) throw fromReply(outcome.error);
    if (flagOf(outcome.value, 'repeat_register') === 1) return 'registered';
  }
  throw new ServerError(`schedule ${name} was registered and cancelled by others three times while this register ran; send it again`);
}

/**
 * Cancels a repeatable with the library's @repeat_cancel, its text verbatim: the registry
 * member and the record go. `cancelled` when a member was removed, `absent` when there was
 * none (a record without one is deleted all the same, as the library does). Both keys' types
 * are checked first (WrongTypeError, nothing written; not atomic with the cancel).
 */
export async function cancelSchedule(connection: Connection, queue: string, name: string): Promise<'cancelled' | 'absent'> {
  const keys = repeatKeys(queue, name);
  const checked = await runScript(connection, repeatReadScript, keys, [name, '0']);
  if (!checked.ok) throw fromReply(checked.error);
  const outcome = await runScript(connection, repeatCancelScript, keys, [name]);
  if (!outcome.ok) throw fromReply(outcome.error);
  return flagOf(outcome.value, 'repeat_cancel') === 1 ? 'cancelled' : 'absent';
}

async function move(connection: Connection, queue: string, name: string, verb: 'pause' | 'resume' | 'run-now', now: number): Promise<ScheduleView | null> {
  const keys = repeatKeys(queue, name);
  whole('now', now, 0, SCHEDULE_AT_MAX_MS);
  return viewOf(name, await runScript(connection, repeatMoveScript, keys, [name, verb, String(now)]), 'repeat-move');
}

/**
 * Pauses a repeatable: its score becomes PAUSED_SCORE + its next run, so the Pump never finds
 * it due. Answers its view (paused), or null when there is none. A pause that lands while a
 * Pump fires it (between its due read and its advance) is undone by the advance: read it back.
 */
export function pauseSchedule(connection: Connection, queue: string, name: string, now = Date.now()): Promise<ScheduleView | null> {
  return move(connection, queue, name, 'pause', now);
}

/**
 * Resumes a paused repeatable at its next period: the next run it had when still ahead, else
 * the first run of its period's grid at or after now (no occurrence missed while paused is
 * made up). One not paused is left as it is.
 */
export function resumeSchedule(connection: Connection, queue: string, name: string, now = Date.now()): Promise<ScheduleView | null> {
  return move(connection, queue, name, 'resume', now);
}

/** Scores a repeatable now, so the next sweep fires it; a paused one is resumed by it (the Pump's advance scores it now + every). */
export function runScheduleNow(connection: Connection, queue: string, name: string, now = Date.now()): Promise<ScheduleView | null> {
  return move(connection, queue, name, 'run-now', now);
}
