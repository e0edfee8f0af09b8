#!/usr/bin/env node
// regions.json → wrangler.toml: one [env.<region>] per region, written between the two marker
// lines at the end of wrangler.toml; the hand-written part is left exactly as it is. Each region
// gets the Worker `<name>-<region>` and the vars EMQ_REGION, EMQ_REST_URL (its gateway),
// EMQ_HOME_REGIONS (the queue map) and EMQ_REGION_URLS (the gateways of the other regions the
// map names), then regions.json's vars. functions/producer/regions.ts reads them.
//   node scripts/regions.mjs             rewrite the generated part (npm run regions; npm run build runs it)
//   node scripts/regions.mjs --check     change nothing; exit 1 if wrangler.toml differs from regions.json
//   --regions <file>  --wrangler <file>  other files than regions.json and wrangler.toml at the root
// Exit codes: 0 done or up to date; 1 a bad regions.json or wrangler.toml, or drift under --check; 2 usage.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const BEGIN = '# ---- generated from regions.json by `npm run regions` (scripts/regions.mjs), do not edit: change regions.json ----';
const END = '# ---- end of the part generated from regions.json ----';

// lowercase words joined by single '-': a wrangler environment, part of a Worker name, and
// one-to-one with its EMQ_REST_TOKEN_<REGION> secret (regions.ts has the same rule)
const REGION_RULE = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const QUEUE_RULE = /^[A-Za-z0-9._-]{1,128}$/; // shared/keyspace.ts's queue names
const SEGMENTS_RULE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/; // a "<stem>.*" pattern's stem
const VAR_RULE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GENERATED = new Set(['EMQ_REGION', 'EMQ_REST_URL', 'EMQ_HOME_REGIONS', 'EMQ_REGION_URLS']);
const SECRETS = /^(EMQ_TOKENS|EMQ_SOURCES|EMQ_REST_TOKEN(_\w*)?)$/;
const WHOLE_NUMBERS = new Set(['EMQ_MAX_PAYLOAD_BYTES', 'EMQ_MAX_BATCH_BYTES', 'EMQ_REST_TIMEOUT_MS', 'EMQ_DEDUPE_TTL_SECONDS']);
const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;
const WORKER_NAME_MAX = 63; // Cloudflare's limit on a Worker's name

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v) => JSON.stringify(v);

class Invalid extends Error {
  constructor(problems) {
    super(problems.join('\n'));
    this.problems = problems;
  }
}

function urlProblem(url) {
  if (typeof url !== 'string') return "must be a string: the region gateway's URL";
  if (/\s/.test(url) || !URL.canParse(url)) return `${show(url)} is not a URL`;
  const u = new URL(url);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.test(u.hostname))) {
    return `${show(url)} must be https:// (plain http:// only on loopback, for local runs)`;
  }
  if (u.username || u.password || u.search || u.hash) return `${show(url)} must carry no credentials, query or fragment: tokens are secrets (EMQ_REST_TOKEN)`;
  return undefined;
}

function varsProblems(where, vars, problems) {
  if (vars === undefined) return;
  if (!isObject(vars)) return void problems.push(`${where}: must be an object of "NAME": "value"`);
  for (const [name, value] of Object.entries(vars)) {
    const at = `${where}.${name}`;
    if (!VAR_RULE.test(name)) problems.push(`${at}: not a variable name (letters, digits and _)`);
    else if (GENERATED.has(name)) problems.push(`${at}: generated from the region itself; remove it`);
    else if (SECRETS.test(name)) problems.push(`${at}: a secret, never in wrangler.toml: wrangler secret put ${name} --env <region>`);
    else if (typeof value !== 'string' || !value.isWellFormed()) problems.push(`${at}: the value must be a string (vars are text)`);
    else if (WHOLE_NUMBERS.has(name) && !(/^\d+$/.test(value) && Number.isSafeInteger(Number(value)) && Number(value) > 0)) {
      problems.push(`${at}: ${show(value)} is not a positive whole number`);
    }
  }
}

/** The map checked whole: every problem found, each naming where it is. */
function validate(map, workerName) {
  const problems = [];
  if (!isObject(map)) throw new Invalid(['must be a JSON object: {"regions": [{"name", "restUrl", "vars"?}], "queues"?: {...}, "vars"?: {...}}']);
  for (const key of Object.keys(map))
    if (!['regions', 'queues', 'vars', '$comment'].includes(key)) problems.push(`${show(key)}: unknown key (expected regions, queues, vars)`);
  varsProblems('vars', map.vars, problems);

  const names = new Set();
  if (!Array.isArray(map.regions) || map.regions.length === 0) problems.push('regions: must be a non-empty array of {"name", "restUrl", "vars"?}');
  const regions = Array.isArray(map.regions) ? map.regions : [];
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
  if (!isObject(queues)) problems.push('queues: must be an object of "<queue>" | "<prefix>*" | "*": "<region>"');
  else {
    for (const [pattern, region] of Object.entries(queues)) {
      const at = `queues[${show(pattern)}]`;
      // functions/producer/queue-patterns.ts's grammar: "a.*" is one segment under a
      const segment = pattern.endsWith('.*') && SEGMENTS_RULE.test(pattern.slice(0, -2)) && pattern.length <= 128;
      const stem = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
      if (!(pattern === '*' || segment || (!pattern.endsWith('.*') && QUEUE_RULE.test(stem)))) {
        problems.push(
          `${at}: not a queue name, "<stem>.*" (one segment under stem), a prefix ending in *, or *: 1 to 128 letters, digits, '.', '_' and '-' (like EMQ_TOKENS' patterns)`,
        );
      }
      if (!names.has(region)) problems.push(`${at}: unknown region ${show(region)} (regions: ${[...names].join(', ')})`);
    }
  }
  if (problems.length) throw new Invalid(problems);
  return { vars: map.vars ?? {}, regions, queues: Object.entries(queues) };
}

