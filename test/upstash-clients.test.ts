// Upstash's own Lua clients, unchanged, through the real gateway process over real HTTP, on each
// real server: @upstash/ratelimit (every script starts `#!lua flags=allow-key-locking`, which
// the servers refuse: functions/gateway/script-flags.ts drops it) and @upstash/lock, each on an
// @upstash/redis client with its defaults, as their users set them up. Each test asserts what
// the user relies on: the (n+1)th call refused, the count going down, a reset letting calls
// through again, also after SCRIPT FLUSH; a lock held by one holder only.
import { Lock } from '@upstash/lock';
import { MultiRegionRatelimit, Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { freshQueue } from './support/admin.js';
import { gatewayOn } from './support/gateway.js';

type Limiter = ReturnType<typeof Ratelimit.slidingWindow>;

// @upstash/lock's and MultiRegionRatelimit's declarations name @upstash/redis's CommonJS types,
// this file its ES module ones: one class at run time, two unrelated types to tsc
type TheirRedis = ConstructorParameters<typeof Lock>[0]['redis'];

const LIMITERS: Array<[string, () => Limiter]> = [
  ['sliding window', () => Ratelimit.slidingWindow(3, '60 s')],
  ['fixed window', () => Ratelimit.fixedWindow(3, '60 s')],
  // refills 1 a minute: no refill lands within a test
  ['token bucket', () => Ratelimit.tokenBucket(1, '60 s', 3)],
];

describe.each(inject('servers'))('Upstash clients through the gateway: $name', ({ url }) => {
  const h = gatewayOn(url);
  let redis: Redis;
  let theirs: TheirRedis;
  beforeAll(() => {
    redis = new Redis({ url: h.gw.url, token: h.gw.admin });
    theirs = redis as unknown as TheirRedis;
  });

  /** A limiter with no local cache, so every answer is the server's; a timeout would pass the call, so none. */
  const limiter = (make: () => Limiter) =>
    new Ratelimit({ redis, limiter: make(), prefix: `rl:${freshQueue('p')}`, ephemeralCache: false, timeout: 0, analytics: false });

  /** n calls to limit(), their successes and remainings. */
  const limits = async (rl: Ratelimit, id: string, n: number) => {
    const out: Array<[boolean, number]> = [];
    for (let i = 0; i < n; i++) {
      const r = await rl.limit(id);
      expect(r.reason).toBeUndefined();
      expect(r.limit).toBe(3);
      out.push([r.success, r.remaining]);
    }
    return out;
  };

  describe.each(LIMITERS)('@upstash/ratelimit %s', (_, make) => {
    it('limit: 3 pass counting down, the 4th is refused; getRemaining agrees', async () => {
      const rl = limiter(make);
      expect(await rl.getRemaining('user')).toMatchObject({ remaining: 3, limit: 3 });
      expect(await limits(rl, 'user', 4)).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect(await rl.getRemaining('user')).toMatchObject({ remaining: 0, limit: 3 });
      // another identifier has its own count
      expect(await limits(rl, 'other', 1)).toEqual([[true, 2]]);
    });

    it('resetUsedTokens lets calls through again', async () => {
      const rl = limiter(make);
      await limits(rl, 'user', 4);
      await rl.resetUsedTokens('user');
      expect(await rl.getRemaining('user')).toMatchObject({ remaining: 3 });
      expect(await limits(rl, 'user', 1)).toEqual([[true, 2]]);
    });

    it('after SCRIPT FLUSH (through the gateway, and on the server behind it): limit, getRemaining and resetUsedTokens still answer right', async () => {
      const rl = limiter(make);
      expect(await limits(rl, 'user', 2)).toEqual([
        [true, 2],
        [true, 1],
      ]);
      expect(await redis.scriptFlush()).toBe('OK');
      expect(await limits(rl, 'user', 2)).toEqual([
        [true, 0],
        [false, 0],
      ]);
      await h.admin.call('SCRIPT', 'FLUSH');
      expect(await rl.getRemaining('user')).toMatchObject({ remaining: 0 });
      await h.admin.call('SCRIPT', 'FLUSH');
      await rl.resetUsedTokens('user');
      await redis.scriptFlush();
      expect(await limits(rl, 'user', 1)).toEqual([[true, 2]]);
    });
  });

  it('@upstash/ratelimit cached fixed window and dynamic limits', async () => {
    const cached = new Ratelimit({ redis, limiter: Ratelimit.cachedFixedWindow(2, '60 s'), prefix: `rl:${freshQueue('c')}`, timeout: 0 });
    expect((await cached.limit('u')).success).toBe(true);
    expect((await cached.limit('u')).success).toBe(true);
    expect((await cached.limit('u')).success).toBe(false);
    const dynamic = new Ratelimit({
      redis,
      limiter: Ratelimit.slidingWindow(5, '60 s'),
      prefix: `rl:${freshQueue('d')}`,
      dynamicLimits: true,
      ephemeralCache: false,
      timeout: 0,
    });
    await dynamic.setDynamicLimit({ limit: 1 });
    expect((await dynamic.limit('u')).success).toBe(true);
    expect((await dynamic.limit('u')).success).toBe(false);
  });

  it('@upstash/ratelimit multi-region (one region): fixed and sliding window refuse the 3rd of 2', async () => {
    for (const make of [() => MultiRegionRatelimit.fixedWindow(2, '60 s'), () => MultiRegionRatelimit.slidingWindow(2, '60 s')]) {
      const rl = new MultiRegionRatelimit({ redis: [theirs], limiter: make(), prefix: `rl:${freshQueue('m')}`, ephemeralCache: false, timeout: 0 });
      const got = [];
      for (let i = 0; i < 3; i++) got.push((await rl.limit('u')).success);
      expect(got).toEqual([true, true, false]);
      expect(await rl.getRemaining('u')).toMatchObject({ remaining: 0 });
      // its resetUsedTokens does not wait for the reset it sends (2.2.0 drops the promise): wait for it here
      await rl.resetUsedTokens('u');
      await expect.poll(async () => (await rl.getRemaining('u')).remaining, { timeout: 5_000 }).toBe(2);
      expect((await rl.limit('u')).success).toBe(true);
    }
  });

  it('@upstash/lock: acquire, contention (a second holder fails), extend, release, then the other acquires', async () => {
    const id = `lock:${freshQueue('l')}`;
    const first = new Lock({ id, redis: theirs, lease: 5_000 });
    const second = new Lock({ id, redis: theirs, lease: 5_000, retry: { attempts: 2, delay: 20 } });
    expect(await first.acquire()).toBe(true);
    expect(await first.getStatus()).toBe('ACQUIRED');
    expect(await second.acquire()).toBe(false);
    expect(await second.getStatus()).toBe('FREE');
    const before = Number(await h.admin.call('PTTL', id));
    expect(await first.extend(10_000)).toBe(true);
    expect(Number(await h.admin.call('PTTL', id))).toBeGreaterThan(before + 5_000);
    // only the holder can extend or release
    expect(await second.extend(10_000)).toBe(false);
    expect(await second.release()).toBe(false);
    expect(await first.release()).toBe(true);
    expect(await h.admin.call('EXISTS', id)).toBe(0);
    expect(await first.release()).toBe(false);
    expect(await second.acquire()).toBe(true);
    expect(await second.release()).toBe(true);
  });
});
