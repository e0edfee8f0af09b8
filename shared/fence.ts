// The `{emq}:version` fence (../shared/protocol/LIBRARY.md §b). EchoMQ's workers read the key on every connect
// and reconnect and stop on a value other than their own wire version; the library claims
// the key when it is absent. A producer that wrote jobs under another wire version would
// hand those workers jobs they cannot read, so a connection of this project reads the key
// and refuses to write until it is absent or equal to EMQ_WIRE_VERSION. It never writes the
// key: a value the library does not carry would lock every library worker out.
//
// When it reads: at connect, then every CHECK_EVERY_MS from a timer (also while the value
// differs, so the process recovers by itself once the key is fixed or deleted), and before
// the next write after a transport error (the connection may be a new one).
//
// Why a timer and not reconnect events: glide reconnects inside its core and tells Node
// nothing. Seen with @valkey/valkey-glide 2.5.2: after CLIENT KILL the next call succeeds on
// a new connection (a new CLIENT ID) with no error, even under load (one round in five of
// 32 callers saw no error at all); `addressResolver` is called on the first connect only;
// `getStatistics()` is process-wide (every client of the process together) and its
// `total_connections` is a gauge, not a counter (2 → 1 → 2 across a kill and reconnect, back
// at 2 within a few ms), and each call costs ~3.4 µs. So a reconnect cannot be seen without a
// round trip, and a round trip before every write is what must not be paid. The timer bounds
// the window instead: a reconnect that lands on a changed value is noticed within
// CHECK_EVERY_MS plus one round trip. If the checks stop succeeding (event loop stalled,
// Valkey slow or away), writes wait for a fresh check after STALE_MS: fail closed. In a
// cluster that couples every queue to the primary holding {emq}:version: while it is
// unreachable (a failover), writes to queues on healthy primaries wait and fail too, rather
// than go out unchecked.
//
// Cost on the hot path: admit() is one Date.now() and two comparisons per call, no promise
// (~50 ns measured here, against ~12 µs of Node CPU per glide enqueue at 64 in flight: under
// 0.5%, and ops/s with and without it within run-to-run noise); the timer's GET is 2 round
// trips a second per process whatever the load (6 GETs beside ~200,000 EVALSHAs in 3 s), 0 per
// enqueue.
import type { Outcome, Reply } from './connection.js';
import { WireMismatchError } from './errors.js';
import { wireVersion } from './config/parse.js';

export const WIRE_VERSION_KEY = '{emq}:version';
export const DEFAULT_WIRE_VERSION = 'echomq:3.0.0';
const SHAPE = /^echomq:(?:0|[1-9][0-9]{0,8})\.(?:0|[1-9][0-9]{0,8})\.(?:0|[1-9][0-9]{0,8})$/;

/** How often the key is read while connected. */
export const CHECK_EVERY_MS = 500;
/** A write waits for a fresh read when the last good one is older than this. */
export const STALE_MS = 1_500;

export function isWireVersion(text: string): boolean {
  return SHAPE.test(text);
}

/** EMQ_WIRE_VERSION, or the default; a bad value throws a message naming the variable, never its value. */
export function wireVersionFrom(env: Record<string, string | undefined>): string {
  return wireVersion(env, 'EMQ_WIRE_VERSION');
}

const MAX_SHOWN = 64;

/** A value read from Valkey as quoted printable ASCII: `"` and `\` escaped, other bytes as \xHH, at most 64 bytes shown. */
export function shownValue(value: Uint8Array | string): string {
  const bytes = typeof value === 'string' ? new TextEncoder().encode(value) : value;
  let out = '"';
  for (const b of bytes.subarray(0, MAX_SHOWN)) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b <= 0x7e) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  out += '"';
  return bytes.length > MAX_SHOWN ? `${out}... (${bytes.length} bytes)` : out;
}

/** Text from elsewhere (a gateway's answer) reduced to printable ASCII, at most `max` characters. */
export function printable(text: string, max = 300): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

/**
 * `found` for an answer anyone may read (/readyz): a value read is shown (versions are not
 * secrets), an error reply's words are not (NOPERM names the Valkey user).
 */
export function publicFound(found: string): string {
  return found.startsWith('(an error reply') ? '(an error reply)' : found;
}

