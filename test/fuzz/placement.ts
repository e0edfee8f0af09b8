// Emq-Group, Emq-Delay and Emq-Not-Before on POST …/jobs, and a batch item's group, delay and
// notBefore: the values the fuzz sends (every valid form, and hostile ones) and the oracle's own
// reading of the rules (docs/api.md, "Lanes and the schedule"; RFC 3339 section 5.6). The rules
// are written out here from those documents, never by calling the producer's parsers
// (functions/producer/placement.ts, shared/duration.ts): the fuzz must be able to disagree.
import fc from 'fast-check';
import { encodeId } from '../../shared/ids.js';
import { MAX_DELAY_MS, QUEUE_GROUPS } from './setup.js';

// ---------------------------------------------------------------- the rules

const UNIT_MS = { ms: 1n, s: 1_000n, m: 60_000n, h: 3_600_000n, d: 86_400_000n } as const;
type Unit = keyof typeof UNIT_MS;
const UNITS = Object.keys(UNIT_MS) as Unit[];

/** A delay: ASCII digits and a unit (ms, s, m, h, d), at most EMQ_MAX_DELAY; its ms, else undefined. */
export function delayRule(text: string): number | undefined {
  const m = /^([0-9]+)(ms|s|m|h|d)$/.exec(text);
  if (!m) return undefined;
  const ms = BigInt(m[1]!) * UNIT_MS[m[2] as Unit];
  return ms <= BigInt(MAX_DELAY_MS) ? Number(ms) : undefined;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => (m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31);
/** Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, m: number, d: number): number {
  const y = m <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * A not-before time as Unix ms (before any clamping), else undefined: 1 to 16 ASCII digits (Unix
 * ms, a safe integer), or RFC 3339's date-time: full-date "T" full-time, T and Z in either case,
 * month 01-12, day within its month (Feb 29 in leap years only), hour 00-23, minute 00-59,
 * second 00-59 (no leap second: nothing can name one), an offset Z or ±hh:mm (hh 00-23, mm 00-59),
 * and a fraction of 1 to 9 digits (the project's bound; ms kept, the rest truncated).
 */
export function timeRule(text: string): number | undefined {
  if (/^[0-9]+$/.test(text)) {
    const n = Number(text);
    return text.length <= 16 && Number.isSafeInteger(n) ? n : undefined;
  }
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$/.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const frac = m[7];
  const [sign, oh, om] = [m[8] === '-' ? -1 : 1, Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || oh > 23 || om > 59) return undefined;
  if (frac !== undefined && frac.length > 9) return undefined;
  const ms = frac === undefined ? 0 : Number(frac.padEnd(3, '0').slice(0, 3));
  return daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + ms - sign * (oh * 60 + om) * 60_000;
}

const CEILING = 'AzL8n0Y58m7'; // base62(2^63 - 1)
/** A group: 3 ASCII capitals and 11 base62 digits (0-9 A-Z a-z, ascending in ASCII) at most the 63-bit ceiling. */
export const groupRule = (text: string) => /^[A-Z]{3}[0-9A-Za-z]{11}$/.test(text) && text.slice(3) <= CEILING;

/** A queue's default lane (EMQ_QUEUE_GROUPS): its exact entry, else its longest matching prefix. */
export function laneOf(queue: string): string | undefined {
  const table = QUEUE_GROUPS as Record<string, string>;
  // own entries only: a queue named constructor or __proto__ is no pattern
  if (Object.hasOwn(table, queue) && !queue.endsWith('*')) return table[queue];
  let best: [number, string] | undefined;
  for (const [pattern, group] of Object.entries(table)) {
    if (!pattern.endsWith('*')) continue;
    const stem = pattern.slice(0, -1);
    if (queue.startsWith(stem) && (!best || stem.length > best[0])) best = [stem.length, group];
  }
  return best?.[1];
}

export type PlaceCode = 'invalid_group' | 'invalid_delay' | 'invalid_not_before';
/** The placement a request asks for, as the server reads it: the values the server sees. */
export interface PlaceText {
  group?: string | undefined;
  delay?: string | undefined;
  notBefore?: string | undefined;
}
/** A checked placement: its own group (before the default lane), and a relative or an absolute due time. */
export interface Placed {
  group?: string | undefined;
  inMs?: number | undefined;
  at?: number | undefined;
}

/**
 * The placement, or the refusal, checked in the documented order: the group, then both
 * Delay and Not-Before (refused as a delay), the delay, the time (past: due at once, at most
 * now + EMQ_MAX_DELAY).
 */
export function placeRule(p: PlaceText, now: number): Placed | { refused: PlaceCode } {
  if (p.group !== undefined && !groupRule(p.group)) return { refused: 'invalid_group' };
  if (p.delay !== undefined && p.notBefore !== undefined) return { refused: 'invalid_delay' };
  if (p.delay !== undefined) {
    const inMs = delayRule(p.delay);
    return inMs === undefined ? { refused: 'invalid_delay' } : { group: p.group, inMs };
  }
  if (p.notBefore !== undefined) {
    const at = timeRule(p.notBefore);
    return at === undefined || at > now + MAX_DELAY_MS ? { refused: 'invalid_not_before' } : { group: p.group, at: Math.max(at, 0) };
  }
  return { group: p.group };
}

/** The job's lane (its own, else the queue's default) and its due window, from `sent` (before the request) to `done` (after). */
export function landing(q: string, p: Placed, sent: number, done: number): { group: string | undefined; due: readonly [number, number] | undefined } {
  const group = p.group ?? laneOf(q);
  // a relative delay counts from Valkey's clock (TIME) while the request runs: the same clock as Date.now() here
  const due: readonly [number, number] | undefined =
    p.at !== undefined ? [p.at, p.at] : p.inMs !== undefined ? [sent + p.inMs - SLACK_MS, done + p.inMs + SLACK_MS] : undefined;
  return { group, due };
}
/** The tolerance on a relative delay's score beyond the request's own span (TIME and Date.now() both truncate to ms). */
const SLACK_MS = 2;

// ---------------------------------------------------------------- the values sent

/** Groups the fuzz reuses (lanes with many jobs; an Idempotency-Key reused with another group): of several namespaces. */
export const GROUP_POOL = [
  'PRT0KHTOWnGLuC',
  'ORGAzL8n0Y58m7', // the ceiling itself
  'TNT00000000000',
  'JOB0KHTOWnGLuC', // a group may be any namespace, JOB included
  ...Object.values(QUEUE_GROUPS), // the default lanes, named explicitly
];

const nsArb = fc.stringMatching(/^[A-Z]{3}$/);
const snowflakeArb = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n });
/** Digits as other scripts write them: Arabic-Indic, Extended Arabic-Indic, Devanagari, fullwidth, mathematical bold. */
const DIGIT_ZEROS = [0x660, 0x6f0, 0x966, 0xff10, 0x1d7ce];
const foreignDigits = (text: string, zero: number) => text.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));

