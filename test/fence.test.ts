// The `{emq}:version` fence's logic (shared/fence.ts) with a scripted read and a fake clock:
// when it reads, what it admits, how it shows a value it did not expect. The real servers,
// gateway, producer and CLI are in fence-valkey.test.ts and fence-cluster.test.ts.
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../shared/connection.js';
import { ConnectionError, WireMismatchError } from '../shared/errors.js';
import { DEFAULT_WIRE_VERSION, Fence, shownValue, wireVersionFrom } from '../shared/fence.js';

const OURS = 'echomq:3.0.0';
const bytes = (text: string) => new TextEncoder().encode(text);

/** A fence whose reads answer from `answers` (a function of the read's number) and count themselves. */
function scripted(answer: (n: number) => Outcome | Error) {
  let clock = 1_000_000;
  let reads = 0;
  const fence = new Fence({
    expected: OURS,
    read: async () => {
      const a = answer(++reads);
      if (a instanceof Error) throw a;
      return a;
    },
    everyMs: 500,
    staleMs: 1_500,
    now: () => clock,
  });
  return {
    fence,
    reads: () => reads,
    advance: (ms: number) => (clock += ms),
  };
}

const absent: Outcome = { ok: true, value: null };
const equal: Outcome = { ok: true, value: bytes(OURS) };
const other: Outcome = { ok: true, value: bytes('echomq:2.0.0') };

describe('EMQ_WIRE_VERSION', () => {
  it('defaults to echomq:3.0.0 (unset or empty) and takes echomq:MAJOR.MINOR.PATCH', () => {
    expect(DEFAULT_WIRE_VERSION).toBe('echomq:3.0.0');
    expect(wireVersionFrom({})).toBe('echomq:3.0.0');
    expect(wireVersionFrom({ EMQ_WIRE_VERSION: '' })).toBe('echomq:3.0.0');
    expect(wireVersionFrom({ EMQ_WIRE_VERSION: 'echomq:2.0.0' })).toBe('echomq:2.0.0');
    expect(wireVersionFrom({ EMQ_WIRE_VERSION: 'echomq:10.20.300' })).toBe('echomq:10.20.300');
  });

  it.each([
    'echomq:3.0',
    'echomq:3.0.0-rc.1',
    ' echomq:3.0.0',
    'echomq:3.0.0\n',
    'ECHOMQ:3.0.0',
    'emq:3.0.0',
    'echomq:03.0.0',
    'echomq:3.0.x',
    'echomq:1234567890.0.0',
    'hunter2-secret',
  ])('refuses %j with a message naming the variable, never the value', (value) => {
    let message = '';
    try {
      wireVersionFrom({ EMQ_WIRE_VERSION: value });
    } catch (err) {
      message = (err as Error).message;
    }
    // the same words whatever the value: it is never echoed
    expect(message).toBe('EMQ_WIRE_VERSION is not a wire version: it must look like echomq:MAJOR.MINOR.PATCH (the default is echomq:3.0.0)');
  });
});

describe('shownValue: a value from Valkey as printable ASCII', () => {
  it('quotes, escapes " and \\, writes other bytes as \\xHH, and truncates past 64 bytes', () => {
    expect(shownValue(bytes('echomq:2.0.0'))).toBe('"echomq:2.0.0"');
    expect(shownValue(new Uint8Array([0x22, 0x5c, 0x0a, 0x00, 0xff, 0x41]))).toBe('"\\"\\\\\\x0a\\x00\\xffA"');
    expect(shownValue(bytes('é'))).toBe('"\\xc3\\xa9"');
    const long = shownValue(bytes('x'.repeat(100)));
    expect(long).toBe(`"${'x'.repeat(64)}"... (100 bytes)`);
    const hostile = shownValue(Uint8Array.from({ length: 4096 }, (_, i) => i % 256));
    expect(hostile).toMatch(/^[\x20-\x7e]+$/);
    expect(hostile.length).toBeLessThan(300);
  });
});