function sameText(value: Reply, text: string): boolean {
  if (typeof value === 'string') return value === text;
  if (!(value instanceof Uint8Array) || value.length !== text.length) return false;
  for (let i = 0; i < text.length; i++) if (value[i] !== text.charCodeAt(i)) return false;
  return true;
}

/** What the read found that is not our version, for the error (undefined: absent or equal). */
function foundOf(outcome: Outcome, expected: string): string | undefined {
  if (!outcome.ok) return `(an error reply: ${shownValue(outcome.error)})`;
  const value = outcome.value;
  if (value === null || sameText(value, expected)) return undefined;
  if (typeof value === 'string' || value instanceof Uint8Array) return shownValue(value);
  return `(a ${Array.isArray(value) ? 'list' : typeof value} reply)`;
}

export interface FenceOptions {
  /** The wire version this process speaks (EMQ_WIRE_VERSION). */
  expected: string;
  /** GET {emq}:version on the node that owns its slot; rejects only on a transport failure. */
  read: () => Promise<Outcome>;
  everyMs?: number;
  staleMs?: number;
  now?: () => number;
  /** Told of each change of state (a gauge's input); must not throw. */
  onState?: ((state: FenceState) => void) | undefined;
}

/** unknown: not read lately (or the last read failed); ok: absent or equal; mismatch: another version. */
export type FenceState = 'unknown' | 'ok' | 'mismatch';

export class Fence {
  readonly expected: string;
  private readonly read: () => Promise<Outcome>;
  private readonly everyMs: number;
  private readonly staleMs: number;
  private readonly now: () => number;
  private stateNow: FenceState = 'unknown';
  private readonly onState: ((state: FenceState) => void) | undefined;
  /** When the last read that found the key absent or equal was sent. */
  private okAt = -Infinity;
  /** When the last read that found another value was sent. */
  private mismatchAt = -Infinity;
  private mismatch: WireMismatchError | undefined;
  private pending: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor({ expected, read, everyMs = CHECK_EVERY_MS, staleMs = STALE_MS, now = Date.now, onState }: FenceOptions) {
    if (!isWireVersion(expected)) throw new TypeError('the wire version must look like echomq:MAJOR.MINOR.PATCH');
    this.expected = expected;
    this.read = read;
    this.everyMs = everyMs;
    this.staleMs = staleMs;
    this.now = now;
    this.onState = onState;
  }

  /** The fence's state. */
  get state(): FenceState {
    return this.stateNow;
  }

  private set state(next: FenceState) {
    if (next === this.stateNow) return;
    this.stateNow = next;
    this.onState?.(next);
  }

  /**
   * Whether a write may go: undefined means now (the hot path: no promise, no round trip).
   * Otherwise a promise that resolves once a read found the key absent or equal, or rejects
   * with WireMismatchError (or the read's transport error).
   */
  admit(): Promise<void> | undefined {
    if (this.state === 'ok' && this.now() - this.okAt < this.staleMs) return undefined;
    // refused at once while the mismatch is fresh; after that (no periodic read), read again
    if (this.state === 'mismatch' && this.now() - this.mismatchAt < this.staleMs) return Promise.reject(this.mismatch!);
    return this.check();
  }

  /** Reads the key now (one read at a time: callers meanwhile share it). */
  check(): Promise<void> {
    this.pending ??= (async () => {
      const sentAt = this.now();
      try {
        const found = foundOf(await this.read(), this.expected);
        if (found === undefined) {
          this.state = 'ok';
          this.okAt = sentAt;
          this.mismatch = undefined;
        } else {
          this.state = 'mismatch';
          this.mismatchAt = sentAt;
          this.mismatch = new WireMismatchError(this.expected, found);
        }
      } catch (err) {
        if (this.state === 'ok') this.state = 'unknown';
        throw err;
      } finally {
        this.pending = undefined;
      }
    })();
    return this.pending.then(() => {
      if (this.state === 'mismatch') throw this.mismatch!;
    });
  }

  /** A transport failure: the connection may come back as a new one, so the next write waits for a read. */
  invalidate(): void {
    if (this.state === 'ok') this.state = 'unknown';
  }

  /** The mismatch the last read found, if it found one. */
  get current(): WireMismatchError | undefined {
    return this.state === 'mismatch' ? this.mismatch : undefined;
  }

  /** Starts the periodic read (it does not keep a process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check().catch(() => {}), this.everyMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
