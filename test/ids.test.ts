// Branded ids: every vector of ../shared/protocol/LIBRARY.md §a.4, the library's monotonic rules, node pools.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ID_ALPHABET,
  InvalidIdError,
  KindError,
  createMinter,
  decodeId,
  encodeId,
  mintId,
  parseNodePool,
  remint,
  snowflakeOf,
  validateId,
} from '../shared/index.js';

const bytewise = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const at = (iso: string) => () => Date.parse(iso);

describe('the library vectors (LIBRARY.md §a.4)', () => {
  it.each([
    ['USR0KHTOWnGLuC', 'USR', '274557032793636864', 1769526697641, 0, 0],
    ['USR0NgWEfAEJfs', 'USR', '320636799581945856', 1780512970164, 0, 0],
    ['CRS0KHTOWnGLuC', 'CRS', '274557032793636864', 1769526697641, 0, 0],
    ['USR00000000000', 'USR', '0', 1704067200000, 0, 0],
    ['EVT000xY9Wvvcd', 'EVT', '209715201620567', 1704117200000, undefined, undefined],
    ['ORD0NgWEfAEJfs', 'ORD', '320636799581945856', 1780512970164, 0, 0],
  ])('%s decodes to namespace %s, snowflake %s, unixMs %d', (id, ns, snowflake, unixMs, node, seq) => {
    const d = decodeId(id);
    expect(d.namespace).toBe(ns);
    expect(d.snowflake).toBe(snowflake);
    expect(d.unixMs).toBe(unixMs);
    if (node !== undefined) {
      expect(d.node).toBe(node);
      expect(d.seq).toBe(seq);
    }
    expect(encodeId(ns, BigInt(snowflake))).toBe(id);
  });

  it('EVT000xY9Wvvcd is the stream id 1704117200000-1620567 (low 22 bits)', () => {
    const s = snowflakeOf('EVT000xY9Wvvcd');
    expect(`${Number(s >> 22n) + 1704067200000}-${s & 0x3fffffn}`).toBe('1704117200000-1620567');
  });

  it('the ceiling: USRAzL8n0Y58m7 is 2^63 - 1, and nothing above it encodes', () => {
    expect(decodeId('USRAzL8n0Y58m7').snowflake).toBe('9223372036854775807');
    expect(encodeId('USR', 2n ** 63n - 1n)).toBe('USRAzL8n0Y58m7');
    expect(() => encodeId('USR', 2n ** 63n)).toThrow(RangeError);
    expect(() => encodeId('USR', -1n)).toThrow(RangeError);
  });

  it('base62 width and padding: 0, 61, 62', () => {
    expect(encodeId('USR', 0n).slice(3)).toBe('00000000000');
    expect(encodeId('USR', 61n).slice(3)).toBe('0000000000z');
    expect(encodeId('USR', 62n).slice(3)).toBe('00000000010');
    expect(encodeId('USR', 274557032793636864n).slice(3)).toBe('0KHTOWnGLuC');
  });

  it('the derived JOB mints: 2026-01-01T00:00:00Z, node 4, seq 0, 1, 4095, then the next ms', () => {
    const ts = BigInt(Date.parse('2026-01-01T00:00:00Z') - 1704067200000);
    const pack = (t: bigint, seq: number) => (t << 22n) | (4n << 12n) | BigInt(seq);
    expect(encodeId('JOB', pack(ts, 0))).toBe('JOB0JZGkP8sq48');
    expect(encodeId('JOB', pack(ts, 1))).toBe('JOB0JZGkP8sq49');
    expect(encodeId('JOB', pack(ts, 4095))).toBe('JOB0JZGkP8sr8B');
    expect(encodeId('JOB', pack(ts + 1n, 0))).toBe('JOB0JZGkP9ARCC');
  });

  it('a minter on node 4 at 2026-01-01: first mint seq 1 (the cell starts at seq 0), then on; 4096 later it borrows the next ms', () => {
    const mint = createMinter({ node: 4, now: at('2026-01-01T00:00:00Z') });
    expect(mint()).toBe('JOB0JZGkP8sq49');
    const ids = Array.from({ length: 4094 }, mint);
    expect(ids.at(-1)).toBe('JOB0JZGkP8sr8B'); // seq 4095
    expect(mint()).toBe('JOB0JZGkP9ARCC'); // seq exhausted: the next millisecond, seq 0
  });

  it.each([
    ['USRzzzzzzzzzzz', /more than 63 bits/],
    ['usr0KHTOWnGLuC', /namespace of 3 capital letters/],
    ['USR0KHTOWnGLu*', /outside base62/],
    ['USR0KHTOWnGL!C', /outside base62/],
    ['USR0KHTOWnGLu', /13 characters long/],
    ['USR0KHTOWnGLuCx', /15 characters long/],
    ['not-a-branded-id', /16 characters long/],
    ['12345678901234', /namespace/],
    ['order-12345-ab', /namespace/],
    ['JOB01m8ktkzg6eaatm9sqpt0r51n2', /29 characters long/],
    ['JOB0KHTOWnGLué', /outside base62/],
    ['', /0 characters long/],
  ])('refuses %j as malformed, saying what is wrong', (id, why) => {
    expect(() => decodeId(id)).toThrow(InvalidIdError);
    expect(() => decodeId(id)).toThrow(why);
    expect(() => validateId(id)).toThrow(InvalidIdError);
  });

  it('checks shape before kind: a well-formed id of another namespace is a kind refusal, a malformed one is invalid', () => {
    expect(() => validateId('ORD0NgWEfAEJfs')).toThrow(KindError);
    expect(() => validateId('ORD0NgWEfAEJfs')).toThrow(/namespace ORD; a job id must be JOB-namespaced/);
    expect(() => validateId('ORDzzzzzzzzzzz')).toThrow(InvalidIdError);
    expect(() => validateId('JOB')).toThrow(InvalidIdError);
    expect(() => validateId(42)).toThrow(/must be a string, got number/);
    validateId('JOB0JZGkP8sq48');
  });

  it('decode and encode are inverse over the whole range, and byte order is numeric order (property)', () => {
    const snowflake = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n });
    fc.assert(
      fc.property(snowflake, snowflake, (a, b) => {
        const ia = encodeId('JOB', a);
        const ib = encodeId('JOB', b);
        expect(ia).toHaveLength(14);
        expect(snowflakeOf(ia)).toBe(a);
        expect(Math.sign(bytewise(ia, ib))).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
      { numRuns: 2000 },
    );
  });

  it('the alphabet ascends in ASCII (the order theorem)', () => {
    expect([...ID_ALPHABET].sort().join('')).toBe(ID_ALPHABET);
    expect(ID_ALPHABET).toHaveLength(62);
  });
});

