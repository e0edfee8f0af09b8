// regions.json → wrangler.toml: one [env.<region>] per region, written between the two marker
// lines at the end of wrangler.toml; the hand-written part is left exactly as it is. Each region
// gets the Worker `<name>-<region>` and the vars EMQ_REGION, EMQ_REST_URL (its gateway),
// EMQ_HOME_REGIONS (the queue map) and EMQ_REGION_URLS (the gateways of the other regions the
// map names), then regions.json's vars. functions/producer/regions.ts reads them.
// With EMQ_CRONS among regions.json's shared "vars" (one table for every region; a region's own
// is refused), each region also gets [env.<region>.triggers] crons: the expressions of the
// schedules whose queue is homed there (by "queues", else that region), and the top-level
// Worker (no region: every queue is its own) a [triggers] with all of them. The Worker reads
// the same EMQ_CRONS at run time and fires, on a trigger, the schedules homed in its region.
// The table is checked as the Worker checks it (functions/producer/crons.ts), per region.
// The rules are the Worker's own, so a map that passes here is one the Worker accepts: which
// vars are secrets and each var's bounds come from the table (shared/config/variables.ts), the
// URL and region-name checks from its parsers, the queue patterns from queue-patterns.ts.
//   npm run regions                          rewrite the generated part (npm run build runs it)
//   node dist/scripts/regions.js --check     change nothing; exit 1 if wrangler.toml differs from regions.json
//   --regions <file>  --wrangler <file>      other files than regions.json and wrangler.toml at the root
// Exit codes: 0 done or up to date; 1 a bad regions.json or wrangler.toml, or drift under --check; 2 usage.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as parse from '../shared/config/parse.js';
import { ConfigError, REGION_RULE, checkGatewayUrl } from '../shared/config/parse.js';
import { type Variable, variable } from '../shared/config/variables.js';
import { PatternError, checkPattern, queueLookup } from '../functions/producer/queue-patterns.js';
import { parseCrons, triggersOf, type CronSchedule } from '../functions/producer/crons.js';
import { repoRoot } from './repo-root.js';

const BEGIN = '# ---- generated from regions.json by `npm run regions` (scripts/regions.ts), do not edit: change regions.json ----';
const END = '# ---- end of the part generated from regions.json ----';

const VAR_RULE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GENERATED = new Set(['EMQ_REGION', 'EMQ_REST_URL', 'EMQ_HOME_REGIONS', 'EMQ_REGION_URLS']);
const WORKER_NAME_MAX = 63; // Cloudflare's limit on a Worker's name

/** The table's parsers for the kinds a var's text alone decides; a JSON var's shape is its app's to check. */
const CHECKS: Partial<Record<Variable['kind']['type'], (vars: parse.Vars, name: string) => unknown>> = {
  whole: parse.wholeNumber,
  switch: parse.onOff,
  choice: parse.choice,
  duration: parse.duration,
  'node-id': parse.nodeId,
  'node-pool': parse.nodePool,
  'wire-version': parse.wireVersion,
};

type Vars = Record<string, string>;
interface Region {
  name: string;
  restUrl: string;
  vars?: Vars;
}
interface Model {
  vars: Vars;
  regions: Region[];
  queues: Array<[pattern: string, region: string]>;
  /** EMQ_CRONS' schedules, when the shared vars hold it: each Worker's triggers. */
  crons: CronSchedule[] | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => JSON.stringify(v);

class Invalid extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** The table's entry, or undefined for a name it lacks (a var of the deployer's own). */
function entryOf(name: string): Variable | undefined {
  try {
    return variable(name);
  } catch {
    return undefined;
  }
}

