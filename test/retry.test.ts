// The one retry policy: the numbers each caller documents (docs/api.md) come out of it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TRANSIENT_RETRY } from '../shared/dispatch.js';
import { retryAfterMs, retryDelay, mayRetry, type RetryPolicy } from '../shared/retry.js';

afterEach(() => vi.restoreAllMocks());

const total = (policy: RetryPolicy, random: number) => {
  vi.spyOn(Math, 'random').mockReturnValue(random);
  let sum = 0;
  for (let a = 0; mayRetry(policy, a); a++) sum += retryDelay(policy, a);
  return sum;
};

describe('retry policy', () => {
  it("dispatch's transient rounds: 14 retries over 2.3 to 4.6 s", () => {
    expect(TRANSIENT_RETRY.retries).toBe(14);
    expect(total(TRANSIENT_RETRY, 0)).toBeCloseTo(2315, 0);
    expect(total(TRANSIENT_RETRY, 0.999999)).toBeCloseTo(4630, 0);
  });

  it('doubles from the base, jittered 0.5x to 1.5x by default, capped when asked', () => {
    const p = { retries: 3, baseMs: 100 };
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    expect([0, 1, 2].map((a) => retryDelay(p, a))).toEqual([100, 200, 400]);
    expect(retryDelay({ ...p, capMs: 150 }, 2)).toBe(150);
    expect(mayRetry(p, 2)).toBe(true);
    expect(mayRetry(p, 3)).toBe(false);
  });

  it('honours Retry-After in seconds, up to its cap; not a date, not a negative', () => {
    const p = { retries: 2, baseMs: 50, maxRetryAfterMs: 2_000 };
    expect(retryDelay(p, 0, '1')).toBe(1_000);
    expect(retryDelay(p, 0, '0')).toBe(0);
    expect(retryDelay(p, 0, '30')).toBe(2_000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
    expect(retryAfterMs('-1')).toBeUndefined();
    expect(retryAfterMs('')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
