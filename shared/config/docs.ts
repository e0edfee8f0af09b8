// The documentation made from the table (./variables.ts): docs/configuration.md's table
// and the comments at the top of wrangler.toml (the Worker's vars and secrets), each between
// its two marker lines. scripts/config-docs.ts writes them (`npm run config-docs`, `--check`
// for drift); test/config.test.ts fails when either file differs from what this makes.
import { durationText } from '../duration.js';
import { APPS, VARIABLES, type Variable } from './variables.js';

export const README_BEGIN = '<!-- config:start: generated from shared/config/variables.ts by `npm run config-docs`; do not edit -->';
export const README_END = '<!-- config:end -->';
export const WRANGLER_BEGIN = '# ---- config:start: generated from shared/config/variables.ts by `npm run config-docs`, do not edit ----';
export const WRANGLER_END = '# ---- config:end ----';

const MiB = 1024 * 1024;

/** The kind in words. */
export function kindText(v: Variable): string {
  const k = v.kind;
  switch (k.type) {
    case 'whole': {
      const range = k.max === Number.MAX_SAFE_INTEGER ? `≥ ${k.min}` : `${k.min}-${k.max}`;
      return k.unit === 'count' ? `whole number, ${range}` : `${k.unit}, ${range}`;
    }
    case 'switch':
      return '`1` (on) or `0` (off)';
    case 'text':
      return k.what === 'token' ? (k.minLength ? `token, ${k.minLength}+ characters` : 'token') : k.what === 'path' ? 'file path' : 'host name or address';
    case 'gateway-url':
      return 'https:// URL (http:// only on loopback)';
    case 'valkey-url':
      return 'Valkey URL (`redis://`, `rediss://`, `valkey://`, `valkeys://`)';
    case 'json':
      return `JSON: \`${k.shape}\``;
    case 'scoped-tokens':
      return '`scope:token,...`';
    case 'node-id':
      return 'node id, 0-1023';
    case 'node-pool':
      return 'node-id range, e.g. `512-1023`';
    case 'wire-version':
      return '`echomq:MAJOR.MINOR.PATCH`';
    case 'region':
      return "region name (lowercase words joined by '-')";
    case 'choice':
      return k.values.map(code).join(', ');
    case 'binding':
      return 'Analytics Engine binding (not a var)';
    case 'duration':
      return `duration: a whole number with a unit \`ms\`, \`s\`, \`m\`, \`h\` or \`d\`, up to ${durationText(k.max)} (${k.max / 31_557_600_000} years of 365.25 days)`;
  }
}

/** The default in words, or when it is required. */
export function defaultText(v: Variable): string {
  const d = v.default;
  if (d === undefined) return v.required ? `required ${v.required}` : 'unset';
  if (typeof d === 'boolean') return d ? '`1`' : '`0`';
  if (typeof d === 'string') return `\`${d}\``;
  if (v.kind.type === 'whole' && v.kind.unit === 'bytes' && d % MiB === 0) return `${d} (${d / MiB} MiB)`;
  if (v.kind.type === 'whole' && v.kind.unit === 'seconds' && d % 86_400 === 0) return `${d} (${d / 86_400} days)`;
  return String(d);
}

const secretText = (v: Variable) => (v.secret === true ? 'yes' : v.secret === 'may' ? 'when it holds one' : 'no');
const cell = (s: string) => s.replace(/\|/g, '\\|');
const code = (name: string) => `\`${name}\``;

/** docs/configuration.md's table, markers included. */
export function readmeSection(): string {
  const lines = [
    README_BEGIN,
    'Every variable any part of this project reads, from the one table in',
    `[\`shared/config/variables.ts\`](shared/config/variables.ts). Apps: ${APPS.map((a) => `**${a.app}** ${a.label}`).join('; ')}.`,
    'Each entry point checks its whole configuration before it serves or sends anything: a bad',
    'value stops `emq gateway`, `emq producer` and the CLI with exit 2 and `npm start` with exit 1,',
    'naming the variable, never its value. The Worker cannot refuse to start: it answers every',
    'request `500 misconfigured`, naming the variable. Unset and empty are the same: the default.',
    '',
    '| variable | apps | kind | default | secret | meaning |',
    '| --- | --- | --- | --- | --- | --- |',
    ...VARIABLES.map(
      (v) => `| ${cell(code(v.name))} | ${v.apps.join(', ')} | ${cell(kindText(v))} | ${cell(defaultText(v))} | ${secretText(v)} | ${cell(v.meaning)} |`,
    ),
    README_END,
  ];
  return `${lines.join('\n')}\n`;
}

/** `text` in lines of at most `width`, each after `indent` (the first after `first`). */
function wrap(first: string, indent: string, text: string, width = 100): string[] {
  const out: string[] = [];
  let line = first;
  for (const word of text.split(/\s+/)) {
    if (line.length + 1 + word.length > width && line.trim() !== '#' && line.length > indent.length) {
      out.push(line.trimEnd());
      line = indent;
    }
    line += (line.endsWith(' ') ? '' : ' ') + word;
  }
  out.push(line.trimEnd());
  return out;
}

const plain = (s: string) => s.replace(/`/g, '');

/** The Worker's vars and secrets as wrangler.toml comments, markers included. */
export function wranglerComments(): string {
  const worker = VARIABLES.filter((v) => v.apps.includes('worker'));
  const entry = (v: Variable) => {
    const d = v.default === undefined ? (v.required ? `required ${v.required}` : '') : `default ${defaultText(v)}`;
    const text = plain(`${kindText(v)}${d ? `, ${d}` : ''}: ${v.meaning}`);
    return wrap(`#   ${v.name.padEnd(24)}`, `#${' '.repeat(27)}`, text);
  };
  const lines = [
    WRANGLER_BEGIN,
    "# Vars (per environment, since wrangler does not inherit [vars] into [env.*]; regions.json's",
    '# "vars" go to every region):',
    ...worker.filter((v) => v.secret === false && v.kind.type !== 'binding').flatMap(entry),
    '# Bindings (per environment too: [[env.<region>.analytics_engine_datasets]]):',
    ...worker.filter((v) => v.kind.type === 'binding').flatMap(entry),
    '# Secrets (`wrangler secret put NAME --env <region>`; never in this file):',
    ...worker.filter((v) => v.secret !== false).flatMap(entry),
    WRANGLER_END,
  ];
  return `${lines.join('\n')}\n`;
}

/** `text` with the part between `begin` and `end` (markers included) replaced by `section`; throws unless each marker appears once, in order. */
export function replaceBetween(text: string, begin: string, end: string, section: string): string {
  const lines = text.split('\n');
  const b = lines.flatMap((l, i) => (l.trim() === begin ? [i] : []));
  const e = lines.flatMap((l, i) => (l.trim() === end ? [i] : []));
  if (b.length !== 1 || e.length !== 1 || e[0]! < b[0]!) throw new Error(`the marker lines must appear once each, in this order:\n  ${begin}\n  ${end}`);
  return [...lines.slice(0, b[0]), section.replace(/\n$/, ''), ...lines.slice(e[0]! + 1)].join('\n');
}
