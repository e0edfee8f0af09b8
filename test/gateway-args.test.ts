// Finding 9 (second review): the gateway caps the elements of a command and of a request,
// counted before the body is parsed or the path decoded. A producer's caps are its largest
// honest calls' (each script's layout, lua/*.lua headers; a pipeline of MAX_PIPELINE_COMMANDS
// calls), PING takes no arguments; an admin's cap is EMQ_GATEWAY_ADMIN_MAX_ARGS. The real
// gateway process over real HTTP in front of a real server private to this file: every
// refusal is checked for nothing sent (the server's command stats) and nothing written.
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { MAX_PIPELINE_COMMANDS, connectRest } from '../shared/connections/rest.js';
import { FLOW_MAX_CHILDREN, addFlow, admitMany, mintId } from '../shared/index.js';
import { ConfigError } from '../shared/config/parse.js';
import { allScripts, controlScripts, enqueueScript, flowScript, genqueueOnceScript, type Script } from '../shared/scripts.js';
import { type Caps, overCaps } from '../functions/gateway/count.js';
import { gatewayConfigFrom } from '../functions/gateway/config.js';
import { PIPELINE_CALLS, layoutOf, mostElements, producerCaps } from '../functions/gateway/script-calls.js';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { answerOf, type Answer } from './support/answer.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

// ---------------------------------------------------------------- the counter, alone

/** Elements of a parsed JSON value as overCaps counts them: every container's, an empty one as one. */
const elements = (v: unknown): number => {
  if (Array.isArray(v)) return Math.max(v.length, 1) + v.reduce((n: number, c) => n + elements(c), 0);
  if (v !== null && typeof v === 'object') {
    const values = Object.values(v);
    return Math.max(values.length, 1) + values.reduce((n: number, c) => n + elements(c), 0);
  }
  return 0;
};
const isContainer = (v: unknown) => v !== null && typeof v === 'object';
const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));
const caps = (level: 1 | 2, perCommand: number, total: number, commands = Number.MAX_SAFE_INTEGER): Caps => ({ level, commands, perCommand, total });

describe('overCaps: a body counted before it is parsed', () => {
  it('counts what JSON.parse would build, strings with brackets, commas, quotes and escapes skipped', () => {
    const text = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', ',', '"', '\\', 'a', 'é', '\u2028', ' ') });
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.array(tie('v')), fc.dictionary(text, tie('v'))),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        const total = elements(v);
        if (!isContainer(v)) {
          expect(overCaps(bytes(v), caps(1, 0, 0))).toBeUndefined();
          return;
        }
        // one command: its elements, nested ones included
        expect(overCaps(bytes(v), caps(1, total, total))).toBeUndefined();
        expect(overCaps(bytes(v), caps(1, total - 1, total))).toMatch(/^the command has more than/);
        expect(overCaps(bytes(v), caps(1, total, total - 1))).toMatch(/^more than \d+ elements in one request/);
        if (!Array.isArray(v)) return;
        // commands: each container among the top-level elements is one, counted on its own
        const most = Math.max(0, ...v.filter(isContainer).map(elements));
        expect(overCaps(bytes(v), caps(2, most, total, Math.max(v.length, 1)))).toBeUndefined();
        if (v.length > 1) expect(overCaps(bytes(v), caps(2, most, total, v.length - 1))).toMatch(/commands in one request/);
        if (most > 0) expect(overCaps(bytes(v), caps(2, most - 1, total))).toMatch(/^command \d+ has more than/);
      }),
      { numRuns: 300 },
    );
  });

  it('stops at the cap: a 2 MiB body of 500,000 arguments is refused in a few ms, spaces and nesting no way round it', () => {
    const flood = Buffer.from(JSON.stringify(['PING', ...Array(500_000).fill('a')]));
    const started = performance.now();
    expect(overCaps(flood, caps(1, 4009, 17_000))).toBe('the command has more than 4009 elements (its name and arguments); the limit for this token is 4009');
    expect(performance.now() - started).toBeLessThan(50);
    expect(overCaps(Buffer.from(` \n[ "PING" ,${' 1 ,'.repeat(5000)} 1 ]`), caps(1, 4009, 17_000))).toMatch(/more than 4009/);
    expect(overCaps(Buffer.from(`["PING",[${'1,'.repeat(5000)}1]]`), caps(1, 4009, 17_000))).toMatch(/more than 4009/);
    expect(overCaps(Buffer.from(`{${'"a":1,'.repeat(5000)}"b":1}`), caps(1, 4009, 17_000))).toMatch(/more than 4009/);
    expect(overCaps(Buffer.from(`[["PING"],${'["P",1],'.repeat(1000)}["P"]]`), caps(2, 4009, 3000))).toMatch(/more than 3000 elements/);
  });
});

