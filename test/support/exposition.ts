// A strict parser of Prometheus's text exposition format 0.0.4 (written here: the npm parser
// there is, parse-prometheus-text-format, has had no release in years). It throws on
// anything the format does not allow: a bad metric or label name, a label value with an
// escape other than \\ \" \n, a value that is not a float, a TYPE after its samples or twice,
// a family's samples not in one group, a series twice, and histograms whose buckets are not
// cumulative, lack +Inf, or disagree with _count.

export type Labels = Record<string, string>;
export interface Sample {
  name: string;
  labels: Labels;
  value: number;
}
export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
}

const METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A value as Go's strconv.ParseFloat reads it (the format's rule): decimal, or NaN and [+-]Inf(inity) in any case. */
function float(text: string, where: string): number {
  const special = /^([-+]?)(inf|infinity|nan)$/i.exec(text);
  if (special) {
    if (special[2]!.toLowerCase() === 'nan') {
      if (special[1]) throw new Error(`${where}: a signed NaN`);
      return Number.NaN;
    }
    return special[1] === '-' ? -Infinity : Infinity;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: ${JSON.stringify(text)} is not a float`);
  return Number(text);
}

/** The family a sample belongs to: its own name, or the histogram/summary it is a part of. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const t = families.get(base)?.type;
      if (t === 'histogram' || (t === 'summary' && suffix !== '_bucket')) return base;
    }
  }
  return name;
}

function parseLabels(text: string, at: { i: number }, where: string): Labels {
  const labels: Labels = {};
  // at.i is just past '{'
  for (;;) {
    if (text[at.i] === '}') {
      at.i++;
      return labels;
    }
    const eq = text.indexOf('=', at.i);
    if (eq < 0) throw new Error(`${where}: a label without '='`);
    const name = text.slice(at.i, eq);
    if (!LABEL.test(name) || name.startsWith('__')) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label ${name}'s value is not quoted`);
    let value = '';
    let i = eq + 2;
    for (; ; i++) {
      const ch = text[i];
      if (ch === undefined) throw new Error(`${where}: unterminated label value`);
      if (ch === '"') break;
      if (ch === '\\') {
        const next = text[++i];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new Error(`${where}: bad escape \\${next ?? ''}`);
      } else value += ch;
    }
    labels[name] = value;
    at.i = i + 1;
    if (text[at.i] === ',') at.i++;
    else if (text[at.i] !== '}') throw new Error(`${where}: expected ',' or '}' after label ${name}`);
  }
}

export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const closed = new Set<string>(); // families whose group of lines has ended
  let current: string | undefined;
  const enter = (family: string, where: string) => {
    if (family === current) return;
    if (closed.has(family)) throw new Error(`${where}: ${family}'s lines are not in one group`);
    if (current !== undefined) closed.add(current);
    current = family;
  };
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, n) => {
      const where = `line ${n + 1}`;
      if (line === '') return;
      if (line.startsWith('#')) {
        const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
        if (!m) return; // a comment
        const [, kind, name, rest] = m as unknown as [string, string, string, string];
        if (!METRIC.test(name)) throw new Error(`${where}: bad metric name ${JSON.stringify(name)}`);
        enter(name, where);
        const family = families.get(name) ?? { name, type: 'untyped' as const, help: undefined, samples: [] };
        families.set(name, family);
        if (kind === 'TYPE') {
          if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${JSON.stringify(rest)}`);
          if (family.samples.length > 0) throw new Error(`${where}: TYPE of ${name} after its samples`);
          if ((family as { typed?: boolean }).typed) throw new Error(`${where}: TYPE of ${name} twice`);
          (family as { typed?: boolean }).typed = true;
          family.type = rest as Family['type'];
        } else {
          if (family.help !== undefined) throw new Error(`${where}: HELP of ${name} twice`);
          if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`${where}: bad escape in HELP`);
          family.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
        }
        return;
      }
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
      if (!m) throw new Error(`${where}: not a sample: ${JSON.stringify(line.slice(0, 80))}`);
      const name = m[1]!;
      const at = { i: name.length };
      let labels: Labels = {};
      if (line[at.i] === '{') {
        at.i++;
        labels = parseLabels(line, at, where);
      }
      const fields = line.slice(at.i).split(/[ \t]+/);
      if (fields[0] !== '' || fields.length < 2 || fields.length > 3) throw new Error(`${where}: expected ' value [timestamp]' after the series`);
      const value = float(fields[1]!, where);
      if (fields[2] !== undefined && !/^-?\d+$/.test(fields[2])) throw new Error(`${where}: bad timestamp`);
      const familyName = familyOf(name, families);
      enter(familyName, where);
      const family = families.get(familyName) ?? { name: familyName, type: 'untyped' as const, help: undefined, samples: [] };
      families.set(familyName, family);
      const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
      if (seen.has(key)) throw new Error(`${where}: series ${key} twice`);
      seen.add(key);
      if (family.type === 'counter' && !(value >= 0)) throw new Error(`${where}: counter ${name} is ${value}`);
      family.samples.push({ name, labels, value });
    });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
      entry.buckets.push([float(le, f.name), s.value]);
    } else if (s.name === `${f.name}_sum`) entry.sum = s.value;
    else if (s.name === `${f.name}_count`) entry.count = s.value;
    else throw new Error(`${f.name}: ${s.name} is not part of a histogram`);
  }
  for (const [key, { buckets, sum, count }] of series) {
    if (sum === undefined || count === undefined) throw new Error(`${f.name}${key}: no _sum or _count`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0])) throw new Error(`${f.name}${key}: le not ascending`);
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    const last = buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (last[1] !== count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} but _count ${count}`);
  }
}

/** The value of the series `name` with exactly `labels` (0 when absent: a counter not yet moved). */
export function seriesValue(families: Map<string, Family>, name: string, labels: Labels = {}): number {
  const family = families.get(familyOf(name, families)) ?? families.get(name);
  const want = JSON.stringify(Object.entries(labels).sort());
  const s = family?.samples.find((x) => x.name === name && JSON.stringify(Object.entries(x.labels).sort()) === want);
  return s?.value ?? 0;
}
