// Configuration: the one table of variables (shared/config/variables.ts) covers every EMQ_*
// name the code reads; its parsers refuse bad values naming the variable, never the value;
// every entry point refuses a bad value before it serves or sends anything; and docs/configuration.md's
// Configuration section and wrangler.toml's comments are what the table makes.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { README_BEGIN, README_END, WRANGLER_BEGIN, WRANGLER_END, readmeSection, replaceBetween, wranglerComments } from '../shared/config/docs.js';
import * as parse from '../shared/config/parse.js';
import { VARIABLES, variable } from '../shared/config/variables.js';
import { TTL_MAX_SECONDS } from '../shared/enqueue-once.js';
import { SCHEDULE_DELAY_MAX_MS } from '../shared/schedule.js';
import { DEFAULT_WIRE_VERSION } from '../shared/fence.js';
import { producerFor } from '../functions/producer/worker.js';
import { emq } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'hunter2-pasted-in-the-wrong-variable';
const TOKEN = 'config-test-token-0123456789';
const TOKENS = JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]);

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(tsx?|mjs|toml)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('the table of variables', () => {
  // names in the code that are not variables: the caps' prefixes (functions/http/limits.ts
  // builds <PREFIX>_HEADERS_TIMEOUT_MS...) and the EMQ_REST_TOKEN_<REGION> family's stem
  const NOT_VARIABLES = new Set(['EMQ_GATEWAY', 'EMQ_PRODUCER', 'EMQ_CONSOLE', 'EMQ_GATEWAY_', 'EMQ_PRODUCER_', 'EMQ_CONSOLE_', 'EMQ_REST_TOKEN_']);

  it('holds every EMQ_* name the code reads (functions, shared, cli, scripts, client, soak, bench, wrangler.toml)', () => {
    const found = new Map<string, string>();
    for (const file of [...['functions', 'shared', 'cli', 'scripts', 'client', 'soak', 'bench'].flatMap((d) => sources(d)), 'wrangler.toml']) {
      if (file === join('shared', 'config', 'variables.ts')) continue;
      for (const [name] of readFileSync(join(root, file), 'utf8').matchAll(/EMQ_[A-Z0-9_]+/g)) if (!found.has(name)) found.set(name, file);
    }
    expect(found.size).toBeGreaterThan(25);
    const missing = [...found].filter(
      ([name]) => !NOT_VARIABLES.has(name) && !VARIABLES.some((v) => v.name === name) && !/^EMQ_REST_TOKEN_[A-Z0-9_]+$/.test(name),
    );
    expect(
      missing.map(([name, file]) => `${name} (${file})`),
      'add them to shared/config/variables.ts',
    ).toEqual([]);
  });

  it('names each variable once, with apps, a meaning, and a default its own parser accepts', () => {
    const names = VARIABLES.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of ['VALKEY_URL', 'HOST', 'PORT']) expect(names).toContain(name);
    for (const v of VARIABLES) {
      expect(v.apps.length, v.name).toBeGreaterThan(0);
      expect(v.meaning.length, v.name).toBeGreaterThan(10);
      if (v.kind.type === 'whole') {
        expect(v.default, v.name).toBeTypeOf('number');
        expect(parse.wholeNumber({ [v.name]: String(v.default) }, v.name)).toBe(v.default);
        expect(parse.wholeNumber({}, v.name)).toBe(v.default);
      }
    }
    expect(variable('EMQ_DEDUPE_TTL_SECONDS').kind).toMatchObject({ max: TTL_MAX_SECONDS });
    expect(variable('EMQ_MAX_DELAY').kind).toMatchObject({ max: SCHEDULE_DELAY_MAX_MS });
    expect(variable('EMQ_WIRE_VERSION').default).toBe(DEFAULT_WIRE_VERSION);
    expect(variable('EMQ_REST_TOKEN_EU_WEST').name).toBe('EMQ_REST_TOKEN_<REGION>');
    expect(() => variable('EMQ_NOT_A_VARIABLE')).toThrow(/not in the table/);
  });
});