export type GroupV = { t: 'pool'; n: number } | { t: 'fresh'; ns: string; s: bigint } | { t: 'raw'; text: string };
const hostileGroup: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      nsArb,
      snowflakeArb,
      fc.nat(20),
      fc.constantFrom(
        'lower',
        'lowerNs',
        'mixedNs',
        'short',
        'long',
        'digitNs',
        'char',
        'foreign',
        'fullwidth',
        'space',
        'lead',
        'trail',
        'tab',
        'over',
        'max',
        'nbsp',
      ),
    )
    .map(([ns, s, i, how]) => {
      const g = encodeId(ns, s);
      const at = 3 + (i % 11);
      switch (how) {
        case 'lower':
          return g.toLowerCase();
        case 'lowerNs':
          return g.slice(0, 3).toLowerCase() + g.slice(3);
        case 'mixedNs':
          return g[0] + g[1]!.toLowerCase() + g.slice(2);
        case 'short':
          return g.slice(0, 13 - (i % 3));
        case 'long':
          return `${g}${'0Az'.slice(0, 1 + (i % 3))}`;
        case 'digitNs':
          return `${g[0]}${i % 10}${g.slice(2)}`;
        case 'char':
          return g.slice(0, at) + '-_+/=.~%:{'[i % 10] + g.slice(at + 1);
        case 'foreign':
          return g.slice(0, at) + foreignDigits(String(i % 10), DIGIT_ZEROS[i % DIGIT_ZEROS.length]!) + g.slice(at + 1);
        case 'fullwidth':
          return String.fromCodePoint(...[...g.slice(0, 3)].map((c) => c.charCodeAt(0) + 0xfee0)) + g.slice(3);
        case 'space':
          return `${g.slice(0, at)} ${g.slice(at + 1)}`;
        case 'lead':
          return ` ${g}`;
        case 'trail':
          return `${g} `;
        case 'tab':
          return `\t${g}\t`;
        case 'over':
          return ns + ['AzL8n0Y58m8', 'AzL8n0Y58n0', 'B0000000000', 'zzzzzzzzzzz', 'Azz00000000'][i % 5];
        case 'max':
          return `${ns}${CEILING}`;
        default:
          return `${g}\u00a0`;
      }
    }),
  fc.constantFrom('', 'PRT', 'PRT0KHTOWnGLuC,ORG0KHTOWnGLuC', 'PRT0KHTOWnGLuC ORG', 'null', 'ÉTÉ0KHTOWnGLuC', 'PRT0KHTOWnGLuç', 'PRT0KHTOWnGLu\u0301'),
  fc.stringMatching(/^[\x20-\x7e]{0,20}$/),
);
const goodGroupArb: fc.Arbitrary<GroupV> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ t: fc.constant('pool' as const), n: fc.nat(GROUP_POOL.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('fresh' as const), ns: nsArb, s: snowflakeArb }) },
);
export const groupArb: fc.Arbitrary<GroupV> = fc.oneof(
  { weight: 2, arbitrary: goodGroupArb },
  { weight: 1, arbitrary: hostileGroup.map((text) => ({ t: 'raw' as const, text })) },
);
export const groupText = (g: GroupV) => (g.t === 'pool' ? GROUP_POOL[g.n % GROUP_POOL.length]! : g.t === 'fresh' ? encodeId(g.ns, g.s) : g.text);

