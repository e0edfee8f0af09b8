// Cron expressions as Cloudflare's Cron Triggers take them (Workers docs, "Supported cron
// expressions"): five fields, UTC, minute 0-59, hour 0-23, day of month 1-31 (also L, LW,
// <n>W), month 1-12 or JAN-DEC, weekday 1-7 (1 is Sunday, as in Quartz) or SUN-SAT (also
// <d>L, the last such weekday, and <d>#<n>, the n-th); `*`, lists, ranges and `*`/range steps.
// The Worker is fired by Cloudflare; `emq producer` and GET /v1/schedules compute the same
// times with croner (pinned in package.json) set to that dialect. What croner would also
// take and Cloudflare's table does not list is refused here first, so both fire alike:
//   `?`, nicknames (@hourly), seconds or years, weekday 0 or 8, `n/step` without a range,
//   `L` alone as a weekday, `<n>L` as a day of month; and a day of month and a weekday both
//   restricted (cron dialects disagree there: Vixie fires on either, Quartz refuses it).
// An expression is one canonical text (single spaces, no padding), since the Worker knows its
// schedules by comparing that text with the fired trigger's (controller.cron).
// Runtime-agnostic (croner has no dependencies and reads no timezone database at UTC).
import { Cron } from 'croner';

/** The longest expression taken: far above any real one, short enough to log. */
export const CRON_MAX_LENGTH = 120;

const NAMES = 'JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC';
const DAYS = 'SUN|MON|TUE|WED|THU|FRI|SAT';
/** `*`, a value or a range, each with an optional step (a bare `n/step` is croner's extension, not listed). */
const stepped = (value: string) => `(?:\\*|${value}(?:-${value})?)(?:/\\d{1,2})?`;

/** Each field: its name in messages and the items a comma-separated list of it may hold. */
const FIELDS: ReadonlyArray<{ name: string; item: RegExp; values: string }> = [
  { name: 'minute', item: new RegExp(`^${stepped('\\d{1,2}')}$`), values: '0-59' },
  { name: 'hour', item: new RegExp(`^${stepped('\\d{1,2}')}$`), values: '0-23' },
  { name: 'day of month', item: new RegExp(`^(?:${stepped('\\d{1,2}')}|L|LW|\\d{1,2}W)$`), values: '1-31, L, LW or <n>W' },
  { name: 'month', item: new RegExp(`^${stepped(`(?:\\d{1,2}|${NAMES})`)}$`, 'i'), values: '1-12 or JAN-DEC' },
  {
    name: 'weekday',
    item: new RegExp(`^(?:${stepped(`(?:[1-7]|${DAYS})`)}|(?:[1-7]|${DAYS})(?:L|#[1-5]))$`, 'i'),
    values: '1-7 (1 is Sunday) or SUN-SAT, <d>L or <d>#<n>',
  },
];

/** What croner is told: five fields, UTC, Quartz's weekday numbers, either day field restricting alone. */
const OPTIONS = { mode: '5-part', alternativeWeekdays: true, utcOffset: 0, domAndDow: false } as const;

/** A checked expression: when it fires next, and whether it fires in a given minute. */
export interface CronPattern {
  readonly text: string;
  /** The first fire strictly after `afterMs` (Unix ms, UTC), or undefined when it never fires again. */
  next(afterMs: number): number | undefined;
  /** Whether it fires in the minute holding `ms`. */
  firesIn(ms: number): boolean;
}

/** The minute holding `ms`, as Unix ms: a fire's nominal time. */
export const minuteOf = (ms: number): number => Math.floor(ms / 60_000) * 60_000;

/**
 * The expression, checked: throws RangeError saying which rule it breaks (never repeating the
 * text, which the caller names by position). `now`: an expression that never fires after it
 * (Feb 30) is refused.
 */
export function cronPattern(text: unknown, now = Date.now()): CronPattern {
  if (typeof text !== 'string') throw new RangeError('must be a string of five fields');
  if (text.length > CRON_MAX_LENGTH) throw new RangeError(`is longer than ${CRON_MAX_LENGTH} characters`);
  const fields = text.split(' ');
  if (!/^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/.test(text) || fields.length !== 5) {
    throw new RangeError('must be five fields (minute hour day-of-month month weekday) of printable ASCII, one space between each, none around');
  }
  fields.forEach((field, i) => {
    const { name, item, values } = FIELDS[i]!;
    if (!field.split(',').every((part) => item.test(part))) throw new RangeError(`its ${name} field is not one Cloudflare takes: ${values}, with * , - /`);
  });
  if (fields[2] !== '*' && fields[4] !== '*') throw new RangeError('restricts both the day of month and the weekday: leave one of them *');
  let cron: Cron;
  try {
    cron = new Cron(text, OPTIONS);
  } catch {
    throw new RangeError('has a value out of range (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 1-7, #1-5) or a range that runs backwards');
  }
  const next = (afterMs: number) => cron.nextRun(new Date(afterMs))?.getTime();
  if (next(now) === undefined) throw new RangeError('never fires (a day no month has?)');
  return {
    text,
    next,
    firesIn: (ms) => cron.match(new Date(minuteOf(ms))),
  };
}