describe('the parsers refuse a bad value naming the variable, never the value', () => {
  const cases: Array<[string, (vars: parse.Vars) => unknown, string, RegExp]> = [
    ['whole number', (v) => parse.wholeNumber(v, 'EMQ_MAX_PAYLOAD_BYTES'), SECRET, /^EMQ_MAX_PAYLOAD_BYTES is not a whole number from 1 to/],
    ['whole number: zero', (v) => parse.wholeNumber(v, 'EMQ_MAX_BATCH_BYTES'), '0', /^EMQ_MAX_BATCH_BYTES is not a whole number/],
    ['whole number: above the bound', (v) => parse.wholeNumber(v, 'PORT'), '65536', /^PORT is not a whole number from 0 to 65535$/],
    ['whole number: a fraction', (v) => parse.wholeNumber(v, 'EMQ_REST_TIMEOUT_MS'), '1.5', /^EMQ_REST_TIMEOUT_MS is not a whole number/],
    ['switch', (v) => parse.onOff(v, 'EMQ_GATEWAY_QUERY_TOKEN'), SECRET, /^EMQ_GATEWAY_QUERY_TOKEN is not 1 \(on\) or 0 \(off\)$/],
    ['token too short', (v) => parse.text(v, 'EMQ_DEV_TOKEN'), 'short-secret', /^EMQ_DEV_TOKEN is shorter than 16 characters$/],
    ['gateway URL: not a URL', (v) => parse.gatewayUrl(v, 'EMQ_REST_URL'), SECRET, /^EMQ_REST_URL is not a URL$/],
    [
      'gateway URL: plain http beyond loopback',
      (v) => parse.gatewayUrl(v, 'EMQ_REST_URL'),
      `http://${SECRET}.example`,
      /^EMQ_REST_URL must be an https:\/\/ URL/,
    ],
    ['gateway URL: credentials', (v) => parse.gatewayUrl(v, 'EMQ_REST_URL'), `https://u:${SECRET}@gw.example`, /^EMQ_REST_URL must carry no credentials/],
    ['Valkey URL', (v) => parse.valkeyUrl(v, 'VALKEY_URL'), `http://u:${SECRET}@host`, /^VALKEY_URL is not a Valkey URL/],
    ['JSON', (v) => parse.jsonText(v, 'EMQ_HOME_REGIONS'), `{${SECRET}`, /^EMQ_HOME_REGIONS is not valid JSON/],
    ['JSON object', (v) => parse.jsonObject(v, 'EMQ_REGION_URLS'), `["${SECRET}"]`, /^EMQ_REGION_URLS must be a JSON object$/],
    ['node id', (v) => parse.nodeId(v, 'EMQ_NODE_ID'), '1024', /^EMQ_NODE_ID is not a node id/],
    ['node pool', (v) => parse.nodePool(v, 'EMQ_NODE_IDS'), '9-3', /^EMQ_NODE_IDS must be a node id or a range/],
    ['wire version', (v) => parse.wireVersion(v, 'EMQ_WIRE_VERSION'), SECRET, /^EMQ_WIRE_VERSION is not a wire version/],
    ['region', (v) => parse.region(v, 'EMQ_REGION'), 'US_EAST', /^EMQ_REGION is not a region name/],
    ['duration: no unit', (v) => parse.duration(v, 'EMQ_MAX_DELAY'), '86400', /^EMQ_MAX_DELAY is not a duration/],
    ['duration: beyond its bound', (v) => parse.duration(v, 'EMQ_MAX_DELAY'), '4000d', /^EMQ_MAX_DELAY must be from 1ms to/],
  ];
  it.each(cases)('%s', (_, read, value, message) => {
    const name = /^\^?([A-Z_]+)/.exec(message.source)![1]!;
    let error: unknown;
    try {
      read({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(parse.ConfigError);
    expect((error as parse.ConfigError).variable).toBe(name);
    expect((error as Error).message).toMatch(message);
    if (value.length >= 4) expect((error as Error).message).not.toContain(value); // '0' is in any text
    if (value.length > 6) expect((error as Error).message).not.toContain(SECRET);
  });

  it('unset and empty are the default', () => {
    expect(parse.wholeNumber({ EMQ_GATEWAY_PORT: '' }, 'EMQ_GATEWAY_PORT')).toBe(8079);
    expect(parse.onOff({}, 'EMQ_GATEWAY_QUERY_TOKEN')).toBe(false);
    expect(parse.text({ HOST: '' }, 'HOST')).toBe('127.0.0.1');
    expect(parse.nodePool({}, 'EMQ_NODE_IDS')).toEqual([0, 1023]);
    expect(parse.wireVersion({ EMQ_WIRE_VERSION: '' }, 'EMQ_WIRE_VERSION')).toBe(DEFAULT_WIRE_VERSION);
    expect(parse.nodeId({}, 'EMQ_NODE_ID')).toBeUndefined();
    expect(parse.duration({}, 'EMQ_MAX_DELAY')).toBe(365 * 86_400_000);
    expect(parse.duration({ EMQ_MAX_DELAY: '90m' }, 'EMQ_MAX_DELAY')).toBe(5_400_000);
  });

  it('a parser of another kind than the table says is a programming error', () => {
    expect(() => parse.onOff({}, 'PORT')).toThrow(/PORT is a whole in the table, not a switch/);
  });
});

describe('the Worker cannot refuse to start: a bad value answers 500 misconfigured, naming the variable', () => {
  it.each([
    ['EMQ_REST_TIMEOUT_MS', SECRET],
    ['EMQ_MAX_BATCH_BYTES', SECRET],
    ['EMQ_REST_URL', `http://${SECRET}.example`],
    ['EMQ_CRONS', JSON.stringify([{ name: 'n', cron: '@hourly', queue: 'q', payload: SECRET }])],
  ])('%s', async (name, value) => {
    const env = { EMQ_TOKENS: TOKENS, EMQ_REST_URL: 'http://127.0.0.1:1', EMQ_REST_TOKEN: 'producer-token-0123456789', [name]: value };
    const res = await producerFor(env).fetch(
      new Request('http://producer/v1/queues/q/jobs', { method: 'POST', body: 'x', headers: { Authorization: `Bearer ${TOKEN}` } }),
      env,
    );
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'misconfigured' });
    expect(text).toContain(name);
    expect(text).not.toContain(SECRET);
  });
});

describe('every entry point refuses a bad value before it serves or sends anything', () => {
  const refused = (run: { code: number | null; stdout: string; stderr: string }, name: string, value: string) => {
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe(''); // never printed a URL: never listened
    expect(run.stderr).toContain(name);
    if (value.length >= 4) expect(run.stderr).not.toContain(value); // '0' would be found in any text
  };

  it.each([
    ['EMQ_GATEWAY_MAX_BODY', SECRET],
    ['EMQ_GATEWAY_TIMEOUT_MS', '0'],
    ['EMQ_GATEWAY_QUERY_TOKEN', SECRET],
    ['EMQ_WIRE_VERSION', SECRET],
    ['VALKEY_URL', `http://u:${SECRET}@nowhere`],
    ['EMQ_GATEWAY_TOKENS', `producer:${SECRET.slice(0, 10)}`],
  ])('emq gateway: a bad %s exits 2', async (name, value) => {
    refused(
      await emq(['gateway'], '', { VALKEY_URL: 'redis://127.0.0.1:1', EMQ_GATEWAY_TOKENS: `producer:${TOKEN}`, EMQ_GATEWAY_PORT: '0', [name]: value }),
      name,
      value,
    );
  });

  it.each([
    ['EMQ_MAX_BATCH_BYTES', SECRET],
    ['EMQ_DEDUPE_TTL_SECONDS', '0'],
    ['EMQ_NODE_IDS', SECRET],
    ['EMQ_PRODUCER_MAX_CONNECTIONS', SECRET],
    ['EMQ_REST_URL', `http://${SECRET}.example`],
    ['EMQ_TOKENS', JSON.stringify([{ token: 'short-secret', queues: ['*'], rawPrefixes: true }])],
    ['EMQ_CRONS', JSON.stringify([{ name: 'n', cron: '* * * * * *', queue: 'q', payload: SECRET }])],
  ])('emq producer: a bad %s exits 2', async (name, value) => {
    const env = { EMQ_TOKENS: TOKENS, EMQ_REST_URL: 'http://127.0.0.1:1', EMQ_REST_TOKEN: 'producer-token-0123456789', PORT: '0', [name]: value };
    refused(await emq(['producer'], '', env), name, value.includes('short-secret') ? 'short-secret' : value.includes(SECRET) ? SECRET : value);
  });

  it.each([
    [['enqueue', 'q'], 'EMQ_WIRE_VERSION', SECRET],
    [['enqueue', 'q'], 'VALKEY_URL', `http://u:${SECRET}@nowhere`],
    [['enqueue', 'q'], 'EMQ_NODE_ID', '4096'],
    [['id'], 'EMQ_NODE_IDS', SECRET],
    [['id'], 'EMQ_NODE_ID', SECRET],
  ])('emq %j: a bad %s exits 2', async (args, name, value) => {
    refused(await emq(args, 'payload', { VALKEY_URL: 'redis://127.0.0.1:1', [name]: value }), name, value);
  });

  /** npm start's program (what `npm start` runs after `npm run build:node`), as a process. */
  function devRun(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(root, 'dist', 'scripts', 'dev.js')], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      });
    });
  }

  it.each([
    ['EMQ_DEV_TOKEN', 'short-dev-tok'],
    ['PORT', SECRET],
    ['EMQ_MAX_PAYLOAD_BYTES', SECRET],
    ['EMQ_GATEWAY_MAX_PIPELINE', SECRET],
    ['EMQ_HOME_REGIONS', `{${SECRET}`],
    ['VALKEY_URL', `http://u:${SECRET}@nowhere`],
    ['EMQ_CRONS', JSON.stringify([{ name: 'n', cron: '0 0 * * 0', queue: 'q', payload: SECRET }])],
  ])('npm start: a bad %s exits 1 promptly, before it starts anything', async (name, value) => {
    const run = await devRun({ [name]: value });
    expect(run.code, run.stderr).toBe(1);
    expect(run.ms).toBeLessThan(10_000);
    expect(run.stdout).toBe(''); // not even a Valkey started (or stopped)
    expect(run.stderr).toMatch(new RegExp(`^npm start: ${name}`));
    expect(run.stderr).not.toContain(value);
    expect(run.stderr).not.toContain(SECRET);
  });
});

describe('the docs are what the table makes (npm run config-docs)', () => {
  const readme = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
  const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8');

  it("docs/configuration.md's table and wrangler.toml's comments match the table", () => {
    expect(replaceBetween(readme, README_BEGIN, README_END, readmeSection()), 'run npm run config-docs').toBe(readme);
    expect(replaceBetween(toml, WRANGLER_BEGIN, WRANGLER_END, wranglerComments()), 'run npm run config-docs').toBe(toml);
    for (const v of VARIABLES) expect(readme).toContain(`| \`${v.name}\` |`);
    for (const v of VARIABLES.filter((v) => v.apps.includes('worker'))) expect(toml).toContain(`#   ${v.name} `);
  });

  it('--check passes on the repository, and a hand edit between the markers is drift', () => {
    const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'config-docs.js'), '--check'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const edited = toml.replace('one REST request', 'one REST call');
    expect(edited).not.toBe(toml);
    expect(replaceBetween(edited, WRANGLER_BEGIN, WRANGLER_END, wranglerComments())).toBe(toml);
    expect(() => replaceBetween(toml.replace(WRANGLER_END, ''), WRANGLER_BEGIN, WRANGLER_END, '')).toThrow(/marker lines/);
  });
});
