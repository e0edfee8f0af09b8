// regions.json → wrangler.toml: scripts/regions.ts, compiled (pretest builds dist/), run as `npm run regions` runs it, on files
// in a temporary directory, with wrangler's own config reader saying which environments and
// vars came out. Then the Worker's side: regionsFrom (functions/producer/regions.ts) reading them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import './workers/offline-env.js';
import { regionsFrom } from '../functions/producer/regions.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const script = join(root, 'dist', 'scripts', 'regions.js');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// the hand-written part: the script must leave every byte of it
const TOP = `# hand-written: the top of wrangler.toml
name = "echomq-producer"
main = "${join(root, 'functions', 'producer', 'worker.ts')}"
compatibility_date = "2026-05-03"
workers_dev = false

[vars]
EMQ_MAX_PAYLOAD_BYTES = "1048576"
`;

const US = 'https://emq-gateway.us-east.example';
const EU = 'https://emq-gateway.eu-west.example';
const AP = 'https://emq-gateway.ap-south.example:8443/base';
const MAP = {
  vars: { EMQ_MAX_PAYLOAD_BYTES: '1048576', EMQ_REST_TIMEOUT_MS: '4000' },
  regions: [
    { name: 'us-east', restUrl: US },
    { name: 'eu-west', restUrl: EU, vars: { EMQ_REST_TIMEOUT_MS: '2500', EMQ_NOTE: 'quote " backslash \\ tab \t' } },
    { name: 'ap-south', restUrl: AP },
  ],
  queues: { billing: 'us-east', 'tenant-eu.*': 'eu-west', 'tenant-eu.vip': 'ap-south' },
};

