// Queue patterns: one grammar and one matcher for EMQ_TOKENS, trustedCaller, EMQ_HOME_REGIONS
// and EMQ_QUEUE_GROUPS. A pattern is one of
//   orders        an exact queue name
//   acme.*        one segment under acme: acme.mail, never acme.mail.eu, acme. or acme itself
//   acme*  *      a raw prefix (any queue whose name starts with the text; * is every queue):
//                 accepted only where the parser is told rawPrefixes (an opt-in for authorization)
// A segment is 1+ of letters, digits, '_' and '-' (queue names' characters but '.'). Because
// `T.*` covers exactly the names whose part before their LAST dot is T, `${tenant}.*` never
// reaches another tenant's `${other}.*`, dots in tenant ids or not.
// Matching compares bytes as they are: no case mapping, no normalisation.
import { validateQueue } from '../../shared/keyspace.js';

export interface PatternOptions {
  /** Whether `*` and prefixes ending in `*` without a `.` before it are accepted. */
  rawPrefixes: boolean;
  /** Where raw prefixes are refused: how to opt in, for the error, e.g. `rawPrefixes: true`. */
  optIn?: string;
}

type Parsed = { kind: 'exact' | 'segment' | 'raw'; stem: string };

const SEGMENTS = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const PREFIX = /^[A-Za-z0-9._-]{1,127}$/;
/** A segment pattern's stem: the name has a dot and at least one character after it. */
const STEM_MAX = 126;

/** A pattern's problem, worded to follow where it is (e.g. `EMQ_TOKENS[0].queues[1] `); it never repeats the pattern. */
export class PatternError extends Error {}

function parse(pattern: unknown, options: PatternOptions): Parsed {
  if (typeof pattern !== 'string') throw new PatternError('must be a string: a queue name, or a pattern ending in .*');
  if (pattern.endsWith('.*')) {
    const stem = pattern.slice(0, -2);
    if (stem.length > STEM_MAX || !SEGMENTS.test(stem)) {
      throw new PatternError(
        `ends in .* but what comes before it is not ${STEM_MAX} characters at most of segments (letters, digits, '_' and '-') joined by single dots`,
      );
    }
    return { kind: 'segment', stem };
  }
  if (pattern.endsWith('*')) {
    const stem = pattern.slice(0, -1);
    if (stem !== '' && !PREFIX.test(stem)) {
      throw new PatternError("is a prefix ending in * whose text is not 1 to 127 letters, digits, '.', '_' and '-'");
    }
    if (!options.rawPrefixes) {
      const what =
        stem === ''
          ? 'is *, which allows every queue'
          : 'is a bare prefix (a * with no . before it), which crosses segments: "acme*" allows acme-corp.x and acme.corp.x';
      throw new PatternError(`${what}; name queues exactly or one segment under a stem ("acme.*"), or set ${options.optIn ?? 'rawPrefixes: true'} to mean it`);
    }
    return { kind: 'raw', stem };
  }
  try {
    validateQueue(pattern);
  } catch {
    throw new PatternError(
      "is not a queue name or a pattern: 1 to 128 letters, digits, '.', '_' and '-' (not \"emq\"), with * only as a last segment (.*) or, where allowed, at the end",
    );
  }
  return { kind: 'exact', stem: pattern };
}

/** Checks one pattern; throws a PatternError saying what is wrong with it. */
export function checkPattern(pattern: unknown, options: PatternOptions): void {
  parse(pattern, options);
}

/** Whether the text from `from` to its end is one segment: 1+ of A-Z a-z 0-9 _ - (no slice, no regex). */
function segmentFrom(text: string, from: number): boolean {
  if (from >= text.length) return false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // 0-9, A-Z, a-z, '_', '-'
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45)) return false;
  }
  return true;
}

/** The value of the segment pattern covering the queue: its stem is all before the last dot, and one segment follows. */
function bySegment<T>(stems: ReadonlyMap<string, T>, queue: string): T | undefined {
  const dot = queue.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const value = stems.get(queue.slice(0, dot));
  return value !== undefined && segmentFrom(queue, dot + 1) ? value : undefined;
}

/**
 * Whether a queue is one of the patterns'. Per call: a Set and a Map lookup, one slice, and a
 * scan of the raw prefixes (none, where they are refused). `at(i)` names pattern i in errors.
 */
export function queueMatcher(patterns: readonly unknown[], options: PatternOptions, at: (i: number) => string): (queue: string) => boolean {
  const exact = new Set<string>();
  const stems = new Map<string, true>();
  const raw: string[] = [];
  patterns.forEach((pattern, i) => {
    let p: Parsed;
    try {
      p = parse(pattern, options);
    } catch (err) {
      throw err instanceof PatternError ? new PatternError(`${at(i)} ${err.message}`) : err;
    }
    if (p.kind === 'exact') exact.add(p.stem);
    else if (p.kind === 'segment') stems.set(p.stem, true);
    else raw.push(p.stem);
  });
  if (raw.includes('')) return () => true;
  return (queue) => {
    if (exact.has(queue)) return true;
    if (stems.size > 0 && bySegment(stems, queue)) return true;
    for (const r of raw) if (queue.startsWith(r)) return true;
    return false;
  };
}

/**
 * A map keyed by patterns (EMQ_HOME_REGIONS, EMQ_QUEUE_GROUPS): a queue's value is its exact
 * entry's, else the one of the longest matching pattern (`acme.*` counts as the prefix `acme.`,
 * `*` as the empty prefix), else undefined. `at(key)` names an entry in errors.
 */
export function queueLookup<T>(
  entries: Iterable<readonly [string, T]>,
  options: PatternOptions,
  at: (key: string) => string,
): (queue: string) => T | undefined {
  const exact = new Map<string, T>();
  const stems = new Map<string, T>();
  const raw: Array<[prefix: string, value: T]> = [];
  for (const [key, value] of entries) {
    let p: Parsed;
    try {
      p = parse(key, options);
    } catch (err) {
      throw err instanceof PatternError ? new PatternError(`${at(key)} ${err.message}`) : err;
    }
    if (p.kind === 'exact') exact.set(p.stem, value);
    else if (p.kind === 'segment') stems.set(p.stem, value);
    else raw.push([p.stem, value]);
  }
  raw.sort((a, b) => b[0].length - a[0].length);
  return (queue) => {
    const own = exact.get(queue);
    if (own !== undefined) return own;
    const segment = stems.size > 0 ? bySegment(stems, queue) : undefined;
    // `stem.*` is the prefix `stem.` (the queue up to its last dot): a raw prefix wins over it only
    // when longer (never equal: a raw prefix ending in "." is written as a segment pattern)
    const reach = segment === undefined ? -1 : queue.lastIndexOf('.') + 1;
    for (const [prefix, value] of raw) {
      if (prefix.length <= reach) return segment;
      if (queue.startsWith(prefix)) return value;
    }
    return segment;
  };
}