export type DelayV = { t: 'unit'; unit: Unit; n: number; edge: 'n' | 'max' | 'over'; zeros: number } | { t: 'raw'; text: string };
const unitArb = fc.constantFrom(...UNITS);
const hostileDelay: fc.Arbitrary<string> = fc.oneof(
  fc.nat().map(String), // a bare number
  fc.tuple(fc.nat(100_000), unitArb, fc.constantFrom('-', '+', '−', '--')).map(([n, u, s]) => `${s}${n}${u}`),
  fc.tuple(fc.nat(1000), unitArb, fc.constantFrom('.5', '.0', ',5', 'e3', 'e0', '_000', "'000")).map(([n, u, x]) => `${n}${x}${u}`),
  fc
    .tuple(
      fc.nat(1000),
      fc.constantFrom('S', 'MS', 'Ms', 'mS', 'D', 'H', 'M', 'sec', 'secs', 'min', 'hr', 'days', 'us', 'µs', 'ns', 'w', 'y', '', 'ss', 'msms'),
    )
    .map(([n, u]) => `${n}${u}`),
  fc
    .tuple(fc.nat(1000), unitArb, fc.constantFrom('mid', 'lead', 'trail', 'tab', 'nbsp', 'both', 'nl'))
    .map(([n, u, w]) =>
      w === 'mid'
        ? `${n} ${u}`
        : w === 'lead'
          ? ` ${n}${u}`
          : w === 'trail'
            ? `${n}${u} `
            : w === 'tab'
              ? `\t${n}${u}`
              : w === 'nbsp'
                ? `${n}${u}\u00a0`
                : w === 'both'
                  ? ` ${n}${u} `
                  : `${n}\n${u}`,
    ),
  fc.tuple(fc.integer({ min: 16, max: 400 }), unitArb).map(([k, u]) => `${'9'.repeat(k)}${u}`), // overflowing digits
  fc.tuple(fc.nat(1000), unitArb, fc.constantFrom(...DIGIT_ZEROS)).map(([n, u, z]) => `${foreignDigits(String(n), z)}${u}`), // other scripts' digits
  fc.tuple(fc.nat(99), unitArb).map(([n, u]) => `${foreignDigits(String(n), 0xff10)}${String.fromCodePoint(...[...u].map((c) => c.charCodeAt(0) + 0xfee0))}`),
  fc.constantFrom(
    '',
    's',
    'ms',
    '-0s',
    '1m30s',
    '1h1h',
    '2h 30m',
    '0x10s',
    'Infinitys',
    'NaNs',
    '1e3ms',
    `${2 ** 53}ms`,
    `${Number.MAX_SAFE_INTEGER}ms`,
    `${Number.MAX_SAFE_INTEGER + 1}ms`,
    '99999999999999999999d',
    '106751991167d',
    '²s',
    '٣٠s',
    '３０s',
    '30ｓ',
    '30s,30s',
    'PT30S',
  ),
);
const unitDelayArb = (edges: Array<'n' | 'max' | 'over'>): fc.Arbitrary<DelayV> =>
  fc.record({
    t: fc.constant('unit' as const),
    unit: unitArb,
    n: fc.oneof(fc.nat(100), fc.nat()),
    edge: fc.constantFrom(...edges),
    zeros: fc.constantFrom(0, 0, 0, 0, 1, 3),
  });
