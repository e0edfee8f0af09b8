// EMQ_CRONS read and checked (functions/producer/crons.ts) and its expressions in Cloudflare's
// Cron Trigger dialect (cron-syntax.ts over croner): the fire times of the examples Cloudflare's
// docs give, a table of hostile expressions, names, durations and payloads each refused naming
// EMQ_CRONS and the entry by position (never a payload), and a small fuzz: whatever an entry
// holds, the parser answers a table or an Error naming EMQ_CRONS, never anything else.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configFrom } from '../functions/producer/config.js';
import { cronPattern, minuteOf } from '../functions/producer/cron-syntax.js';
import { parseCrons, triggersOf } from '../functions/producer/crons.js';

const NOW = Date.parse('2026-05-03T10:07:30Z'); // a Sunday
const SECRET = 'hunter2-in-a-payload';
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
/** The next `n` fires after NOW. */
const fires = (text: string, n = 3) => {
  const p = cronPattern(text, NOW);
  const out: string[] = [];
  for (let at = NOW; out.length < n; ) {
    at = p.next(at)!;
    out.push(iso(at)!);
  }
  return out;
};

describe("expressions: Cloudflare's Cron Trigger dialect", () => {
  it.each([
    ['* * * * *', ['2026-05-03T10:08:00.000Z', '2026-05-03T10:09:00.000Z']],
    ['*/30 * * * *', ['2026-05-03T10:30:00.000Z', '2026-05-03T11:00:00.000Z']],
    ['45 * * * *', ['2026-05-03T10:45:00.000Z', '2026-05-03T11:45:00.000Z']],
    // weekdays as Cloudflare numbers them: 1 is Sunday (Quartz), 7 Saturday
    ['0 17 * * sun', ['2026-05-03T17:00:00.000Z', '2026-05-10T17:00:00.000Z']],
    ['0 17 * * 1', ['2026-05-03T17:00:00.000Z', '2026-05-10T17:00:00.000Z']],
    ['10 7 * * mon-fri', ['2026-05-04T07:10:00.000Z', '2026-05-05T07:10:00.000Z']],
    ['10 7 * * 2-6', ['2026-05-04T07:10:00.000Z', '2026-05-05T07:10:00.000Z']],
    ['0 0 * * 7', ['2026-05-09T00:00:00.000Z', '2026-05-16T00:00:00.000Z']],
    ['0 15 1 * *', ['2026-06-01T15:00:00.000Z', '2026-07-01T15:00:00.000Z']],
    // the last Friday of the month, the last weekday of the month, the second Monday, the nearest weekday to the 15th
    ['0 18 * * 6L', ['2026-05-29T18:00:00.000Z', '2026-06-26T18:00:00.000Z']],
    ['0 18 * * friL', ['2026-05-29T18:00:00.000Z', '2026-06-26T18:00:00.000Z']],
    ['59 23 LW * *', ['2026-05-29T23:59:00.000Z', '2026-06-30T23:59:00.000Z']],
    ['0 0 L * *', ['2026-05-31T00:00:00.000Z', '2026-06-30T00:00:00.000Z']],
    ['0 0 * * MON#2', ['2026-05-11T00:00:00.000Z', '2026-06-08T00:00:00.000Z']],
    ['0 0 15W * *', ['2026-05-15T00:00:00.000Z', '2026-06-15T00:00:00.000Z']],
    ['0 0 1 JAN,aug *', ['2026-08-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']],
    ['0 0 29 2 *', ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']],
    ['0-10/5 9-17 * * *', ['2026-05-03T10:10:00.000Z', '2026-05-03T11:00:00.000Z']],
  ])('%s fires (UTC) at %j', (text, want) => {
    expect(fires(text, want.length)).toEqual(want);
  });

  it('knows whether it fires in a minute, whatever the second', () => {
    const p = cronPattern('*/5 * * * *', NOW);
    expect([Date.parse('2026-05-03T10:05:00Z'), Date.parse('2026-05-03T10:05:59.999Z'), Date.parse('2026-05-03T10:06:00Z')].map(p.firesIn)).toEqual([
      true,
      true,
      false,
    ]);
    expect(minuteOf(Date.parse('2026-05-03T10:05:42.123Z'))).toBe(Date.parse('2026-05-03T10:05:00Z'));
  });

  it.each([
    ['six fields (seconds)', '0 * * * * *'],
    ['four fields', '* * * *'],
    ['two spaces', '0  0 * * *'],
    ['a leading space', ' 0 0 * * *'],
    ['a tab', '0\t0 * * * *'],
    ['a line break', '0 0 * * *\n'],
    ['a nickname', '@hourly'],
    ['?', '0 0 ? * *'],
    ['minute 60', '60 * * * *'],
    ['hour 24', '0 24 * * *'],
    ['day 32', '0 0 32 * *'],
    ['month 13', '0 0 * 13 *'],
    ['month 0', '0 0 * 0 *'],
    ['weekday 0 (Cloudflare counts 1-7)', '0 0 * * 0'],
    ['weekday 8', '0 0 * * 8'],
    ['a step of 0', '*/0 * * * *'],
    ['a bare n/step', '5/15 * * * *'],
    ['a backwards range', '59-1 * * * *'],
    ['#6', '0 0 * * 1#6'],
    ['L alone as a weekday', '0 0 * * L'],
    ['<n>L as a day of month', '0 0 1L * *'],
    ['W alone', '0 0 W * *'],
    ['a letter', 'a * * * *'],
    ['a negative number', '-1 * * * *'],
    ['a huge number', '99999999999999999999 * * * *'],
    ['an empty list item', '1,,2 * * * *'],
    ['non-ASCII', '０ * * * *'],
    ['both day fields restricted', '0 0 1 * MON'],
    ['never fires', '0 0 30 2 *'],
    ['too long', `${'1,'.repeat(70)}1 * * * *`],
    ['not a string', 5],
  ])('refuses %s', (_, text) => {
    expect(() => cronPattern(text, NOW)).toThrow(RangeError);
  });
});

const entry = (more: Record<string, unknown> = {}) => ({ name: 'nightly', cron: '0 3 * * *', queue: 'reports', payload: 'go', ...more });
const read = (list: unknown, vars: Record<string, string> = {}) => parseCrons({ EMQ_CRONS: JSON.stringify(list), ...vars }, 64, 3_600_000, NOW);

describe('EMQ_CRONS', () => {
  it('reads each schedule: the payload as bytes (text or base64), its lane and delay; unset is none', () => {
    const [a, b] = read([entry(), entry({ name: 'b.2_x-Y', payload: undefined, payloadBase64: '/wA=', group: 'PRT0KHTOWnGLuC', delay: '90s' })]);
    expect(a).toMatchObject({ name: 'nightly', queue: 'reports', payload: new TextEncoder().encode('go') });
    expect(a!.cron.text).toBe('0 3 * * *');
    expect(b).toMatchObject({ name: 'b.2_x-Y', group: 'PRT0KHTOWnGLuC', delay: { text: '90s', ms: 90_000 }, payload: Uint8Array.from([255, 0]) });
    expect(parseCrons({}, 64, 1)).toEqual([]);
    expect(parseCrons({ EMQ_CRONS: '' }, 64, 1)).toEqual([]);
    expect(read([])).toEqual([]);
    expect(triggersOf(read([entry(), entry({ name: 'x' }), entry({ name: 'y', cron: '* * * * *' })]))).toEqual(['0 3 * * *', '* * * * *']);
  });

  it('is part of the configuration: configFrom reads it, with EMQ_MAX_PAYLOAD_BYTES and EMQ_MAX_DELAY', () => {
    const vars = { EMQ_TOKENS: JSON.stringify([{ token: 'crons-test-token-0123456789', queues: ['*'], rawPrefixes: true }]) };
    expect(configFrom({ ...vars, EMQ_CRONS: JSON.stringify([entry()]) }).crons).toHaveLength(1);
    expect(() => configFrom({ ...vars, EMQ_CRONS: JSON.stringify([entry({ payload: 'x'.repeat(9) })]), EMQ_MAX_PAYLOAD_BYTES: '8' })).toThrow(
      /^EMQ_CRONS\[0\]: the payload is 9 bytes; EMQ_MAX_PAYLOAD_BYTES is 8$/,
    );
    expect(() => configFrom({ ...vars, EMQ_CRONS: JSON.stringify([entry({ delay: '2h' })]), EMQ_MAX_DELAY: '1h' })).toThrow(
      /^EMQ_CRONS\[0\]\.delay: the delay is beyond EMQ_MAX_DELAY$/,
    );
  });

  const refusals: Array<[string, unknown, RegExp]> = [
    ['not JSON', `[{${SECRET}`, /^EMQ_CRONS is not valid JSON/],
    ['not an array', { a: 1 }, /^EMQ_CRONS must be a JSON array/],
    ['an entry not an object', [entry(), 'x'], /^EMQ_CRONS\[1\] must be an object$/],
    ['an unknown field', [entry({ secret: SECRET })], /^EMQ_CRONS\[0\] has an unknown field/],
    ['no name', [entry({ name: undefined })], /^EMQ_CRONS\[0\]\.name: a schedule's name is 1 to 255/],
    ['an empty name', [entry({ name: '' })], /^EMQ_CRONS\[0\]\.name: /],
    ['a name with a colon', [entry({ name: 'a:b' })], /^EMQ_CRONS\[0\]\.name: /],
    ['a name with braces', [entry({ name: '{q}' })], /^EMQ_CRONS\[0\]\.name: /],
    ['a name of 256', [entry({ name: 'n'.repeat(256) })], /^EMQ_CRONS\[0\]\.name: /],
    ['a name not a string', [entry({ name: 7 })], /^EMQ_CRONS\[0\]\.name: /],
    ['a repeated name', [entry(), entry({ cron: '* * * * *' })], /^EMQ_CRONS\[1\]\.name: another entry has the same name$/],
    ['a bad cron', [entry({ cron: '0 0 * * 0' })], /^EMQ_CRONS\[0\]\.cron: the expression /],
    ['no cron', [entry({ cron: undefined })], /^EMQ_CRONS\[0\]\.cron: the expression must be a string/],
    ['a reserved queue', [entry({ queue: 'emq' })], /^EMQ_CRONS\[0\]\.queue: /],
    ['a queue with a brace', [entry({ queue: 'a{b}' })], /^EMQ_CRONS\[0\]\.queue: /],
    ['no queue', [entry({ queue: undefined })], /^EMQ_CRONS\[0\]\.queue: /],
    ['no payload', [entry({ payload: undefined })], /^EMQ_CRONS\[0\]: needs exactly one of payload/],
    ['both payloads', [entry({ payloadBase64: 'AA==' })], /^EMQ_CRONS\[0\]: needs exactly one of payload/],
    ['base64 not padded', [entry({ payload: undefined, payloadBase64: 'AA' })], /^EMQ_CRONS\[0\]: payloadBase64 is not base64/],
    ['base64 url alphabet', [entry({ payload: undefined, payloadBase64: '-_8=' })], /^EMQ_CRONS\[0\]: payloadBase64 is not base64/],
    ['a lone surrogate', [entry({ payload: '\ud800' })], /^EMQ_CRONS\[0\]: payload has a lone surrogate/],
    ['a payload over the cap', [entry({ payload: SECRET.repeat(4) })], /^EMQ_CRONS\[0\]: the payload is 80 bytes; EMQ_MAX_PAYLOAD_BYTES is 64$/],
    ['a group not branded', [entry({ group: 'lane-a' })], /^EMQ_CRONS\[0\]\.group: /],
    ['a delay without a unit', [entry({ delay: '30' })], /^EMQ_CRONS\[0\]\.delay: a delay needs a unit/],
    ['a negative delay', [entry({ delay: '-1s' })], /^EMQ_CRONS\[0\]\.delay: a delay cannot be negative/],
    ['a fractional delay', [entry({ delay: '1.5s' })], /^EMQ_CRONS\[0\]\.delay: /],
    ['a delay as a number', [entry({ delay: 30 })], /^EMQ_CRONS\[0\]\.delay: a delay is a string/],
    ['a delay beyond EMQ_MAX_DELAY', [entry({ delay: '2h' })], /^EMQ_CRONS\[0\]\.delay: the delay is beyond EMQ_MAX_DELAY$/],
    ['a delay too large to count', [entry({ delay: '99999999999999999d' })], /^EMQ_CRONS\[0\]\.delay: the delay is too large$/],
  ];
  it.each(refusals)('refuses %s, naming EMQ_CRONS and the entry, never the payload', (_, list, message) => {
    let error: unknown;
    try {
      parseCrons({ EMQ_CRONS: typeof list === 'string' ? list : JSON.stringify(list) }, 64, 3_600_000, NOW);
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(SECRET);
  });

  it('fuzz: any entry is read or refused with an Error naming EMQ_CRONS, never a payload', () => {
    const cronish = fc.oneof(
      fc.constantFrom('* * * * *', '0 3 * * *', '0 0 L * *', '0 18 * * 6L', '0 0 * * MON#2', '0 0 1 * MON', '0 0 * * 0'),
      fc
        .array(fc.constantFrom('*', '0', '1', '7', '59', 'L', 'W', '#', '/', '-', ',', 'MON', 'jan', '?', ' ', '5/', '1-', '*/2', '99'), { maxLength: 14 })
        .map((parts) => parts.join('')),
      fc.string({ maxLength: 40 }),
    );
    const value = fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null), fc.constant(undefined), fc.boolean());
    const item = fc.record(
      {
        name: fc.oneof(fc.stringMatching(/^[A-Za-z0-9._-]{1,8}$/), value),
        cron: fc.oneof(cronish, value),
        queue: fc.oneof(fc.constantFrom('reports', 'emq', 'a.b', ''), value),
        payload: fc.oneof(fc.constant(SECRET), value),
        payloadBase64: fc.oneof(fc.constantFrom('AA==', 'AA', '/w=='), value),
        group: fc.oneof(fc.constantFrom('PRT0KHTOWnGLuC', 'lane'), value),
        delay: fc.oneof(fc.constantFrom('0ms', '30s', '2h', '-1s', '1e3s'), value),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 4 }), (list) => {
        try {
          const read = parseCrons({ EMQ_CRONS: JSON.stringify(list) }, 64, 3_600_000, NOW);
          for (const s of read) expect(s.cron.next(NOW)).toBeGreaterThan(NOW);
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
          expect((err as Error).message).toMatch(/^EMQ_CRONS/);
          expect((err as Error).message).not.toContain(SECRET);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS || 300) },
    );
  });
});
