import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ID_ALPHABET, createMinter, decodeId, mintId, validateId } from '../shared/index.js';

const bytewise = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('mintId', () => {
  it('100,000 ids minted in a tight loop are unique and sort bytewise in mint order', () => {
    const ids: string[] = [];
    for (let i = 0; i < 100_000; i++) ids.push(mintId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) throw new Error(`out of order at ${i}: ${ids[i - 1]} !< ${ids[i]}`);
    }
    expect([...ids].sort(bytewise)).toEqual(ids);
  });

  it('is JOB + 26 Crockford characters encoding a UUIDv7 with the RFC 9562 variant', () => {
    const before = Date.now();
    const id = mintId();
    const after = Date.now();
    expect(id).toMatch(/^JOB[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    const { uuid, time, version } = decodeId(id);
    expect(version).toBe(7);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });

  it('stays in mint order while the clock stands still (as inside a Workers request)', () => {
    const mint = createMinter({ now: () => 1_700_000_000_000 });
    const ids = Array.from({ length: 10_000 }, mint);
    expect([...ids].sort(bytewise)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(decodeId(ids.at(-1)!).time).toBe(1_700_000_000_000);
  });

  it('stays in mint order when the clock steps back', () => {
    let t = 1_700_000_000_500;
    const mint = createMinter({ now: () => t });
    const ids: string[] = [];
    for (const step of [0, -400, 0, 10, -1000, 600, 0]) {
      t += step;
      ids.push(mint(), mint());
    }
    expect([...ids].sort(bytewise)).toEqual(ids);
  });

  it('carries into the next millisecond when the counter runs out', () => {
    // all-ones randomness: the counter starts at its top and overflows at once
    const mint = createMinter({ now: () => 1_000, random: (b) => b.fill(0xff) });
    const first = mint();
    let prev = first;
    for (let i = 0; i < 5; i++) {
      const next = mint();
      expect(next > prev).toBe(true);
      prev = next;
    }
    expect(decodeId(first).time).toBe(1_000);
  });

  it('order of ids is order of mint time across any clock readings (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 48 - 1 }), { minLength: 1, maxLength: 50 }), (times) => {
        let i = 0;
        const mint = createMinter({ now: () => times[i]! });
        const ids = times.map((_, k) => ((i = k), mint()));
        ids.forEach(validateId);
        expect([...ids].sort(bytewise)).toEqual(ids);
        // the time an id carries is the highest clock reading so far
        let high = -1;
        ids.forEach((id, k) => {
          high = Math.max(high, times[k]!);
          expect(decodeId(id).time).toBeGreaterThanOrEqual(high);
        });
      }),
    );
  });

  it('decodes what it encodes (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.uint8Array({ minLength: 10, maxLength: 10 }), (t, seed) => {
        const mint = createMinter({ now: () => t, random: (b) => b.set(seed) });
        const id = mint();
        const d = decodeId(id);
        expect(d.time).toBe(t);
        expect(d.version).toBe(7);
        expect(d.uuid.slice(0, 13).replace('-', '')).toBe(t.toString(16).padStart(12, '0'));
      }),
    );
  });

  it('the alphabet ascends in ASCII, so text order is numeric order', () => {
    expect([...ID_ALPHABET].sort().join('')).toBe(ID_ALPHABET);
    expect(ID_ALPHABET).toHaveLength(32);
  });
});