const goodDelayArb = unitDelayArb(['n', 'n', 'n', 'max']);
export const delayArb: fc.Arbitrary<DelayV> = fc.oneof(
  { weight: 4, arbitrary: unitDelayArb(['n', 'n', 'max', 'over']) },
  { weight: 3, arbitrary: hostileDelay.map((text) => ({ t: 'raw' as const, text })) },
);
export function delayText(d: DelayV): string {
  if (d.t === 'raw') return d.text;
  const most = Math.floor(MAX_DELAY_MS / Number(UNIT_MS[d.unit]));
  const n = d.edge === 'max' ? most : d.edge === 'over' ? most + 1 : d.n % (most + 1);
  return `${'0'.repeat(d.zeros)}${n}${d.unit}`;
}

/** An instant: relative to now (computed when the case is planned), or absolute. */
type When = { rel: number } | { abs: number };
const YEAR = 365 * 86_400_000;
const FIRST = -62_167_219_200_000; // 0000-01-01T00:00:00Z
const LAST = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const big = (min: number, max: number) => fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number);
// never within a minute of now + EMQ_MAX_DELAY: the server reads its own clock a little later
const soonArb = big(-60_000, MAX_DELAY_MS - 60_000).map((rel) => ({ rel }));
const pastArb = big(-30 * YEAR, -1).map((rel) => ({ rel }));
const whenArb: fc.Arbitrary<When> = fc.oneof(
  { weight: 5, arbitrary: soonArb },
  { weight: 2, arbitrary: pastArb },
  { weight: 2, arbitrary: big(MAX_DELAY_MS + 60_000, MAX_DELAY_MS + 30 * YEAR).map((rel) => ({ rel })) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 999, 86_400_000, 946_684_800_000, 951_782_400_000, -1, FIRST, LAST).map((abs) => ({ abs })) },
  { weight: 1, arbitrary: big(FIRST, LAST).map((abs) => ({ abs })) },
);
const goodWhenArb: fc.Arbitrary<When> = fc.oneof({ weight: 4, arbitrary: soonArb }, { weight: 1, arbitrary: pastArb });
const instant = (w: When, now: number) => ('rel' in w ? now + w.rel : w.abs);

interface RfcV {
  when: When;
  /** The offset in minutes; 'Z' or 'z' (UTC), or '-00:00'. */
  tz: number | 'Z' | 'z' | '-00:00';
  /** Fraction digits: 0 (none) to 9; 10 and more are past the project's bound. */
  frac: number;
  extra: string;
  lowerT: boolean;
}
const rfcOf = (when: fc.Arbitrary<When>, frac: fc.Arbitrary<number>): fc.Arbitrary<RfcV> =>
  fc.record({
    when,
    tz: fc.oneof(
      fc.constantFrom<RfcV['tz']>('Z', 'Z', 'z', '-00:00', 0, 60, -300, 330, 345, -570, 840, -720, 1439, -1439),
      fc.integer({ min: -1439, max: 1439 }),
    ),
    frac,
    extra: fc.stringMatching(/^[0-9]{11}$/),
    lowerT: fc.boolean(),
  });