describe('minting', () => {
  it('100,000 ids minted in a tight loop are unique, JOB ids of 14 bytes, in byte order = mint order', () => {
    const ids = Array.from({ length: 100_000 }, () => mintId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) throw new Error(`out of order at ${i}: ${ids[i - 1]} !< ${ids[i]}`);
    }
    for (const id of ids.slice(0, 100)) validateId(id);
  });

  it('carries the mint time, the node and the sequence', () => {
    const before = Date.now();
    const id = createMinter({ node: 777 })();
    const d = decodeId(id);
    expect(d.node).toBe(777);
    expect(d.unixMs).toBeGreaterThanOrEqual(before);
    expect(d.unixMs).toBeLessThanOrEqual(Date.now());
  });

  it('stays in order and unique while the clock stands still (as inside a Workers request) and when it steps back', () => {
    let t = 1_770_000_000_500;
    const mint = createMinter({ node: 9, now: () => t });
    const ids: string[] = [];
    for (const step of [0, -400, 0, 10, -1000, 600, 0, -5000]) {
      t += step;
      for (let i = 0; i < 3000; i++) ids.push(mint());
    }
    expect([...ids].sort(bytewise)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // 24,000 mints on a clock that barely moved: it ran ahead of the clock, never blocked
    expect(decodeId(ids.at(-1)!).unixMs).toBeGreaterThan(1_770_000_000_500);
  });

  it('remint skips a random 0-63 ids: two lockstep minters fall out of step, and each stays unique and in order', () => {
    const frozen = () => 1_770_000_000_000;
    let apart = 0;
    for (let round = 0; round < 50; round++) {
      const [a, b] = [createMinter({ node: 3, now: frozen }), createMinter({ node: 3, now: frozen })];
      expect(a()).toBe(b()); // lockstep: the same ids
      const [ra, rb] = [remint(a), remint(b)];
      if (ra !== rb) apart++;
      const next = a();
      expect(next > ra).toBe(true);
    }
    expect(apart).toBeGreaterThan(40); // equal only when both drew the same skip (1 in 64)
  });

  it('refuses a node id outside 0-1023', () => {
    for (const node of [-1, 1024, 1.5, NaN]) expect(() => createMinter({ node })).toThrow(RangeError);
  });
});

describe('node pools', () => {
  it.each([
    ['512-1023', [512, 1023]],
    ['0-1023', [0, 1023]],
    ['7', [7, 7]],
    [' 3 - 4 ', [3, 4]],
  ])('%j is %j', (text, pool) => expect(parseNodePool(text)).toEqual(pool));

  it.each(['', '1024', '5-4', '-1', 'a-b', '0-1024', '1,2'])('refuses %j', (text) => {
    expect(() => parseNodePool(text)).toThrow(RangeError);
  });
});
