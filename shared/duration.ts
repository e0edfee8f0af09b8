// Durations and times as callers write them: a delay is a whole number with a unit (`ms`,
// `s`, `m`, `h` or `d`; a bare number is refused, so no one guesses the unit), and a
// not-before time is RFC 3339 or a Unix time in ms. Runtime-agnostic.

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `<n><unit>` in ms; throws RangeError saying what is wrong (no unit, negative, not whole, too large). */
export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  if (!m) {
    if (/^-/.test(text)) throw new RangeError('a delay cannot be negative');
    if (/^\d+$/.test(text)) throw new RangeError('a delay needs a unit: ms, s, m, h or d (e.g. 30s)');
    throw new RangeError('a delay is a whole number with a unit ms, s, m, h or d (e.g. 500ms, 30s, 2h)');
  }
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (!Number.isSafeInteger(ms)) throw new RangeError('the delay is too large');
  return ms;
}

/** A duration in words for messages: the largest unit that divides it. */
export function durationText(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) if (ms % UNIT_MS[unit] === 0 && ms >= UNIT_MS[unit]) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The days of a month (1-12) of a year, proleptic Gregorian. */
const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;

/** An RFC 3339 time or a Unix time in ms (digits), as Unix ms; throws RangeError otherwise. */
export function parseTime(text: string): number {
  if (/^\d{1,16}$/.test(text)) {
    const ms = Number(text);
    if (Number.isSafeInteger(ms)) return ms;
  }
  const m = RFC3339.exec(text);
  // Date.parse rolls a day past its month's end over (Feb 30 is Mar 2) and reads hour 24 as
  // the next midnight; RFC 3339 has neither. It refuses the rest (month 13, minute 60, a leap second).
  if (m && Number(m[4]) <= 23 && Number(m[3]) <= daysIn(Number(m[1]), Number(m[2]))) {
    const ms = Date.parse(text.toUpperCase());
    if (Number.isFinite(ms)) return ms;
  }
  throw new RangeError('a time is RFC 3339 (e.g. 2026-12-01T09:30:00Z) or a Unix time in ms');
}