// ---------------------------------------------------------------- the table, against the scripts' headers

/** The highest KEYS[n] and ARGV[n] a lua/*.lua header names (`ARGV[6|7]`: 7), or a library script's contract, lua/library/<name>.md. */
function headerLayout(script: Script): { keys: number; args: number } {
  const library = new URL(`../lua/library/${script.name}.md`, import.meta.url);
  const header = existsSync(library)
    ? readFileSync(library, 'utf8')
    : /^--\[\[\n([\s\S]*?)\n\]\]/.exec(readFileSync(new URL(`../lua/${script.name}.lua`, import.meta.url), 'utf8'))![1]!;
  const most = (what: string) => Math.max(...[...header.matchAll(new RegExp(`${what}\\[([0-9|]+)\\]`, 'g'))].flatMap((m) => m[1]!.split('|').map(Number)));
  return { keys: most('KEYS'), args: most('ARGV') };
}

describe("the producer's caps are its scripts' layouts", () => {
  it('every script has a row, as its header lays out its KEYS and ARGV (@flow: 3 + N keys, 3N + 3 arguments, N at most FLOW_MAX_CHILDREN)', () => {
    for (const script of allScripts) {
      if (script === flowScript) {
        const source = readFileSync(new URL('../lua/flow.lua', import.meta.url), 'utf8');
        expect(source).toMatch(/KEYS\[3\+i\] .* i = 1\.\.N, N 1 to 1000\n/);
        expect(source).toMatch(/ARGV\[3N\+3\]/);
        expect(FLOW_MAX_CHILDREN).toBe(1000);
        expect(layoutOf(script)).toEqual({ keys: 3 + FLOW_MAX_CHILDREN, args: 3 * FLOW_MAX_CHILDREN + 3 });
      } else expect(layoutOf(script), script.name).toEqual(headerLayout(script));
    }
    // the control scripts are sent alone: no pipeline of them is honest
    expect(producerCaps(allScripts, controlScripts)).toEqual({ perCommand: 4009, total: PIPELINE_CALLS * (1 + mostElements(genqueueOnceScript)) });
    expect(PIPELINE_CALLS).toBe(1000);
  });

  it('EMQ_GATEWAY_ADMIN_MAX_ARGS: 100,000 by default; a bad value stops the start, naming it and not its value', () => {
    const env = { VALKEY_URL: 'redis://127.0.0.1:6379', EMQ_GATEWAY_TOKENS: `admin:${'a'.repeat(32)}` };
    expect(gatewayConfigFrom(env).settings.adminMaxArgs).toBe(100_000);
    expect(gatewayConfigFrom({ ...env, EMQ_GATEWAY_ADMIN_MAX_ARGS: '5' }).settings.adminMaxArgs).toBe(5);
    for (const bad of ['0', '-1', 'lots', '1e3']) {
      expect(() => gatewayConfigFrom({ ...env, EMQ_GATEWAY_ADMIN_MAX_ARGS: bad })).toThrow(ConfigError);
      try {
        gatewayConfigFrom({ ...env, EMQ_GATEWAY_ADMIN_MAX_ARGS: bad });
      } catch (err) {
        expect((err as Error).message).toMatch(/^EMQ_GATEWAY_ADMIN_MAX_ARGS/);
        expect((err as Error).message).not.toContain(bad === '0' ? 'is 0' : bad);
      }
    }
  });
});

// ---------------------------------------------------------------- the real gateway

const ADMIN_MAX = 1_000;
let server: RunningServer;
let gw: GatewayProcess;
let admin: Admin;
beforeAll(async () => {
  server = await startServer();
  gw = await startGatewayProcess(server.url, { EMQ_GATEWAY_ADMIN_MAX_ARGS: String(ADMIN_MAX) });
  admin = await connectAdmin(server.url);
});
afterAll(async () => {
  admin?.close();
  if (gw) expect(await gw.stop()).toBe(0);
  await server?.stop();
});