const goodFracArb = fc.oneof(fc.constantFrom(0, 0, 3, 3), fc.integer({ min: 1, max: 9 }));
const rfcArb = rfcOf(whenArb, fc.oneof({ weight: 4, arbitrary: goodFracArb }, { weight: 1, arbitrary: fc.integer({ min: 10, max: 14 }) }));
const two = (n: number) => String(n).padStart(2, '0');
/** The instant written in RFC 3339 at its offset (formatting only: toISOString of the local time). */
function rfcText(r: RfcV, now: number): string {
  const tz = typeof r.tz === 'number' ? r.tz : 0;
  const local = Math.min(Math.max(instant(r.when, now) + tz * 60_000, FIRST), LAST);
  const iso = new Date(local).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const frac = r.frac === 0 ? '' : `.${(iso.slice(20, 23) + r.extra).slice(0, r.frac)}`;
  const off = typeof r.tz === 'number' ? `${tz < 0 ? '-' : '+'}${two(Math.floor(Math.abs(tz) / 60))}:${two(Math.abs(tz) % 60)}` : r.tz;
  return `${iso.slice(0, 10)}${r.lowerT ? 't' : 'T'}${iso.slice(11, 19)}${frac}${off}`;
}

const MUTATIONS = [
  'month13',
  'month00',
  'day00',
  'day32',
  'feb29',
  'feb30',
  'feb31',
  'apr31',
  'jun31',
  'sep31',
  'nov31',
  'dec31',
  'hour24',
  'hour25',
  'min60',
  'sec60',
  'sec61',
  'tz24',
  'tz60',
  'tzNoColon',
  'tzShort',
  'tzOne',
  'noTz',
  'space',
  'underscore',
  'noSeconds',
  'comma',
  'dotOnly',
  'plusYear',
  'shortYear',
  'trailing',
  'dateOnly',
  'foreign',
  'lead',
  'trail',
  'nbsp',
  'tzZ',
] as const;
type Mutation = (typeof MUTATIONS)[number];
function mutate(s: string, how: Mutation, pick: number): string {
  const date = s.slice(0, 10);
  const time = s.slice(11, 19);
  const tail = s.slice(19);
  const y = date.slice(0, 4);
  const day = (md: string) => `${y}-${md}${s.slice(10)}`;
  switch (how) {
    case 'month13':
      return `${y}-13${s.slice(7)}`;
    case 'month00':
      return `${y}-00${s.slice(7)}`;
    case 'day00':
      return `${date.slice(0, 8)}00${s.slice(10)}`;
    case 'day32':
      return `${date.slice(0, 8)}32${s.slice(10)}`;
    case 'feb29':
      return day('02-29');
    case 'feb30':
      return day('02-30');
    case 'feb31':
      return day('02-31');
    case 'apr31':
      return day('04-31');
    case 'jun31':
      return day('06-31');
    case 'sep31':
      return day('09-31');
    case 'nov31':
      return day('11-31');
    case 'dec31':
      return day('12-31');
    case 'hour24':
      return `${date}T24:00:00${pick % 2 ? tail.replace(/^\.[0-9]+/, '') : tail.replace(/^\.[0-9]+/, '.000')}`;
    case 'hour25':
      return `${date}T25${s.slice(13)}`;
    case 'min60':
      return `${s.slice(0, 14)}60${s.slice(16)}`;
    case 'sec60':
      return `${s.slice(0, 17)}60${s.slice(19)}`;
    case 'sec61':
      return `${s.slice(0, 17)}61${s.slice(19)}`;
    case 'tz24':
      return `${s.slice(0, 19)}+24:00`;
    case 'tz60':
      return `${s.slice(0, 19)}${pick % 2 ? '-' : '+'}0${pick % 10}:60`;
    case 'tzNoColon':
      return `${s.slice(0, 19)}+0${pick % 10}00`;
    case 'tzShort':
      return `${s.slice(0, 19)}+0${pick % 10}`;
    case 'tzOne':
      return `${s.slice(0, 19)}+${pick % 10}:00`;
    case 'noTz':
      return s.replace(/([Zz]|[+-][0-9]{2}:[0-9]{2})$/, '');
    case 'space':
      return `${date} ${s.slice(11)}`;
    case 'underscore':
      return `${date}_${s.slice(11)}`;
    case 'noSeconds':
      return `${date}T${time.slice(0, 5)}${tail.replace(/^\.[0-9]+/, '')}`;
    case 'comma':
      return `${s.slice(0, 19)},${pick % 1000}${tail.replace(/^\.[0-9]+/, '')}`;
    case 'dotOnly':
      return `${s.slice(0, 19)}.${tail.replace(/^\.[0-9]+/, '')}`;
    case 'plusYear':
      return `+${pick % 2 ? '' : '00'}${s}`;
    case 'shortYear':
      return s.slice(2);
    case 'trailing':
      return `${s}${['x', 'Z', ' x', '\u00a0', '0', '[UTC]'][pick % 6]}`;
    case 'dateOnly':
      return date;
    case 'foreign': {
      const digits = [...s].flatMap((c, i) => (/[0-9]/.test(c) ? [i] : []));
      const i = digits[pick % digits.length]!;
      return s.slice(0, i) + foreignDigits(s[i]!, DIGIT_ZEROS[pick % DIGIT_ZEROS.length]!) + s.slice(i + 1);
    }
    case 'lead':
      return ` ${s}`;
    case 'trail':
      return `${s}\t`;
    case 'nbsp':
      return `\u00a0${s}`;
    case 'tzZ':
      return `${s.slice(0, 19)}+00:00Z`;
  }
}

