// The upstash suite's tally: bun's JUnit report read back, each failure put down to its cause.
// A cause is named only where it is known: a command the server's table lacks (the gateway
// says so in its own words), or a failure listed below with its reason. Anything else is
// "other", printed in full: a gateway bug until shown otherwise.

export interface Failure {
  file: string;
  test: string;
  message: string;
}

export interface Report {
  passed: number;
  skipped: number;
  failures: Failure[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const fromXml = (s: string) =>
  s.replace(/&(#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => (e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : ENTITIES[e]!));
const attr = (attrs: string, name: string) => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m ? fromXml(m[1]!) : '';
};

/** bun test's JUnit XML: every test case, passed, skipped or failed. */
export function readJunit(xml: string): Report {
  const report: Report = { passed: 0, skipped: 0, failures: [] };
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const [attrs, body = ''] = [m[1]!, m[2]];
    const failure = /<(?:failure|error)\b([^>]*)/.exec(body);
    if (failure) {
      const suite = attr(attrs, 'classname');
      const name = attr(attrs, 'name');
      report.failures.push({ file: attr(attrs, 'file'), test: suite ? `${suite} > ${name}` : name, message: attr(failure[1]!, 'message') });
    } else if (/<skipped\b/.test(body)) report.skipped++;
    else report.passed++;
  }
  return report;
}

export type Cause = 'lacks-command' | 'lacks-option' | 'server-behaviour' | 'refused' | 'other';

interface Known {
  cause: Exclude<Cause, 'lacks-command' | 'other'>;
  file: RegExp;
  /** Matched against the test's name and its failure message. */
  match: RegExp;
  why: string;
}

/** Failures whose cause is known and is not the gateway's, each with its reason. */
const KNOWN: Known[] = [
  {
    cause: 'lacks-option',
    file: /\/bitop\.test\.ts$/,
    match: /ERR syntax error, command was: \["bitop","(?:diff|diff1|andor|one)"/,
    why: "BITOP DIFF, DIFF1, ANDOR and ONE are newer servers' operators (Redis 8.2)",
  },
  {
    cause: 'lacks-option',
    file: /\/scan\.test\.ts$/,
    match: /ERR syntax error, command was: \["scan","0","withtype"\]/,
    why: "SCAN ... WITHTYPE is Upstash's own option",
  },
  {
    cause: 'lacks-option',
    file: /\/search\/search\.test\.ts$/,
    match: /ERR unknown type name 'search'/,
    why: "SCAN ... TYPE search lists Upstash's search indexes, which the server has not",
  },
  {
    cause: 'server-behaviour',
    file: /\/copy\.test\.ts$/,
    match: /ERR source and destination objects are the same/,
    why: 'COPY of a key onto itself: the server answers an error, Upstash answers 0',
  },
  {
    cause: 'server-behaviour',
    file: /\/xtrim\.test\.ts$/,
    match: /approximately trim/,
    why: 'XTRIM MAXLEN ~: the server trims whole nodes of 100 entries (stream-node-max-entries), Upstash nearly exactly',
  },
  {
    cause: 'server-behaviour',
    file: /\/xreadgroup\.test\.ts$/,
    match: /NOACK > should return 0 items in PEL/,
    why: 'XREADGROUP ... NOACK creates the consumer on the server, so XINFO CONSUMERS lists it; Upstash lists none',
  },
  {
    cause: 'refused',
    file: /\/p?subscribe\.test\.ts$/,
    match: /./,
    why: 'SUBSCRIBE and PSUBSCRIBE are refused by design (docs/upstash.md): the gateway serves no server-sent events',
  },
];

const UNKNOWN = /^ERR unknown command '([^']+)': the server has no such command/;

export function causeOf(f: Failure): { cause: Cause; why: string } {
  const unknown = UNKNOWN.exec(f.message);
  if (unknown) return { cause: 'lacks-command', why: unknown[1]! };
  const known = KNOWN.find((k) => k.file.test(`/${f.file}`) && (k.match.test(f.test) || k.match.test(f.message)));
  return known ? { cause: known.cause, why: known.why } : { cause: 'other', why: '' };
}

const HEADINGS: Record<Cause, string> = {
  'lacks-command': 'the server lacks the command',
  'lacks-option': 'the server lacks the option',
  'server-behaviour': "the server's own behaviour differs from Upstash's",
  refused: 'refused by design',
  other: 'other (the gateway, until shown otherwise)',
};

/** The tally as lines of text; `other` is the count of failures with no known cause. */
export function tally(report: Report): { text: string; other: number } {
  const groups = new Map<Cause, Failure[]>();
  const reasons = new Map<Cause, Map<string, number>>();
  for (const f of report.failures) {
    const { cause, why } = causeOf(f);
    groups.set(cause, [...(groups.get(cause) ?? []), f]);
    const counts = reasons.get(cause) ?? new Map<string, number>();
    if (why) counts.set(why, (counts.get(why) ?? 0) + 1);
    reasons.set(cause, counts);
  }
  const lines = [`${report.passed} passed, ${report.failures.length} failed${report.skipped ? `, ${report.skipped} skipped` : ''}`];
  for (const cause of Object.keys(HEADINGS) as Cause[]) {
    const failed = groups.get(cause) ?? [];
    lines.push(`  ${HEADINGS[cause]}: ${failed.length}`);
    if (cause === 'lacks-command') {
      const names = [...(reasons.get(cause) ?? new Map<string, number>())].map(([name, n]) => `${name} ×${n}`);
      if (names.length) lines.push(`    ${names.join(', ')}`);
    } else if (cause === 'other') {
      for (const f of failed) lines.push(`    ${f.file}: ${f.test}\n      ${f.message.split('\n')[0]!.slice(0, 300)}`);
    } else for (const [why, n] of reasons.get(cause) ?? []) lines.push(`    ${n} × ${why}`);
  }
  return { text: lines.join('\n'), other: groups.get('other')?.length ?? 0 };
}