/** A directory holding a regions.json and a wrangler.toml. */
function project(map: unknown, toml = TOP): string {
  const dir = mkdtempSync(join(tmpdir(), 'emq-regions-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'regions.json'), typeof map === 'string' ? map : JSON.stringify(map, null, 2));
  writeFileSync(join(dir, 'wrangler.toml'), toml);
  return dir;
}

function regions(dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [script, '--regions', join(dir, 'regions.json'), '--wrangler', join(dir, 'wrangler.toml'), ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}
const tomlOf = (dir: string) => readFileSync(join(dir, 'wrangler.toml'), 'utf8');

async function wrangler() {
  const w = await import('wrangler');
  return {
    envs: (dir: string) => Object.keys(w.experimental_readRawConfig({ config: join(dir, 'wrangler.toml') }).rawConfig.env ?? {}),
    env: (dir: string, env: string) => w.unstable_readConfig({ config: join(dir, 'wrangler.toml'), env }, { hideWarnings: true }),
  };
}

describe('scripts/regions.ts: regions.json → wrangler.toml', () => {
  it("the repository's wrangler.toml matches its regions.json (--check)", () => {
    const r = spawnSync(process.execPath, [script, '--check'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/matches regions\.json/);
  });

  it('generates exactly one environment per region, with its name and vars, and leaves the hand-written top alone', async () => {
    const dir = project(MAP);
    const first = regions(dir);
    expect(first.err).toBe('');
    expect(first.status).toBe(0);
    const toml = tomlOf(dir);
    expect(toml.startsWith(TOP)).toBe(true);
    expect(toml).toMatch(/^# ---- generated from regions\.json .*do not edit.*\n[^]*\n# ---- end of the part generated from regions\.json ----\n$/m);

    const w = await wrangler();
    expect(w.envs(dir)).toEqual(['us-east', 'eu-west', 'ap-south']);
    const home = JSON.stringify(MAP.queues);
    const expected: Record<string, Record<string, string>> = {
      'us-east': {
        EMQ_REGION: 'us-east',
        EMQ_REST_URL: US,
        EMQ_HOME_REGIONS: home,
        EMQ_REGION_URLS: JSON.stringify({ 'eu-west': EU, 'ap-south': AP }),
        EMQ_MAX_PAYLOAD_BYTES: '1048576',
        EMQ_REST_TIMEOUT_MS: '4000',
      },
      'eu-west': {
        EMQ_REGION: 'eu-west',
        EMQ_REST_URL: EU,
        EMQ_HOME_REGIONS: home,
        EMQ_REGION_URLS: JSON.stringify({ 'us-east': US, 'ap-south': AP }),
        EMQ_MAX_PAYLOAD_BYTES: '1048576',
        EMQ_NOTE: 'quote " backslash \\ tab \t',
        EMQ_REST_TIMEOUT_MS: '2500', // the region's own var wins over the shared one
      },
      'ap-south': {
        EMQ_REGION: 'ap-south',
        EMQ_REST_URL: AP,
        EMQ_HOME_REGIONS: home,
        EMQ_REGION_URLS: JSON.stringify({ 'us-east': US, 'eu-west': EU }),
        EMQ_MAX_PAYLOAD_BYTES: '1048576',
        EMQ_REST_TIMEOUT_MS: '4000',
      },
    };
    for (const [env, vars] of Object.entries(expected)) {
      const config = w.env(dir, env);
      expect(config.name).toBe(`echomq-producer-${env}`);
      expect(config.vars).toEqual(vars);
      expect(config.compatibility_date).toBe('2026-05-03'); // inherited from the top
      // the Worker reads what was generated: every region sends a queue to the same home
      const read = regionsFrom({ ...(config.vars as Record<string, string>), EMQ_REST_TOKEN: 'producer-token-0123456789' });
      expect(read.local).toBe(env);
      expect(['billing', 'tenant-eu.x', 'tenant-eu.vip', 'other'].map((q) => read.homeOf(q))).toEqual(['us-east', 'eu-west', 'ap-south', env]);
      expect(read.gatewayOf('ap-south').url).toBe(AP);
    }

    const again = regions(dir);
    expect(again.status).toBe(0);
    expect(again.out).toMatch(/matches/);
    expect(tomlOf(dir)).toBe(toml);
    expect(regions(dir, '--check').status).toBe(0);
  });

  it('without a queue map: no EMQ_HOME_REGIONS or EMQ_REGION_URLS, every queue stays local', async () => {
    const dir = project({ regions: [{ name: 'solo', restUrl: 'http://127.0.0.1:8079' }] });
    expect(regions(dir).status).toBe(0);
    const w = await wrangler();
    expect(w.envs(dir)).toEqual(['solo']);
    expect(w.env(dir, 'solo').vars).toEqual({ EMQ_REGION: 'solo', EMQ_REST_URL: 'http://127.0.0.1:8079' });
  });

  it('--check catches drift either way (a hand edit in the generated part, a changed regions.json) and changes nothing', () => {
    const dir = project(MAP);
    expect(regions(dir).status).toBe(0);
    const good = tomlOf(dir);

    const edited = good.replace(`EMQ_REST_URL = "${EU}"`, 'EMQ_REST_URL = "https://elsewhere.example"');
    writeFileSync(join(dir, 'wrangler.toml'), edited);
    const drift = regions(dir, '--check');
    expect(drift.status).toBe(1);
    expect(drift.err).toMatch(
      /wrangler\.toml:\n {2}- out of date with regions\.json: run `npm run regions` \(first difference at line \d+: expected "EMQ_REST_URL = \\"https:\/\/emq-gateway\.eu-west\.example\\"", found "EMQ_REST_URL = \\"https:\/\/elsewhere\.example\\""\)/,
    );
    expect(tomlOf(dir)).toBe(edited);
    expect(regions(dir).status).toBe(0);
    expect(tomlOf(dir)).toBe(good);

    // a region added to regions.json is drift until generated; removed, its environment goes
    writeFileSync(join(dir, 'regions.json'), JSON.stringify({ ...MAP, regions: [...MAP.regions, { name: 'sa-east', restUrl: 'https://sa.example' }] }));
    expect(regions(dir, '--check').status).toBe(1);
    expect(regions(dir).status).toBe(0);
    expect(tomlOf(dir)).toContain('[env.sa-east]\nname = "echomq-producer-sa-east"');
    writeFileSync(join(dir, 'regions.json'), JSON.stringify(MAP));
    expect(regions(dir, '--check').status).toBe(1);
    expect(regions(dir).status).toBe(0);
    expect(tomlOf(dir)).toBe(good);

    // the hand-written part is not drift: edits there stay
    const hand = good.replace('workers_dev = false\n', 'workers_dev = false\nlogpush = true\n');
    writeFileSync(join(dir, 'wrangler.toml'), hand);
    expect(regions(dir, '--check').status).toBe(0);
    expect(regions(dir).status).toBe(0);
    expect(tomlOf(dir)).toBe(hand);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    [
      'an unknown region in the queue map',
      { ...MAP, queues: { billing: 'us-west' } },
      /queues\["billing"\]: unknown region "us-west" \(regions: us-east, eu-west, ap-south\)/,
    ],
    ['a URL that is not one', { regions: [{ name: 'us-east', restUrl: 'emq-gateway.example' }] }, /regions\[0\]\.restUrl: "emq-gateway\.example" is not a URL/],
    [
      'plain http off loopback',
      { regions: [{ name: 'us-east', restUrl: 'http://emq-gateway.example' }] },
      /regions\[0\]\.restUrl: .* must be an https:\/\/ URL/,
    ],
    [
      'a token in the URL',
      { regions: [{ name: 'us-east', restUrl: 'https://gw.example/?_token=abc' }] },
      /no credentials, query or fragment: tokens are secrets/,
    ],
    ['no URL', { regions: [{ name: 'us-east' }] }, /regions\[0\]\.restUrl: must be a string/],
    [
      'a duplicate name',
      {
        regions: [
          { name: 'us-east', restUrl: US },
          { name: 'us-east', restUrl: EU },
        ],
      },
      /regions\[1\]\.name: duplicate region "us-east"/,
    ],
    ['upper case', { regions: [{ name: 'US-East', restUrl: US }] }, /regions\[0\]\.name: "US-East" is not a valid wrangler environment name/],
    ['an underscore', { regions: [{ name: 'us_east', restUrl: US }] }, /"us_east" is not a valid wrangler environment name/],
    ['a dot', { regions: [{ name: 'us.east', restUrl: US }] }, /"us\.east" is not a valid wrangler environment name/],
    ['a leading digit', { regions: [{ name: '1east', restUrl: US }] }, /"1east" is not a valid wrangler environment name/],
    ['"default"', { regions: [{ name: 'default', restUrl: US }] }, /"default" is the top-level Worker's name/],
    ['too long a Worker name', { regions: [{ name: `r${'x'.repeat(47)}`, restUrl: US }] }, /longer than 63 characters/],
    [
      'a bad queue pattern',
      { ...MAP, queues: { 'a*b': 'us-east', 'x{y}.*': 'us-east' } },
      /queues\["a\*b"\] is not a queue name or a pattern[^]*queues\["x\{y\}\.\*"\] ends in \.\* but/,
    ],
    // the grammar is functions/producer/queue-patterns.ts', as the Worker reads EMQ_HOME_REGIONS
    ['a reserved queue name', { ...MAP, queues: { emq: 'us-east' } }, /queues\["emq"\] is not a queue name or a pattern/],
    [
      'a secret among the vars',
      { ...MAP, vars: { EMQ_REST_TOKEN: 'x' } },
      /vars\.EMQ_REST_TOKEN: a secret, never in wrangler\.toml: wrangler secret put EMQ_REST_TOKEN --env <region>/,
    ],
    [
      "a region token among a region's vars",
      { regions: [{ name: 'us-east', restUrl: US, vars: { EMQ_REST_TOKEN_EU_WEST: 'x' } }] },
      /regions\[0\]\.vars\.EMQ_REST_TOKEN_EU_WEST: a secret/,
    ],
    ['EMQ_TOKENS among the vars', { ...MAP, vars: { EMQ_TOKENS: '[]' } }, /vars\.EMQ_TOKENS: a secret/],
    ['a generated var set by hand', { ...MAP, vars: { EMQ_REGION: 'x' } }, /vars\.EMQ_REGION: generated from the region itself/],
    ['a var that is not text', { ...MAP, vars: { EMQ_MAX_BATCH_BYTES: 5 } }, /vars\.EMQ_MAX_BATCH_BYTES: the value must be a string/],
    [
      'a size that is not a whole number',
      { ...MAP, vars: { EMQ_MAX_PAYLOAD_BYTES: '1 MiB' } },
      /vars\.EMQ_MAX_PAYLOAD_BYTES: "1 MiB" is not a whole number from 1 to 9007199254740991/,
    ],
    // bounds, secrets and kinds come from the table (shared/config/variables.ts)
    [
      'a timeout past its bound',
      { ...MAP, vars: { EMQ_REST_TIMEOUT_MS: '86400001' } },
      /vars\.EMQ_REST_TIMEOUT_MS: "86400001" is not a whole number from 1 to 86400000/,
    ],
    ['a word not among the choices', { ...MAP, vars: { EMQ_LOG: 'loud' } }, /vars\.EMQ_LOG: "loud" must be one of info, debug, off/],
    ['EMQ_SOURCES among the vars', { ...MAP, vars: { EMQ_SOURCES: '{}' } }, /vars\.EMQ_SOURCES: a secret/],
    ['EMQ_METRICS_TOKEN among the vars', { ...MAP, vars: { EMQ_METRICS_TOKEN: 'x' } }, /vars\.EMQ_METRICS_TOKEN: a secret/],
    ['a misspelt key', { ...MAP, quues: {} }, /"quues": unknown key/],
    ['a misspelt region key', { regions: [{ name: 'us-east', url: US }] }, /regions\[0\]: unknown key "url"[^]*regions\[0\]\.restUrl: must be a string/],
    ['no regions', { regions: [] }, /regions: must be a non-empty array/],
    ['not JSON', '{"regions": [', /regions\.json:\n {2}- not valid JSON: /],
    ['not an object', '[]', /must be a JSON object/],
  ];
  it.each(bad)('refuses %s with a clear message, writing nothing', (_, map, message) => {
    const dir = project(map);
    const r = regions(dir);
    expect(r.err).toMatch(message);
    expect(r.err).toMatch(/^regions: regions\.json:\n/);
    expect(r.status).toBe(1);
    expect(tomlOf(dir)).toBe(TOP);
    expect(regions(dir, '--check').status).toBe(1);
  });

  it('reports every problem of a map at once', () => {
    const r = regions(project({ regions: [{ name: 'Bad', restUrl: 'ftp://x' }], queues: { q: 'nowhere' } }));
    expect(r.status).toBe(1);
    expect(r.err.split('\n').filter((l) => l.startsWith('  - '))).toHaveLength(3);
  });

  const badToml: Array<[string, string, RegExp]> = [
    ['a region written by hand', `${TOP}\n[env.eu-west]\nname = "mine"\n`, /\[env\.eu-west\] is written by hand outside the generated part: remove it/],
    ["a region's vars written by hand", `${TOP}\n[env.eu-west.vars]\nX = "1"\n`, /\[env\.eu-west\.vars\] is written by hand/],
    ['one marker missing', `${TOP}\n# ---- end of the part generated from regions.json ----\n`, /the marker lines must appear once each, in this order/],
    [
      'a key after the end marker',
      `${TOP}\n# ---- generated from regions.json by \`npm run regions\` (scripts/regions.ts), do not edit: change regions.json ----\n# ---- end of the part generated from regions.json ----\nlogpush = true\n`,
      /"logpush = true" follows the end marker outside any table/,
    ],
    ['no top-level name', TOP.replace('name = "echomq-producer"\n', ''), /no top-level name = "<worker>"/],
  ];
  it.each(badToml)('refuses a wrangler.toml with %s, writing nothing', (_, toml, message) => {
    const dir = project(MAP, toml);
    const r = regions(dir);
    expect(r.err).toMatch(/^regions: wrangler\.toml:\n/);
    expect(r.err).toMatch(message);
    expect(r.status).toBe(1);
    expect(tomlOf(dir)).toBe(toml);
  });

  it('keeps other hand-written environments, above or below the generated part', async () => {
    const dir = project(MAP, `${TOP}\n[env.staging]\nname = "echomq-producer-staging"\n`);
    expect(regions(dir).status).toBe(0);
    const withTail = `${tomlOf(dir)}\n[env.canary]\nname = "echomq-producer-canary"\n`;
    writeFileSync(join(dir, 'wrangler.toml'), withTail);
    expect(regions(dir).status).toBe(0);
    expect(tomlOf(dir)).toBe(withTail);
    expect((await wrangler()).envs(dir)).toEqual(['staging', 'us-east', 'eu-west', 'ap-south', 'canary']);
  });

  it("EMQ_CRONS among the shared vars: each region's [triggers] holds the expressions of the schedules homed there, the top level all", async () => {
    const crons = [
      { name: 'bill', cron: '0 3 * * *', queue: 'billing', payload: 'b' },
      { name: 'eu-a', cron: '*/5 * * * *', queue: 'tenant-eu.a', payload: 'a' },
      { name: 'eu-b', cron: '0 3 * * *', queue: 'tenant-eu.b', payload: 'b', delay: '1m' },
      { name: 'vip', cron: '0 18 * * friL', queue: 'tenant-eu.vip', payload: 'v' },
    ];
    const dir = project({ ...MAP, vars: { ...MAP.vars, EMQ_CRONS: JSON.stringify(crons) } });
    const r = regions(dir);
    expect(r.err).toBe('');
    const w = await wrangler();
    const triggers = (env?: string) => w.env(dir, env as string).triggers.crons;
    expect(triggers()).toEqual(['0 3 * * *', '*/5 * * * *', '0 18 * * friL']);
    expect(triggers('us-east')).toEqual(['0 3 * * *']);
    expect(triggers('eu-west')).toEqual(['*/5 * * * *', '0 3 * * *']);
    expect(triggers('ap-south')).toEqual(['0 18 * * friL']);
    expect(w.env(dir, 'eu-west').vars.EMQ_CRONS).toBe(JSON.stringify(crons)); // the table the Worker reads at run time
    expect(regions(dir, '--check').status).toBe(0);

    // refused, writing nothing: a bad table (as the Worker would read it), a region's own, a queue with no home, a hand-written [triggers]
    const refusals: Array<[unknown, RegExp, string?]> = [
      [{ ...MAP, vars: { EMQ_CRONS: JSON.stringify([{ ...crons[0], cron: '0 3 * * 0' }]) } }, /vars\.EMQ_CRONS\[0\]\.cron: the expression /],
      [
        { ...MAP, vars: { EMQ_MAX_PAYLOAD_BYTES: '1', EMQ_CRONS: JSON.stringify([{ ...crons[0], payload: 'bb' }]) } },
        /vars\.EMQ_CRONS\[0\]: the payload is 2 bytes/,
      ],
      [
        { ...MAP, regions: [{ ...MAP.regions[0], vars: { EMQ_CRONS: '[]' } }, ...MAP.regions.slice(1)] },
        /regions\[0\]\.vars\.EMQ_CRONS: one table for every region/,
      ],
      [{ ...MAP, vars: { EMQ_CRONS: JSON.stringify([{ ...crons[0], queue: 'nowhere' }]) } }, /vars\.EMQ_CRONS\[0\]\.queue: no entry of "queues" homes it/],
      [
        { ...MAP, vars: { EMQ_CRONS: '[]' } },
        /\[triggers\] is written by hand outside the generated part/,
        `${TOP}
[triggers]
crons = []
`,
      ],
    ];
    for (const [map, message, toml] of refusals) {
      const bad = project(map, toml);
      const refused = regions(bad);
      expect(refused.err).toMatch(message);
      expect(refused.status).toBe(1);
      expect(tomlOf(bad)).toBe(toml ?? TOP);
    }
  });

  it('usage errors exit 2', () => {
    const r = spawnSync(process.execPath, [script, '--nope'], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/usage: npm run regions/);
  });
});

describe('regionsFrom: the Worker reading its region vars', () => {
  const TOKEN = 'local-producer-token-0123456789';
  const base = {
    EMQ_REGION: 'us-east',
    EMQ_REST_URL: 'https://us.example',
    EMQ_REST_TOKEN: TOKEN,
    EMQ_REGION_URLS: JSON.stringify({ 'eu-west': 'https://eu.example', 'ap-south': 'https://ap.example' }),
    EMQ_HOME_REGIONS: JSON.stringify({
      '*': 'ap-south',
      'tenant-eu.*': 'eu-west',
      'tenant-eu.us.*': 'us-east',
      'tenant-eu.pinned': 'ap-south',
      exact: 'eu-west',
    }),
  };

  it('a queue goes to its exact entry, else its longest pattern (a.* one segment under a), else *', () => {
    const r = regionsFrom(base);
    const queues = ['exact', 'exact2', 'tenant-eu.a', 'tenant-eu.', 'tenant-eu.a.b', 'tenant-eu.us.x', 'tenant-eu.pinned', 'tenant-e', 'other'];
    expect(queues.map((q) => r.homeOf(q))).toEqual(['eu-west', 'ap-south', 'eu-west', 'ap-south', 'ap-south', 'us-east', 'ap-south', 'ap-south', 'ap-south']);
  });

  it('queues not in the map stay in this region; no region vars at all: no region, the plain gateway', () => {
    const r = regionsFrom({ ...base, EMQ_HOME_REGIONS: JSON.stringify({ 'tenant-eu.*': 'eu-west' }) });
    expect(r.homeOf('orders')).toBe('us-east');
    const plain = regionsFrom({ EMQ_REST_URL: 'https://gw.example', EMQ_REST_TOKEN: TOKEN });
    expect(plain.local).toBeUndefined();
    expect(plain.homeOf('orders')).toBeUndefined();
    expect(plain.gatewayOf(undefined)).toEqual({ url: 'https://gw.example', token: TOKEN });
  });

  it("a region's own token secret (EMQ_REST_TOKEN_<REGION>) wins; else EMQ_REST_TOKEN", () => {
    const r = regionsFrom({ ...base, EMQ_REST_TOKEN_EU_WEST: 'eu-token-0123456789abcdef' });
    expect(r.gatewayOf('eu-west')).toEqual({ url: 'https://eu.example', token: 'eu-token-0123456789abcdef' });
    expect(r.gatewayOf('ap-south')).toEqual({ url: 'https://ap.example', token: TOKEN });
    expect(r.gatewayOf('us-east')).toEqual({ url: 'https://us.example', token: TOKEN });
    expect(regionsFrom({ ...base, EMQ_REST_TOKEN_US_EAST: 'us-own-0123456789abcdef' }).gatewayOf('us-east').token).toBe('us-own-0123456789abcdef');
  });

  it('refuses bad vars with errors that name the variable, never a token', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ EMQ_HOME_REGIONS: '{nope' }, /^EMQ_HOME_REGIONS is not valid JSON/],
      [{ EMQ_HOME_REGIONS: '["eu-west"]' }, /^EMQ_HOME_REGIONS must be a JSON object/],
      [{ EMQ_HOME_REGIONS: '{"q":"sa-east"}' }, /EMQ_HOME_REGIONS\["q"\] names region "sa-east", which is neither EMQ_REGION nor in EMQ_REGION_URLS/],
      [{ EMQ_HOME_REGIONS: '{"a*b":"eu-west"}' }, /EMQ_HOME_REGIONS: "a\*b" is not a queue name or a pattern/],
      [{ EMQ_HOME_REGIONS: '{"":"eu-west"}' }, /EMQ_HOME_REGIONS: "" is not a queue/],
      [{ EMQ_REGION: '' }, /EMQ_HOME_REGIONS is set but EMQ_REGION is not/],
      [{ EMQ_REGION: 'US_EAST' }, /^EMQ_REGION is not a region name/],
      [{ EMQ_REGION_URLS: '{"eu-west":"not a url"}' }, /EMQ_REGION_URLS\["eu-west"\] is not a URL/],
      // finding 7 (security review): plain http only on loopback, at run time as at build time
      [{ EMQ_REGION_URLS: '{"eu-west":"http://eu.example"}' }, /EMQ_REGION_URLS\["eu-west"\] must be an https:\/\/ URL \(plain http:\/\/ only on loopback\)/],
      [{ EMQ_REGION_URLS: '{"eu-west":"https://u:p@eu.example"}' }, /must carry no credentials/],
      [{ EMQ_REGION_URLS: '{"Eu":"https://eu.example"}' }, /EMQ_REGION_URLS: "Eu" is not a region name/],
    ];
    for (const [vars, message] of cases) {
      let error: Error | undefined;
      try {
        regionsFrom({ ...base, ...vars });
      } catch (err) {
        error = err as Error;
      }
      expect(error?.message, JSON.stringify(vars)).toMatch(message);
      expect(error?.message).not.toContain(TOKEN);
    }
    const r = regionsFrom({ ...base, EMQ_REST_TOKEN: undefined });
    expect(() => r.gatewayOf('eu-west')).toThrow(/set EMQ_REST_TOKEN_EU_WEST or EMQ_REST_TOKEN/);
    expect(() => r.gatewayOf('us-east')).toThrow(/EMQ_REST_URL and EMQ_REST_TOKEN must both be set/);
  });

  it('finding 7 (security review): EMQ_REST_URL must be https:// except on loopback, checked at run time', () => {
    for (const url of ['http://gw.example', 'http://10.0.0.5:8079', 'ftp://gw.example', 'https://gw.example/?_token=x']) {
      expect(() => regionsFrom({ EMQ_REST_URL: url, EMQ_REST_TOKEN: TOKEN }).gatewayOf(undefined), url).toThrow(/EMQ_REST_URL must/);
    }
    for (const url of ['https://gw.example', 'http://127.0.0.1:8079', 'http://localhost:8079', 'http://[::1]:8079']) {
      expect(regionsFrom({ EMQ_REST_URL: url, EMQ_REST_TOKEN: TOKEN }).gatewayOf(undefined).url).toBe(url);
    }
  });
});