export type TimeV =
  | { t: 'unix'; when: When; zeros: number; number: boolean }
  | { t: 'rfc'; rfc: RfcV }
  | { t: 'bad'; rfc: RfcV; how: Mutation; pick: number }
  | { t: 'fixed'; text: string }
  | { t: 'raw'; when: When; how: number; zero: number };
const unixOf = (when: fc.Arbitrary<When>) =>
  fc.record({ t: fc.constant('unix' as const), when, zeros: fc.constantFrom(0, 0, 0, 0, 1, 2), number: fc.boolean() });
const goodTimeArb: fc.Arbitrary<TimeV> = fc.oneof(
  unixOf(goodWhenArb),
  fc.record({ t: fc.constant('rfc' as const), rfc: rfcOf(goodWhenArb, goodFracArb) }),
  fc.record({ t: fc.constant('rfc' as const), rfc: rfcOf(goodWhenArb, goodFracArb) }),
);
export const timeArb: fc.Arbitrary<TimeV> = fc.oneof(
  { weight: 3, arbitrary: unixOf(whenArb) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('rfc' as const), rfc: rfcArb }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('bad' as const), rfc: rfcArb, how: fc.constantFrom(...MUTATIONS), pick: fc.nat(1000) }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        '2016-12-31T23:59:60Z', // a real leap second
        '2015-06-30T23:59:60Z',
        '1990-12-31T15:59:60-08:00',
        '2024-02-29T12:00:00Z', // a real Feb 29
        '2000-02-29T00:00:00Z',
        '1900-02-29T00:00:00Z', // not one: 1900 is no leap year
        '2100-02-29T00:00:00Z',
        '1970-01-01T00:00:00Z',
        '1969-12-31T23:59:59.999Z',
        '0000-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999999999Z',
        '2026-12-01T09:30:00Z',
      )
      .map((text) => ({ t: 'fixed' as const, text })),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('raw' as const), when: whenArb, how: fc.nat(11), zero: fc.constantFrom(...DIGIT_ZEROS) }),
  },
);

/**
 * The value sent: a string, or (a batch item's notBefore only) a JSON number. Never within two
 * minutes of now + EMQ_MAX_DELAY (the server reads its clock a little later than `now`): such a
 * time (a mutated date can land anywhere) is moved a year (Unix ms: a day) earlier.
 */