const post = async (path: string, token: string, body: string | Uint8Array): Promise<Answer> =>
  answerOf(await fetch(gw.url + path, { method: 'POST', body, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } }));
const get = async (path: string, token: string): Promise<Answer> => answerOf(await fetch(gw.url + path, { headers: { Authorization: `Bearer ${token}` } }));

/** The gateway process's CPU so far, in ms (utime + stime, at 100 ticks a second). */
const cpuMs = () => {
  const fields = readFileSync(`/proc/${gw.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

/** Calls of each command the server ran since `reset()`. */
const reset = () => admin.call('CONFIG', 'RESETSTAT');
const ran = async (...commands: string[]) => Object.fromEntries(await Promise.all(commands.map(async (c) => [c, await admin.calls(c)] as const)));

/** `send()` refused with 400 and `message`, nothing sent to the server (no call of `commands`) and nothing written. */
async function refusedUnsent(send: () => Promise<Answer>, message: RegExp, commands = ['ping', 'evalsha', 'eval', 'del']) {
  const before = await snapshot(admin);
  await reset();
  const answer = await send();
  expect(answer.status, answer.text.slice(0, 300)).toBe(400);
  expect(answer.json.error).toMatch(message);
  expect(await ran(...commands)).toEqual(Object.fromEntries(commands.map((c) => [c, 0])));
  expect(await snapshot(admin)).toEqual(before);
}

const flood = (n: number) => Array(n).fill('a');
const evalshaOf = (script: Script, n: number) => ['EVALSHA', script.sha1, '0', ...flood(n - 3)];

describe('finding 9 (second review): argument floods are refused before they are parsed, at a producer\u2019s largest honest call', () => {
  it('finding 9 (second review): ["PING", …500,000 args] and EVALSHA <flow sha> 500000 … → 400, nothing sent or written, little gateway CPU', async () => {
    const floods: Array<[string, string]> = [
      ['/', JSON.stringify(['PING', ...flood(500_000)])],
      ['/', JSON.stringify(['EVALSHA', flowScript.sha1, '500000', ...flood(500_000)])],
      ['/pipeline', JSON.stringify([['PING', ...flood(500_000)]])],
      ['/multi-exec', JSON.stringify([['EVALSHA', flowScript.sha1, '500000', ...flood(500_000)]])],
      ['/pipeline', JSON.stringify(Array(9_000).fill(['PING', 'a']))],
    ];
    for (const [path, body] of floods) {
      const before = cpuMs();
      await refusedUnsent(() => post(path, gw.producer, body), /has more than 4009 elements|more than 17000 elements in one request/);
      // the whole 2 MiB parsed and relayed cost ~1 s of CPU; counted, well under a tenth of that
      expect(cpuMs() - before, path).toBeLessThan(150);
    }
    await refusedUnsent(() => get(`/ping/${flood(4_009).join('/')}`, gw.producer), /the command has more than 4009 elements/);
    await refusedUnsent(() => post(`/ping/${flood(4_008).join('/')}`, gw.producer, 'a'), /the command has more than 4009 elements/);
  });

  it("a producer's PING takes no arguments (an admin's does); the plain PING answers", async () => {
    await refusedUnsent(() => post('/', gw.producer, '["PING","hello"]'), /^ERR a producer token's PING takes no arguments$/);
    await refusedUnsent(() => get('/ping/hello', gw.producer), /PING takes no arguments/);
    await refusedUnsent(() => post('/pipeline', gw.producer, '[["PING"],["PING","x"]]'), /PING takes no arguments/);
    expect((await post('/', gw.producer, '["PING"]')).json).toEqual({ result: 'PONG' });
    expect((await get('/ping', gw.producer)).json).toEqual({ result: 'PONG' });
    expect((await post('/', gw.admin, '["PING","hello"]')).json).toEqual({ result: 'hello' });
  });

  it("each script's call one element past its layout → 400, unsent; at its layout it reaches the script (which judges it)", async () => {
    for (const script of allScripts) {
      const most = mostElements(script);
      // a control script is a control token's (a producer token's call is refused 403 first)
      const token = controlScripts.includes(script) ? gw.control : gw.producer;
      await reset();
      const at = await post('/', token, JSON.stringify(evalshaOf(script, most)));
      expect(at.json.error ?? '', script.name).not.toMatch(/at most|more than/);
      expect(await admin.calls('evalsha'), script.name).toBe(1);
      // the largest script's cap is the count's too: refused as it is counted
      const counted = most === producerCaps(allScripts, controlScripts).perCommand ? `|^ERR the command has more than ${most} elements` : '';
      await refusedUnsent(
        () => post('/', token, JSON.stringify(evalshaOf(script, most + 1))),
        new RegExp(`^ERR a call of lua/${script.name}.lua has at most ${most} elements \\(its name and arguments\\); this one has ${most + 1}$${counted}`),
      );
    }
    // by text too, and path-style
    const eval8 = ['EVAL', enqueueScript.text, '2', 'k1', 'k2', 'id', 'p', 'extra'];
    await refusedUnsent(() => post('/', gw.producer, JSON.stringify(eval8)), /lua\/enqueue.lua has at most 7 elements/);
    await refusedUnsent(() => get(`/evalsha/${enqueueScript.sha1}/2/k1/k2/id/p/extra`, gw.producer), /lua\/enqueue.lua has at most 7 elements/);
  });

  it('a pipeline: 1,000 of the largest batch calls pass the count; one more is refused whole, unsent', async () => {
    const call = evalshaOf(genqueueOnceScript, mostElements(genqueueOnceScript));
    await reset();
    const at = await post('/pipeline', gw.producer, JSON.stringify(Array(PIPELINE_CALLS).fill(call)));
    expect(at.status).toBe(200);
    expect(at.json).toHaveLength(PIPELINE_CALLS);
    expect(await admin.calls('evalsha')).toBe(PIPELINE_CALLS);
    await refusedUnsent(
      () => post('/pipeline', gw.producer, JSON.stringify(Array(PIPELINE_CALLS + 1).fill(call))),
      /^ERR more than 17000 elements in one request/,
    );
  });

  it('the largest honest calls land through the REST connection: a flow of 1,000 children (one queue, and across queues), a batch of 2,500 jobs', async () => {
    const rest = connectRest({ url: gw.url, token: gw.producer });
    const [q, other] = [freshQueue('args'), freshQueue('args-x')];
    const children = Array.from({ length: FLOW_MAX_CHILDREN }, (_, i) => ({ payload: `c${i}` }));
    expect((await addFlow(rest, q, { parent: { payload: 'p' }, children })).verdict).toBe('enqueued');
    const across = children.map((c, i) => ({ ...c, queue: i % 2 ? other : q }));
    expect((await addFlow(rest, q, { parent: { payload: 'p2' }, children: across })).verdict).toBe('enqueued');
    // more than one pipeline's worth: the connection sends MAX_PIPELINE_COMMANDS at a time
    expect(MAX_PIPELINE_COMMANDS).toBe(PIPELINE_CALLS);
    const jobs = Array.from({ length: 2_500 }, (_, i) =>
      i % 3 === 0 ? { payload: `g${i}`, group: mintId() } : i % 3 === 1 ? { payload: `s${i}`, inMs: 60_000 } : { payload: `f${i}` },
    );
    const results = await admitMany(rest, q, jobs);
    expect(results.map((r) => r.verdict)).toEqual(jobs.map((_, i) => (i % 3 === 1 ? 'scheduled' : 'enqueued')));
    await rest.close();
  });

  it('an admin request past EMQ_GATEWAY_ADMIN_MAX_ARGS → 400, unsent; at it, it runs', async () => {
    const key = `args:${freshQueue()}`;
    await admin.call('SET', key, 'v');
    await refusedUnsent(() => post('/', gw.admin, JSON.stringify(['DEL', key, ...flood(ADMIN_MAX - 1)])), /the command has more than 1000 elements/);
    await refusedUnsent(() => post('/', gw.admin, JSON.stringify(['PING', ...flood(500_000)])), /the command has more than 1000 elements/);
    await refusedUnsent(() => post('/pipeline', gw.admin, JSON.stringify(Array(ADMIN_MAX / 2).fill(['DEL', 'x']))), /more than 1000 elements in one request/);
    await refusedUnsent(() => get(`/del/${key}/${flood(ADMIN_MAX - 1).join('/')}`, gw.admin), /the command has more than 1000 elements/);
    expect(await admin.text('GET', key)).toBe('v');
    expect((await post('/', gw.admin, JSON.stringify(['DEL', key, ...flood(ADMIN_MAX - 2)]))).json).toEqual({ result: 1 });
  });
});