describe('Fence', () => {
  it('reads before the first write; then admits at once (no promise, no read) while the last good read is fresh', async () => {
    const f = scripted(() => absent);
    const first = f.fence.admit();
    expect(first).toBeInstanceOf(Promise);
    await first;
    expect(f.reads()).toBe(1);
    for (let i = 0; i < 1_000; i++) expect(f.fence.admit()).toBeUndefined();
    f.advance(1_499);
    expect(f.fence.admit()).toBeUndefined();
    expect(f.reads()).toBe(1);
  });

  it('equal admits like absent', async () => {
    const f = scripted(() => equal);
    await f.fence.check();
    expect(f.fence.admit()).toBeUndefined();
    expect(f.fence.current).toBeUndefined();
  });

  it('a read older than staleMs (the periodic reads stopped succeeding): the next write waits for a read', async () => {
    const f = scripted(() => absent);
    await f.fence.check();
    f.advance(1_500);
    const held = f.fence.admit();
    expect(held).toBeInstanceOf(Promise);
    await held;
    expect(f.reads()).toBe(2);
    expect(f.fence.admit()).toBeUndefined();
  });

  it('another value: every write is refused with WireMismatchError naming both, with no read each; a later read that finds it fixed admits again', async () => {
    let value: Outcome = other;
    const f = scripted(() => value);
    await expect(f.fence.check()).rejects.toThrow(WireMismatchError);
    for (let i = 0; i < 100; i++) {
      const refusal = f.fence.admit();
      await expect(refusal).rejects.toMatchObject({ code: 'wire_mismatch', expected: OURS, found: '"echomq:2.0.0"' });
    }
    expect(f.reads()).toBe(1);
    const err = f.fence.current!;
    expect(err.message).toContain('echomq:3.0.0');
    expect(err.message).toContain('"echomq:2.0.0"');
    value = absent; // an operator deleted it (the periodic read finds out)
    await f.fence.check();
    expect(f.fence.admit()).toBeUndefined();
    value = other;
    await f.fence.check().catch(() => {});
    value = equal; // ... or set it to ours
    await f.fence.check();
    expect(f.fence.admit()).toBeUndefined();
  });

  it('a mismatch older than staleMs (no periodic read) is read again by the next write', async () => {
    let value: Outcome = other;
    const f = scripted(() => value);
    await f.fence.check().catch(() => {});
    f.advance(1_000);
    await expect(f.fence.admit()).rejects.toThrow(WireMismatchError);
    expect(f.reads()).toBe(1);
    f.advance(500);
    value = equal;
    await f.fence.admit();
    expect(f.reads()).toBe(2);
    expect(f.fence.admit()).toBeUndefined();
  });

  it('an error reply (the key is not a string) is a mismatch too', async () => {
    const f = scripted(() => ({ ok: false, error: 'WRONGTYPE Operation against a key holding the wrong kind' }));
    await expect(f.fence.check()).rejects.toMatchObject({ found: '(an error reply: "WRONGTYPE Operation against a key holding the wrong kind")' });
  });

  it('a transport failure: the next write waits for a read (the connection may be a new one)', async () => {
    const f = scripted(() => absent);
    await f.fence.check();
    f.fence.invalidate();
    const held = f.fence.admit();
    expect(held).toBeInstanceOf(Promise);
    await held;
    expect(f.reads()).toBe(2);
  });

  it('a read that fails rejects the waiting writes with its error and leaves the fence unknown', async () => {
    const f = scripted((n) => (n === 2 ? new ConnectionError('valkey: timed out') : absent));
    await f.fence.check();
    f.fence.invalidate();
    await expect(f.fence.admit()).rejects.toThrow(ConnectionError);
    await f.fence.admit(); // the third read succeeds
    expect(f.reads()).toBe(3);
    expect(f.fence.admit()).toBeUndefined();
  });

  it('writes waiting together share one read', async () => {
    const f = scripted(() => absent);
    await Promise.all(Array.from({ length: 50 }, () => f.fence.admit()));
    expect(f.reads()).toBe(1);
  });

  it('refuses a wire version of the wrong shape', () => {
    expect(() => new Fence({ expected: 'echomq:3', read: async () => absent })).toThrow(TypeError);
  });
});