function urlProblem(url: unknown): string | undefined {
  if (typeof url !== 'string') return "must be a string: the region gateway's URL";
  if (/\s/.test(url)) return `${show(url)} is not a URL`;
  try {
    checkGatewayUrl(show(url), url); // the Worker's own check of EMQ_REST_URL
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return undefined;
}

function varsProblems(where: string, vars: unknown, problems: string[]): void {
  if (vars === undefined) return;
  if (!isObject(vars)) return void problems.push(`${where}: must be an object of "NAME": "value"`);
  for (const [name, value] of Object.entries(vars)) {
    const at = `${where}.${name}`;
    const entry = entryOf(name);
    if (!VAR_RULE.test(name)) problems.push(`${at}: not a variable name (letters, digits and _)`);
    else if (GENERATED.has(name)) problems.push(`${at}: generated from the region itself; remove it`);
    else if (entry && entry.secret !== false) problems.push(`${at}: a secret, never in wrangler.toml: wrangler secret put ${name} --env <region>`);
    else if (typeof value !== 'string' || !value.isWellFormed()) problems.push(`${at}: the value must be a string (vars are text)`);
    else if (entry) {
      try {
        CHECKS[entry.kind.type]?.({ [name]: value }, name);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems.push(`${at}: ${show(value)} ${err.message.replace(`${name} `, '')}`);
      }
    }
  }
}

/** The map checked whole: every problem found, each naming where it is. */
function validate(map: unknown, workerName: string): Model {
  const problems: string[] = [];
  if (!isObject(map)) throw new Invalid(['must be a JSON object: {"regions": [{"name", "restUrl", "vars"?}], "queues"?: {...}, "vars"?: {...}}']);
  for (const key of Object.keys(map))
    if (!['regions', 'queues', 'vars', '$comment'].includes(key)) problems.push(`${show(key)}: unknown key (expected regions, queues, vars)`);
  varsProblems('vars', map.vars, problems);

  const names = new Set<unknown>();
  if (!Array.isArray(map.regions) || map.regions.length === 0) problems.push('regions: must be a non-empty array of {"name", "restUrl", "vars"?}');
  const regions: unknown[] = Array.isArray(map.regions) ? map.regions : [];
  regions.forEach((r, i) => {
    const at = `regions[${i}]`;
    if (!isObject(r)) return void problems.push(`${at}: must be an object {"name", "restUrl", "vars"?}`);
    for (const key of Object.keys(r))
      if (!['name', 'restUrl', 'vars', '$comment'].includes(key)) problems.push(`${at}: unknown key ${show(key)} (expected name, restUrl, vars)`);
    const { name } = r;
    if (typeof name !== 'string' || !REGION_RULE.test(name)) {
      problems.push(
        `${at}.name: ${show(name)} is not a valid wrangler environment name: lowercase letters and digits in words joined by single '-', starting with a letter (e.g. "eu-west")`,
      );
    } else if (name === 'default') {
      problems.push(`${at}.name: "default" is the top-level Worker's name in npm run build; choose another`);
    } else if (`${workerName}-${name}`.length > WORKER_NAME_MAX) {
      problems.push(`${at}.name: the Worker name "${workerName}-${name}" is longer than ${WORKER_NAME_MAX} characters`);
    } else if (names.has(name)) {
      problems.push(`${at}.name: duplicate region "${name}"`);
    }
    if (typeof name === 'string') names.add(name);
    const bad = urlProblem(r.restUrl);
    if (bad) problems.push(`${at}.restUrl: ${bad}`);
    varsProblems(`${at}.vars`, r.vars, problems);
  });

  const queues = map.queues ?? {};
  if (!isObject(queues)) problems.push('queues: must be an object of "<queue>" | "<stem>.*" | "<prefix>*" | "*": "<region>"');
  else {
    for (const [pattern, region] of Object.entries(queues)) {
      const at = `queues[${show(pattern)}]`;
      try {
        checkPattern(pattern, { rawPrefixes: true }); // as the Worker reads EMQ_HOME_REGIONS
      } catch (err) {
        if (!(err instanceof PatternError)) throw err;
        problems.push(`${at} ${err.message}`);
      }
      if (!names.has(region)) problems.push(`${at}: unknown region ${show(region)} (regions: ${[...names].join(', ')})`);
    }
  }
  if (problems.length) throw new Invalid(problems);
  // every field was checked above
  const model: Model = { vars: (map.vars ?? {}) as Vars, regions: regions as Region[], queues: Object.entries(queues) as Model['queues'], crons: undefined };
  model.crons = cronsOf(model);
  return model;
}

/** EMQ_CRONS as each region's Worker will read it (its payload and delay caps are that region's vars), or undefined when unset. */
function cronsOf({ vars, regions, queues }: Model): CronSchedule[] | undefined {
  const problems: string[] = [];
  regions.forEach((r, i) => {
    if (r.vars?.EMQ_CRONS !== undefined)
      problems.push(`regions[${i}].vars.EMQ_CRONS: one table for every region: put it in the shared "vars" (each schedule fires in its queue's home region)`);
  });
  if (problems.length) throw new Invalid(problems);
  if (vars.EMQ_CRONS === undefined) return undefined;
  let crons: CronSchedule[] = [];
  for (const r of regions) {
    const all = { ...vars, ...(r.vars ?? {}) };
    try {
      crons = parseCrons(all, parse.wholeNumber(all, 'EMQ_MAX_PAYLOAD_BYTES'), parse.duration(all, 'EMQ_MAX_DELAY'));
    } catch (err) {
      throw new Invalid([`vars.${(err as Error).message}${regions.length > 1 ? ` (as region "${r.name}" reads it)` : ''}`]);
    }
  }
  // a queue with no home is every region's own: its schedule would fire in each, into each Valkey
  const home = queueLookup(queues, { rawPrefixes: true }, (pattern) => pattern);
  if (regions.length > 1) {
    crons.forEach((c, i) => {
      if (home(c.queue) === undefined)
        problems.push(
          `vars.EMQ_CRONS[${i}].queue: no entry of "queues" homes it; with several regions a schedule's queue needs a home region, else every region would fire it into its own Valkey`,
        );
    });
  }
  if (problems.length) throw new Invalid(problems);
  return crons;
}

// a TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped too
const tomlString = (s: string) => JSON.stringify(s).replace(/\x7f/g, '\\u007f');

/** The generated part, markers included. */
function generate(model: Model, workerName: string): string {
  const lines = [BEGIN, '# One Worker per region. Secrets per region: wrangler secret put EMQ_TOKENS --env <region> (and EMQ_REST_TOKEN)', ''];
  const homeMap = JSON.stringify(Object.fromEntries(model.queues));
  const home = queueLookup(model.queues, { rawPrefixes: true }, (pattern) => pattern);
  const crons = (schedules: CronSchedule[]) => `crons = [${triggersOf(schedules).map(tomlString).join(', ')}]`;
  // the top-level Worker has no region: every schedule is its own
  if (model.crons) lines.push('[triggers]', crons(model.crons), '');
  for (const r of model.regions) {
    const vars: Vars = { EMQ_REGION: r.name, EMQ_REST_URL: r.restUrl };
    if (model.queues.length) {
      vars.EMQ_HOME_REGIONS = homeMap;
      // only the gateways this Worker may forward to, in regions.json's order
      const homes = new Set(model.queues.map(([, region]) => region));
      const others = model.regions.filter((o) => o.name !== r.name && homes.has(o.name));
      if (others.length) vars.EMQ_REGION_URLS = JSON.stringify(Object.fromEntries(others.map((o) => [o.name, o.restUrl])));
    }
    const extra: Vars = { ...model.vars, ...(r.vars ?? {}) }; // a region's own vars win
    for (const name of Object.keys(extra).sort()) vars[name] = extra[name] as string;
    lines.push(`[env.${r.name}]`, `name = ${tomlString(`${workerName}-${r.name}`)}`, '', `[env.${r.name}.vars]`);
    for (const [name, value] of Object.entries(vars)) lines.push(`${name} = ${tomlString(value)}`);
    lines.push('');
    if (model.crons) lines.push(`[env.${r.name}.triggers]`, crons(model.crons.filter((s) => (home(s.queue) ?? r.name) === r.name)), '');
  }
  lines.push(END);
  return `${lines.join('\n')}\n`;
}

interface Parts {
  head: string;
  tail: string;
}

/** The hand-written part (around the markers) and where the generated part goes. */
function split(toml: string): Parts {
  const lines = toml.split('\n');
  const begins = lines.flatMap((l, i) => (l.trim() === BEGIN ? [i] : []));
  const ends = lines.flatMap((l, i) => (l.trim() === END ? [i] : []));
  if (begins.length === 0 && ends.length === 0) return { head: `${toml.trimEnd()}\n\n`, tail: '' }; // first run: appended
  const [begin, end] = [begins[0], ends[0]];
  if (begins.length !== 1 || ends.length !== 1 || begin === undefined || end === undefined || end < begin) {
    throw new Invalid([`the marker lines must appear once each, in this order:\n  ${BEGIN}\n  ${END}`]);
  }
  const head = lines.slice(0, begin).join('\n');
  return { head: head ? `${head}\n` : '', tail: lines.slice(end + 1).join('\n') };
}

/** What the hand-written part must not do: collide with the generated one. Answers the top-level name. */
function checkHand({ head, tail }: Parts, regionNames: unknown[], withCrons: boolean): string {
  const problems: string[] = [];
  for (const line of `${head}\n${tail}`.split('\n')) {
    const env = /^\s*\[\[?\s*env\.([A-Za-z0-9_-]+)/.exec(line)?.[1];
    if (env && regionNames.includes(env))
      problems.push(`${line.trim()} is written by hand outside the generated part: remove it, regions.json generates [env.${env}]`);
    if (withCrons && /^\s*\[\s*triggers\s*\]/.test(line))
      problems.push(`${line.trim()} is written by hand outside the generated part: remove it, regions.json's vars.EMQ_CRONS generates it`);
  }
  // a key right after the end marker would land in the last generated table
  const first = tail.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (first !== undefined && !first.trim().startsWith('['))
    problems.push(`${show(first.trim())} follows the end marker outside any table: move it above the generated part`);
  const top = head.split(/^\s*\[/m)[0] ?? '';
  const name = /^\s*name\s*=\s*"([a-z0-9][a-z0-9-]*)"\s*(#.*)?$/m.exec(top)?.[1];
  if (!name) problems.push('no top-level name = "<worker>" (lowercase letters, digits, -): each region\'s Worker is named <name>-<region>');
  if (problems.length || !name) throw new Invalid(problems);
  return name;
}

function main(argv: string[]): number {
  const root = repoRoot();
  const usage = 'usage: npm run regions -- [--check] [--regions <regions.json>] [--wrangler <wrangler.toml>]';
  let check = false;
  let regionsFile = join(root, 'regions.json');
  let wranglerFile = join(root, 'wrangler.toml');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = argv[i + 1];
    if (a === '--check') check = true;
    else if ((a === '--regions' || a === '--wrangler') && value) {
      if (a === '--regions') regionsFile = value;
      else wranglerFile = value;
      i++;
    } else {
      console.error(`regions: unexpected ${show(a)}\n${usage}`);
      return 2;
    }
  }
  const shown = (f: string) => relative(process.cwd(), f) || f;
  const fail = (file: string, problems: string[]) => {
    console.error(`regions: ${shown(file)}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  };
  /** Runs a step; its Invalid becomes the file's problems, printed (exit 1). */
  const attempt = <T>(file: string, step: () => T): T | number => {
    try {
      return step();
    } catch (err) {
      if (err instanceof Invalid) return fail(file, err.problems);
      throw err;
    }
  };

  if (!existsSync(wranglerFile)) return fail(wranglerFile, ['not found']);
  if (!existsSync(regionsFile)) return fail(regionsFile, ['not found: it lists the regions, see docs/deployment.md']);
  const toml = readFileSync(wranglerFile, 'utf8');
  let map: unknown;
  try {
    map = JSON.parse(readFileSync(regionsFile, 'utf8'));
  } catch (err) {
    return fail(regionsFile, [`not valid JSON: ${(err as Error).message}`]);
  }
  const hand = attempt(wranglerFile, () => {
    const parts = split(toml);
    const listed = isObject(map) && Array.isArray(map.regions) ? map.regions : [];
    return {
      parts,
      workerName: checkHand(
        parts,
        listed.map((r: unknown) => (isObject(r) ? r.name : undefined)),
        isObject(map) && isObject(map.vars) && map.vars.EMQ_CRONS !== undefined,
      ),
    };
  });
  if (typeof hand === 'number') return hand;
  const model = attempt(regionsFile, () => validate(map, hand.workerName));
  if (typeof model === 'number') return model;

  const want = hand.parts.head + generate(model, hand.workerName) + hand.parts.tail;
  const list = model.regions.map((r) => r.name).join(', ');
  if (want === toml) {
    console.log(`regions: ${shown(wranglerFile)} matches ${shown(regionsFile)} (${list})`);
    return 0;
  }
  if (check) {
    const have = toml.split('\n');
    const line = want.split('\n').findIndex((l, i) => l !== have[i]);
    return fail(wranglerFile, [
      `out of date with ${shown(regionsFile)}: run \`npm run regions\` (first difference at line ${line + 1}: expected ${show(want.split('\n')[line] ?? '')}, found ${show(have[line] ?? '')})`,
    ]);
  }
  writeFileSync(wranglerFile, want);
  console.log(`regions: ${shown(wranglerFile)} rewritten from ${shown(regionsFile)}: [env.*] for ${list}`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