export function timeValue(v: TimeV, now: number): string | number {
  const value = anyTimeValue(v, now);
  const at = timeRule(String(value).trim());
  if (at === undefined || Math.abs(at - (now + MAX_DELAY_MS)) > 120_000) return value;
  if (typeof value === 'number') return value - 86_400_000;
  return /^[0-9]+$/.test(value) ? String(Number(value) - 86_400_000) : value.replace(/[0-9]{4}/, (y) => String(Number(y) - 1).padStart(4, '0'));
}

function anyTimeValue(v: TimeV, now: number): string | number {
  switch (v.t) {
    case 'unix': {
      const ms = Math.max(instant(v.when, now), 0);
      return v.number ? ms : `${'0'.repeat(v.zeros)}${ms}`;
    }
    case 'rfc':
      return rfcText(v.rfc, now);
    case 'bad':
      return mutate(rfcText(v.rfc, now), v.how, v.pick);
    case 'fixed':
      return v.text;
    case 'raw': {
      const ms = String(Math.max(instant(v.when, now), 0));
      return [
        `-${ms}`,
        `+${ms}`,
        `${ms}.5`,
        `${ms}.0`,
        `${ms}e0`,
        `${'9'.repeat(17 + (ms.length % 20))}`,
        `${'0'.repeat(17 - Math.min(ms.length, 16))}${ms}`, // 17 digits, leading zeros
        `0x${Number(ms).toString(16)}`,
        foreignDigits(ms, v.zero),
        ` ${ms} `,
        `${ms}ms`,
        '',
      ][v.how]!;
    }
  }
}

// ---------------------------------------------------------------- a request's placement

/** What a request carries: each of the three, or not. */
export interface PlaceV {
  group?: GroupV | undefined;
  delay?: DelayV | undefined;
  notBefore?: TimeV | undefined;
}
const half = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });
const placeOf = (group: fc.Arbitrary<GroupV>, delay: fc.Arbitrary<DelayV>, time: fc.Arbitrary<TimeV>, both: number): fc.Arbitrary<PlaceV> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant({}) },
    { weight: 3, arbitrary: fc.record({ group }) },
    { weight: 3, arbitrary: fc.record({ group: half(group), delay }) },
    { weight: 4, arbitrary: fc.record({ group: half(group), notBefore: time }) },
    { weight: both, arbitrary: fc.record({ group: half(group), delay, notBefore: time }) },
  );
/** Valid placements of every landing (flat, lane, scheduled in, scheduled at, grouped and scheduled). */
export const goodPlaceArb = placeOf(goodGroupArb, goodDelayArb, goodTimeArb, 0);
/** Placements valid and hostile: half of them valid, as many again with one value refused. */
export const placeArb: fc.Arbitrary<PlaceV> = fc.oneof(goodPlaceArb, placeOf(groupArb, delayArb, timeArb, 1));
/** The three values as sent, strings (a batch item's notBefore may be a number). */
export function placeValues(p: PlaceV, now: number): { group?: string; delay?: string; notBefore?: string | number } {
  return {
    ...(p.group ? { group: groupText(p.group) } : {}),
    ...(p.delay ? { delay: delayText(p.delay) } : {}),
    ...(p.notBefore ? { notBefore: timeValue(p.notBefore, now) } : {}),
  };
}

/**
 * A header value as fetch sends it: a string of bytes. Characters past U+00FF are sent as their
 * UTF-8 bytes (fetch refuses them otherwise); the server sees non-ASCII either way.
 */
export const headerBytes = (text: string) => ([...text].every((c) => c.charCodeAt(0) <= 0xff) ? text : Buffer.from(text, 'utf8').toString('latin1'));

// ---------------------------------------------------------------- what the fuzz reached

const reached = new Map<string, number>();
/** Counts an outcome of a placement (printed when the file is done; the test asserts some were reached). */
export const reach = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);
/** How often outcomes starting with `what` were reached. */
export const reachedOf = (what: string) => [...reached].reduce((n, [k, v]) => (k.startsWith(what) ? n + v : n), 0);
export function printReached() {
  const rows = [...reached.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `  ${k.padEnd(44)} ${String(n).padStart(6)}`);
  console.log(`fuzz, outcomes reached (a landing, a duplicate, a refusal's code):\n${rows.join('\n')}`);
}
