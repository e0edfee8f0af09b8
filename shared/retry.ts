// The one retry policy: how many retries, and how long to wait before each. Every caller that
// retries (the REST connection, the typed client, script dispatch's transient rounds) waits
// by it, each with its own numbers.
//
// The wait before retry n (0 for the first): baseMs * 2^n, at most capMs, times a random
// factor in [jitter[0], jitter[1]); or, when the server said Retry-After (seconds, a whole
// or decimal number, 0 or more), that, at most maxRetryAfterMs.

export interface RetryPolicy {
  /** Retries after the first try. */
  retries: number;
  /** The first retry's delay before jitter, in ms; it doubles with each retry. */
  baseMs: number;
  /** The longest doubled delay, before jitter, in ms (default: no cap). */
  capMs?: number;
  /** The random factor the delay is multiplied by: from, to (default 0.5 to 1.5). */
  jitter?: readonly [number, number];
  /** The longest Retry-After honoured, in ms: a longer one waits this long (default: no cap). */
  maxRetryAfterMs?: number;
}

/** Retry-After in ms, or undefined when absent or not a number of seconds (an HTTP date is not honoured). */
export function retryAfterMs(header: string | null | undefined): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** The wait, in ms, before retry `attempt` (0 for the first), honouring the server's Retry-After header when given. */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfter?: string | null): number {
  const asked = retryAfterMs(retryAfter);
  if (asked !== undefined) return Math.min(asked, policy.maxRetryAfterMs ?? Infinity);
  const [from, to] = policy.jitter ?? [0.5, 1.5];
  return Math.min(policy.capMs ?? Infinity, policy.baseMs * 2 ** attempt) * (from + Math.random() * (to - from));
}

/** Whether a retry may follow try `attempt` (0 for the first try). */
export function mayRetry(policy: RetryPolicy, attempt: number): boolean {
  return attempt < policy.retries;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits out retryDelay(). */
export function backoff(policy: RetryPolicy, attempt: number, retryAfter?: string | null): Promise<void> {
  return sleep(retryDelay(policy, attempt, retryAfter));
}