// a TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped too
const tomlString = (s) => JSON.stringify(s).replace(/\x7f/g, '\\u007f');

/** The generated part, markers included. */
function generate(model, workerName) {
  const lines = [BEGIN, '# One Worker per region. Secrets per region: wrangler secret put EMQ_TOKENS --env <region> (and EMQ_REST_TOKEN)', ''];
  const homeMap = JSON.stringify(Object.fromEntries(model.queues));
  for (const r of model.regions) {
    const vars = { EMQ_REGION: r.name, EMQ_REST_URL: r.restUrl };
    if (model.queues.length) {
      vars.EMQ_HOME_REGIONS = homeMap;
      // only the gateways this Worker may forward to, in regions.json's order
      const homes = new Set(model.queues.map(([, region]) => region));
      const others = model.regions.filter((o) => o.name !== r.name && homes.has(o.name));
      if (others.length) vars.EMQ_REGION_URLS = JSON.stringify(Object.fromEntries(others.map((o) => [o.name, o.restUrl])));
    }
    const extra = { ...model.vars, ...(r.vars ?? {}) }; // a region's own vars win
    for (const name of Object.keys(extra).sort()) vars[name] = extra[name];
    lines.push(`[env.${r.name}]`, `name = ${tomlString(`${workerName}-${r.name}`)}`, '', `[env.${r.name}.vars]`);
    for (const [name, value] of Object.entries(vars)) lines.push(`${name} = ${tomlString(value)}`);
    lines.push('');
  }
  lines.push(END);
  return `${lines.join('\n')}\n`;
}

/** The hand-written part (around the markers) and where the generated part goes. */
function split(toml) {
  const lines = toml.split('\n');
  const begins = lines.flatMap((l, i) => (l.trim() === BEGIN ? [i] : []));
  const ends = lines.flatMap((l, i) => (l.trim() === END ? [i] : []));
  if (begins.length === 0 && ends.length === 0) return { head: `${toml.trimEnd()}\n\n`, tail: '' }; // first run: appended
  if (begins.length !== 1 || ends.length !== 1 || ends[0] < begins[0]) {
    throw new Invalid([`the marker lines must appear once each, in this order:\n  ${BEGIN}\n  ${END}`]);
  }
  const head = lines.slice(0, begins[0]).join('\n');
  return { head: head ? `${head}\n` : '', tail: lines.slice(ends[0] + 1).join('\n') };
}

/** What the hand-written part must not do: collide with the generated one. Answers the top-level name. */
function checkHand({ head, tail }, regionNames) {
  const problems = [];
  for (const line of `${head}\n${tail}`.split('\n')) {
    const env = /^\s*\[\[?\s*env\.([A-Za-z0-9_-]+)/.exec(line)?.[1];
    if (env && regionNames.includes(env))
      problems.push(`${line.trim()} is written by hand outside the generated part: remove it, regions.json generates [env.${env}]`);
  }
  // a key right after the end marker would land in the last generated table
  const first = tail.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (first !== undefined && !first.trim().startsWith('['))
    problems.push(`${show(first.trim())} follows the end marker outside any table: move it above the generated part`);
  const top = head.split(/^\s*\[/m)[0];
  const name = /^\s*name\s*=\s*"([a-z0-9][a-z0-9-]*)"\s*(#.*)?$/m.exec(top)?.[1];
  if (!name) problems.push('no top-level name = "<worker>" (lowercase letters, digits, -): each region\'s Worker is named <name>-<region>');
  if (problems.length) throw new Invalid(problems);
  return name;
}

function main(argv) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const usage = 'usage: node scripts/regions.mjs [--check] [--regions <regions.json>] [--wrangler <wrangler.toml>]';
  let check = false;
  let regionsFile = join(root, 'regions.json');
  let wranglerFile = join(root, 'wrangler.toml');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--check') check = true;
    else if ((a === '--regions' || a === '--wrangler') && argv[i + 1]) {
      if (a === '--regions') regionsFile = argv[++i];
      else wranglerFile = argv[++i];
    } else {
      console.error(`regions: unexpected ${show(a)}\n${usage}`);
      return 2;
    }
  }
  const shown = (f) => relative(process.cwd(), f) || f;
  const fail = (file, problems) => {
    console.error(`regions: ${shown(file)}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  };

  if (!existsSync(wranglerFile)) return fail(wranglerFile, ['not found']);
  if (!existsSync(regionsFile)) return fail(regionsFile, ['not found: it lists the regions, see docs/deployment.md']);
  const toml = readFileSync(wranglerFile, 'utf8');
  let map;
  try {
    map = JSON.parse(readFileSync(regionsFile, 'utf8'));
  } catch (err) {
    return fail(regionsFile, [`not valid JSON: ${err.message}`]);
  }
  let parts;
  let workerName;
  try {
    parts = split(toml);
    const names = Array.isArray(map?.regions) ? map.regions.map((r) => r?.name) : [];
    workerName = checkHand(parts, names);
  } catch (err) {
    if (err instanceof Invalid) return fail(wranglerFile, err.problems);
    throw err;
  }
  let model;
  try {
    model = validate(map, workerName);
  } catch (err) {
    if (err instanceof Invalid) return fail(regionsFile, err.problems);
    throw err;
  }
  const want = parts.head + generate(model, workerName) + parts.tail;
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
