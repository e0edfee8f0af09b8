// The REST gateway, as the real process (`emq gateway`), over real HTTP, in front of a
// real server private to this file: every refusal is checked against the whole keyspace.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { mintId } from '../shared/ids.js';
import { enqueueOnceScript, enqueueScript, jobStateScript } from '../shared/scripts.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { answerOf, type Answer } from './support/answer.js';
import { emq } from './support/cli.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

// ---------------------------------------------------------------- helpers

interface CallOptions {
  token?: string | undefined;
  method?: string | undefined;
  body?: string | Uint8Array | undefined;
  headers?: Record<string, string> | undefined;
}

async function call(gw: GatewayProcess, path: string, { token, method = 'GET', body, headers = {} }: CallOptions = {}): Promise<Answer> {
  const res = await fetch(gw.url + path, {
    method,
    ...(body === undefined ? {} : { body: body as NonNullable<RequestInit['body']> }),
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
  });
  return answerOf(res);
}

/** One JSON command: POST / ["CMD", ...]. */
const command = (gw: GatewayProcess, token: string | undefined, args: unknown[]) =>
  call(gw, '/', { token, method: 'POST', body: JSON.stringify(args), headers: { 'Content-Type': 'application/json' } });

const keysOf = (q: string, id: string) => [`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`];

/** The path of a path-style EVALSHA of the enqueue script; the payload goes in the POST body. */
const evalshaPath = (q: string, id: string) => `/evalsha/${enqueueScript.sha1}/2/${keysOf(q, id).map(encodeURIComponent).join('/')}/${encodeURIComponent(id)}`;

/** EVAL of the enqueue script's exact text, as a JSON command. */
const evalEnqueue = (q: string, id: string, payload: string) => ['EVAL', enqueueScript.text, 2, ...keysOf(q, id), id, payload];

/** Every byte percent-escaped except RFC 3986's unreserved characters. */
const percentBytes = (bytes: Uint8Array) =>
  Array.from(bytes, (b) =>
    /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) && b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');

/** The whole keyspace: every key (as hex) with its DUMP and absolute expiry (EXPIRETIME), and DBSIZE. */
async function snapshot(admin: Admin) {
  const keys = (await admin.call('KEYS', '*')) as Buffer[];
  const entries: Record<string, string> = {};
  for (const k of keys) {
    const dump = (await admin.call('DUMP', k)) as Buffer;
    const expiry = await admin.call('PEXPIRETIME', k);
    entries[k.toString('hex')] = `${dump.toString('hex')} expires=${String(expiry)}`;
  }
  return { dbsize: Number(await admin.call('DBSIZE')), entries };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when a TCP connect to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

const portOf = (gw: GatewayProcess) => Number(new URL(gw.url).port);

async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Seeds a few keys of every type, so a flush, a delete or an overwrite would show. */
async function seed(admin: Admin) {
  await admin.call('SET', 'seed:str', 'hello');
  await admin.call('SET', Buffer.from('seed:bin'), Buffer.from([0, 0xff, 0x80, 10]));
  await admin.call('HSET', 'seed:hash', 'a', '1', 'b', '2');
  await admin.call('RPUSH', 'seed:list', 'x', 'y', 'z');
  await admin.call('ZADD', 'seed:zset', '1', 'one', '2', 'two');
  await admin.call('SADD', 'seed:set', 'm1', 'm2');
  await admin.call('SET', 'seed:ttl', 'v', 'EX', '3600');
}

// ---------------------------------------------------------------- the main gateway

describe('gateway (one private server, EMQ_GATEWAY_MAX_BODY=1 MiB, EMQ_GATEWAY_MAX_PIPELINE=10)', () => {
  const MAX_BODY = 1024 * 1024;
  const MAX_PIPELINE = 10;
  let server: RunningServer;
  let admin: Admin;
  let gw: GatewayProcess;

  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    gw = await startGatewayProcess(server.url, {
      EMQ_GATEWAY_MAX_BODY: String(MAX_BODY),
      EMQ_GATEWAY_MAX_PIPELINE: String(MAX_PIPELINE),
    });
    await seed(admin);
    // one job already there, enqueued the way a producer would
    const q = freshQueue('seed');
    const id = mintId();
    expect((await command(gw, gw.producer, evalEnqueue(q, id, 'seeded'))).json).toEqual({ result: 1 });
  });
  afterAll(async () => {
    const code = await gw?.stop();
    admin?.close();
    await server?.stop();
    expect(code).toBe(0);
  });

  // ---- 7. probes
  describe('probes', () => {
    it('GET /healthz answers 200 without a token', async () => {
      const r = await call(gw, '/healthz');
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ status: 'ok' });
    });

    it('GET /readyz answers 200 without a token while Valkey is up', async () => {
      const r = await call(gw, '/readyz');
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ status: 'ready' });
    });
  });

  // ---- 1. tokens
  describe('tokens', () => {
    it('no token, a wrong token, an empty Bearer, a wrong ?_token=: 401 each, and nothing written', async () => {
      const before = await snapshot(admin);
      const wrongs: CallOptions[] = [
        {},
        { headers: { Authorization: `Bearer ${gw.admin}x` } },
        { headers: { Authorization: `Bearer ${gw.admin.slice(0, -1)}` } },
        { headers: { Authorization: `Bearer ${gw.producer.toUpperCase()}` } },
        { headers: { Authorization: 'Bearer ' } },
        { headers: { Authorization: gw.admin } }, // the token without the Bearer scheme
        { headers: { Authorization: `Basic ${Buffer.from(`x:${gw.admin}`).toString('base64')}` } },
      ];
      for (const opts of wrongs) {
        const r = await call(gw, '/', { ...opts, method: 'POST', body: JSON.stringify(['SET', 'auth:k', 'v']) });
        expect(r.status, JSON.stringify(opts)).toBe(401);
        expect(r.json).toHaveProperty('error');
        expect(r.text).not.toContain(gw.admin);
      }
      for (const path of ['/set/auth:k/v', `/set/auth:k/v?_token=${gw.admin}x`, '/set/auth:k/v?_token=']) {
        expect((await call(gw, path)).status, path).toBe(401);
        expect((await call(gw, path, { method: 'POST', body: 'v' })).status, path).toBe(401);
      }
      const pipeline = await call(gw, '/pipeline', { method: 'POST', body: JSON.stringify([['SET', 'auth:k', 'v']]) });
      expect(pipeline.status).toBe(401);
      const multi = await call(gw, '/multi-exec', { method: 'POST', body: JSON.stringify([['SET', 'auth:k', 'v']]) });
      expect(multi.status).toBe(401);
      expect(await snapshot(admin)).toEqual(before);
    });

    it('finding 10 (security review): ?_token= is off unless EMQ_GATEWAY_QUERY_TOKEN=1: a valid token there is 401, alone or beside a valid Bearer, and nothing is written', async () => {
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
      const q = freshQueue('query');
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const cases: Array<[string, CallOptions]> = [
        [`/set/auth:q/via-query?_token=${encodeURIComponent(gw.admin)}`, {}],
        [`/ping?_token=${encodeURIComponent(gw.producer)}`, {}],
        [`${evalshaPath(q, mintId())}?_token=${encodeURIComponent(gw.producer)}`, { method: 'POST', body: 'q' }],
        [`/set/auth:q/via-query?_token=${encodeURIComponent(gw.admin)}`, { token: gw.admin }],
        [`${evalshaPath(q, mintId())}?_token=${encodeURIComponent(gw.producer)}`, { token: gw.producer, method: 'POST', body: 'q' }],
        [`/ping?_token=`, { token: gw.producer }],
        [`/ping?a=1&_token=${encodeURIComponent(gw.producer)}`, {}],
      ];
      for (const [path, opts] of cases) {
        const r = await call(gw, path, opts);
        expect(r.status, path).toBe(401);
        expect(r.json.error).toMatch(/EMQ_GATEWAY_QUERY_TOKEN/);
        expect(r.text).not.toContain(gw.admin);
        expect(r.text).not.toContain(gw.producer);
      }
      for (const c of ['set', 'ping', 'evalsha']) expect(await admin.calls(c), c).toBe(0);
      expect(await snapshot(admin)).toEqual(before);
      // the same requests with the token as a Bearer run (so those 401s were refusals)
      expect(await call(gw, '/ping', { token: gw.producer })).toMatchObject({ status: 200, json: { result: 'PONG' } });
    });

    it('path-style POSTs, the way a producer enqueues: tokens checked alike whichever way the request is served', async () => {
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
      const q = freshQueue('fastauth');
      /** A raw request: Authorization may repeat, the body may be chunked. */
      const post = (path: string, headers: Record<string, string | string[]>, body: string, chunked = false) =>
        new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
          const req = request(
            new URL(gw.url + path),
            { method: 'POST', agent: false, headers: chunked ? { ...headers, 'Transfer-Encoding': 'chunked' } : headers },
            (res) => readAll(res).then((text) => resolve({ status: res.statusCode!, type: res.headers['content-type'], body: text }), reject),
          );
          req.on('error', reject);
          req.end(body);
        });
      const before = await snapshot(admin);
      const unauthorized = JSON.stringify({ error: 'Unauthorized: send Authorization: Bearer <token>' });
      for (const headers of [
        {},
        { Authorization: `Bearer ${gw.producer}x` },
        { Authorization: 'Bearer ' },
        { Authorization: [`Bearer ${gw.producer}`, `Bearer ${gw.producer}`] }, // joined: no single token
      ]) {
        const r = await post(evalshaPath(q, mintId()), headers, 'p');
        expect(r, JSON.stringify(headers)).toEqual({ status: 401, type: 'application/json', body: unauthorized });
      }
      expect(await snapshot(admin)).toEqual(before);
      for (const chunked of [false, true]) {
        const bearer = await post(evalshaPath(q, mintId()), { Authorization: `bearer  ${gw.producer} `, 'Upstash-Encoding': 'base64' }, 'b', chunked);
        expect(bearer, `chunked: ${chunked}`).toEqual({ status: 200, type: 'application/json', body: '{"result":1}' });
      }
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(2);
      // refusals and the script's own errors, the same way
      const other = await post(
        `/evalsha/${'f'.repeat(40)}/2/${keysOf(q, 'x').map(encodeURIComponent).join('/')}/x`,
        { Authorization: `Bearer ${gw.producer}` },
        'p',
      );
      expect(other).toEqual({
        status: 403,
        type: 'application/json',
        body: JSON.stringify({ error: "a producer token may run EVALSHA only of this project's scripts" }),
      });
      const kind = await post(evalshaPath(q, 'NOTAJOB'), { Authorization: `Bearer ${gw.producer}` }, 'p');
      expect(kind).toEqual({ status: 400, type: 'application/json', body: JSON.stringify({ error: 'EMQKIND job id must be JOB-namespaced' }) });
      const badEscape = await post('/evalsha/%ZZ/0', { Authorization: `Bearer ${gw.admin}` }, 'p');
      expect(badEscape).toEqual({ status: 400, type: 'application/json', body: JSON.stringify({ error: 'ERR bad percent-escape "%ZZ" in the path' }) });
    });

    it('a token via Authorization: Bearer works', async () => {
      const r = await command(gw, gw.admin, ['SET', 'auth:b', 'via-bearer']);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ result: 'OK' });
      expect(String(await admin.text('GET', 'auth:b'))).toBe('via-bearer');
      const get = await call(gw, '/get/auth:b', { token: gw.admin });
      expect(get.json).toEqual({ result: 'via-bearer' });
      const ping = await command(gw, gw.producer, ['PING']);
      expect(ping.status).toBe(200);
      expect(ping.json).toEqual({ result: 'PONG' });
    });
  });

  describe('with EMQ_GATEWAY_QUERY_TOKEN=1', () => {
    let gq: GatewayProcess;
    beforeAll(async () => {
      gq = await startGatewayProcess(server.url, { EMQ_GATEWAY_QUERY_TOKEN: '1' });
    });
    afterAll(async () => {
      expect(await gq?.stop()).toBe(0);
    });

    it('a token via ?_token= works, and writes; a wrong Bearer is not rescued by it', async () => {
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
      const r = await call(gq, `/set/auth:q/via-query?_token=${encodeURIComponent(gq.admin)}`);
      expect(r).toMatchObject({ status: 200, json: { result: 'OK' } });
      expect(String(await admin.text('GET', 'auth:q'))).toBe('via-query');
      expect(await call(gq, `/ping?_token=${encodeURIComponent(gq.producer)}`)).toMatchObject({ status: 200, json: { result: 'PONG' } });
      const q = freshQueue('viaquery');
      const id = mintId();
      const before = await snapshot(admin);
      const wrong = await call(gq, `${evalshaPath(q, id)}?_token=${encodeURIComponent(gq.producer)}`, {
        method: 'POST',
        body: 'q',
        headers: { Authorization: 'Bearer nope' },
      });
      expect(wrong.status).toBe(401);
      for (const path of [`/set/auth:k/v?_token=${gq.admin}x`, '/set/auth:k/v?_token=']) expect((await call(gq, path)).status, path).toBe(401);
      expect(await snapshot(admin)).toEqual(before);
      const viaQuery = await call(gq, `${evalshaPath(q, id)}?_token=${encodeURIComponent(gq.producer)}`, { method: 'POST', body: 'q' });
      expect(viaQuery).toMatchObject({ status: 200, json: { result: 1 } });
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(1);
      await admin.call('DEL', 'auth:q');
    });

    it('EMQ_GATEWAY_QUERY_TOKEN other than 1 or 0 stops the start, naming the variable, never its value', async () => {
      const run = await emq(['gateway'], '', {
        VALKEY_URL: server.url,
        EMQ_GATEWAY_TOKENS: `admin:${gq.admin}`,
        EMQ_GATEWAY_PORT: '0',
        EMQ_GATEWAY_QUERY_TOKEN: 'yes-secret-ish',
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('EMQ_GATEWAY_QUERY_TOKEN is not 1 (on) or 0 (off)');
      expect(run.stderr).not.toContain('yes-secret-ish');
      expect(run.stdout).toBe('');
    });
  });

  // ---- 2. the producer scope
  describe('producer scope', () => {
    const mutated = enqueueScript.text.replace('its contract', 'its contrakt'); // one byte of its first line (a comment), still valid Lua
    const writer = "redis.call('SET', KEYS[1], 'pwned') return 1";
    let writerSha: string;
    beforeAll(async () => {
      expect(mutated).not.toBe(enqueueScript.text);
      expect(mutated.length).toBe(enqueueScript.text.length);
      // a script the server knows, so EVALSHA of it would really run if let through
      writerSha = String(await admin.text('SCRIPT', 'LOAD', writer));
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
    });

    const forbidden: Array<[string, (q: string, id: string) => unknown[]]> = [
      ['FLUSHALL', () => ['FLUSHALL']],
      ['FLUSHDB', () => ['FLUSHDB']],
      ['CONFIG SET', () => ['CONFIG', 'SET', 'maxmemory', '12345']],
      ['KEYS', () => ['KEYS', '*']],
      ['DEL', () => ['DEL', 'seed:str', 'seed:hash']],
      ['SET', () => ['SET', 'seed:str', 'overwritten']],
      ['SCRIPT FLUSH', () => ['SCRIPT', 'FLUSH']],
      ['EVAL of the enqueue text with one byte changed', (q, id) => ['EVAL', mutated, 2, ...keysOf(q, id), id, 'x']],
      ['EVAL of the enqueue text plus a trailing newline', (q, id) => ['EVAL', `${enqueueScript.text}\n`, 2, ...keysOf(q, id), id, 'x']],
      ['EVAL of the enqueue text minus its last byte', (q, id) => ['EVAL', enqueueScript.text.slice(0, -1), 2, ...keysOf(q, id), id, 'x']],
      ['EVAL of return 1', () => ['EVAL', 'return 1', 0]],
      ['EVAL of a script that writes', () => ['EVAL', writer, 1, 'pwned']],
      ['EVAL_RO of the enqueue text', (q, id) => ['EVAL_RO', enqueueScript.text, 2, ...keysOf(q, id), id, 'x']],
      ['EVALSHA of an unknown sha', (q, id) => ['EVALSHA', randomBytes(20).toString('hex'), 2, ...keysOf(q, id), id, 'x']],
      ['EVALSHA of a script the server has loaded', () => ['EVALSHA', writerSha, 1, 'pwned']],
      ['EVALSHA_RO of the enqueue sha', (q, id) => ['EVALSHA_RO', enqueueScript.sha1, 2, ...keysOf(q, id), id, 'x']],
      ['FCALL', () => ['FCALL', 'f', 0]],
    ];

    it.each(forbidden)('POST / %s → 403, and the database is unchanged', async (_, argsOf) => {
      const q = freshQueue('forbid');
      const id = mintId();
      const configBefore = await admin.call('CONFIG', 'GET', 'maxmemory');
      const before = await snapshot(admin);
      const r = await command(gw, gw.producer, argsOf(q, id));
      expect(r.status).toBe(403);
      expect(r.json).toHaveProperty('error');
      expect(await snapshot(admin)).toEqual(before);
      expect(await admin.footprint(q)).toEqual({});
      expect(await admin.call('EXISTS', 'pwned')).toBe(0);
      expect(await admin.call('CONFIG', 'GET', 'maxmemory')).toEqual(configBefore);
      expect(Number(await admin.call('SCRIPT', 'EXISTS', enqueueScript.sha1).then((r) => (r as unknown[])[0]))).toBe(1);
    });

    it('the refused scripts are real: an admin token runs them and they write', async () => {
      const q = freshQueue('control');
      const id = mintId();
      const r = await command(gw, gw.admin, ['EVAL', mutated, 2, ...keysOf(q, id), id, 'x']);
      expect(r.json).toEqual({ result: 1 });
      expect(Object.keys(await admin.footprint(q))).toHaveLength(2);
      expect((await command(gw, gw.admin, ['EVALSHA', writerSha, 1, 'pwned'])).json).toEqual({ result: 1 });
      expect(await admin.call('EXISTS', 'pwned')).toBe(1);
      await admin.call('DEL', 'pwned', ...keysOf(q, id));
    });

    it('path-style forbidden commands (any case, percent-escaped names, POST bodies) → 403, database unchanged', async () => {
      const before = await snapshot(admin);
      const cases: Array<[string, string, string?]> = [
        ['GET', '/flushall'],
        ['GET', '/FlushDB'],
        ['GET', '/%46LUSHALL'],
        ['POST', '/flushall', 'ASYNC'],
        ['GET', '/config/set/maxmemory/12345'],
        ['GET', '/keys/*'],
        ['GET', '/del/seed:str'],
        ['POST', '/set/seed:str', 'overwritten'],
        ['GET', '/set/seed:str/overwritten'],
        ['GET', `/evalsha/${writerSha}/1/pwned`],
        ['GET', `/evalsha/${writerSha.toUpperCase()}/1/pwned`],
        ['POST', `/eval/${encodeURIComponent(writer)}/1`, 'pwned'],
        ['GET', '/pipeline'],
      ];
      for (const [method, path, body] of cases) {
        const r = await call(gw, path, { token: gw.producer, method, body });
        expect(r.status, `${method} ${path}`).toBe(403);
      }
      expect(await snapshot(admin)).toEqual(before);
      expect(await admin.call('EXISTS', 'pwned')).toBe(0);
    });

    const pipelines: Array<[string, (q: string, id: string) => unknown[][]]> = [
      ['the forbidden command last', (q, id) => [evalEnqueue(q, id, 'p'), ['PING'], ['SET', 'pipe:k', 'v']]],
      ['the forbidden command first', (q, id) => [['FLUSHALL'], evalEnqueue(q, id, 'p'), ['PING']]],
      ['a changed script in the middle', (q, id) => [evalEnqueue(q, id, 'p'), ['EVAL', mutated, 2, ...keysOf(q, `${id}1`), `${id}1`, 'x'], ['PING']]],
      [
        'an EVALSHA of a loaded writer',
        (q, id) => [
          ['EVALSHA', enqueueScript.sha1, 2, ...keysOf(q, id), id, 'p'],
          ['EVALSHA', writerSha, 1, 'pwned'],
        ],
      ],
    ];

    for (const route of ['/pipeline', '/multi-exec']) {
      it.each(pipelines)(`${route} with %s → 403 and none of its commands ran`, async (_, commandsOf) => {
        const q = freshQueue('pipe');
        const id = mintId();
        await admin.call('CONFIG', 'RESETSTAT');
        const before = await snapshot(admin);
        const r = await call(gw, route, { token: gw.producer, method: 'POST', body: JSON.stringify(commandsOf(q, id)) });
        expect(r.status).toBe(403);
        expect(r.json).toHaveProperty('error');
        expect(await snapshot(admin)).toEqual(before);
        expect(await admin.footprint(q)).toEqual({});
        expect(await admin.call('EXISTS', 'pwned')).toBe(0);
        for (const c of ['eval', 'evalsha', 'ping', 'set', 'flushall', 'multi', 'exec']) {
          expect(await admin.calls(c), `calls of ${c}`).toBe(0);
        }
      });
    }

    it('a producer may PING (JSON and path-style)', async () => {
      expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
      expect(await call(gw, '/ping', { token: gw.producer })).toMatchObject({ status: 200, json: { result: 'PONG' } });
      // with no arguments only (finding 9, second review: test/gateway-args.test.ts)
      expect(await call(gw, '/PING/hello', { token: gw.producer })).toMatchObject({
        status: 400,
        json: { error: "ERR a producer token's PING takes no arguments" },
      });
    });

    it('a producer may EVAL the enqueue text exactly (JSON POST /), and EVALSHA its sha path-style', async () => {
      await admin.call('SCRIPT', 'FLUSH');
      const q = freshQueue('allow');
      const first = mintId();
      // on a cold script cache the sha is unknown to the server: NOSCRIPT, nothing written
      const cold = await call(gw, evalshaPath(q, first), { token: gw.producer, method: 'POST', body: 'by-sha' });
      expect(cold.status).toBe(400);
      expect(cold.json.error).toMatch(/^NOSCRIPT/);
      expect(await admin.footprint(q)).toEqual({});

      const byText = await command(gw, gw.producer, evalEnqueue(q, first, 'by-text'));
      expect(byText.status).toBe(200);
      expect(byText.json).toEqual({ result: 1 });
      const row1 = await admin.hgetall(keysOf(q, first)[0]!);
      expect(row1.payload!.toString()).toBe('by-text');
      expect(row1.state!.toString()).toBe('pending');

      const second = mintId();
      const bySha = await call(gw, evalshaPath(q, second), { token: gw.producer, method: 'POST', body: 'by-sha' });
      expect(bySha.status).toBe(200);
      expect(bySha.json).toEqual({ result: 1 });
      const row2 = await admin.hgetall(keysOf(q, second)[0]!);
      expect(Object.keys(row2).sort()).toEqual(['attempts', 'payload', 'state']);
      expect(row2.payload!.toString()).toBe('by-sha');

      // the same id again: a duplicate, nothing changes
      const again = await call(gw, evalshaPath(q, second), { token: gw.producer, method: 'POST', body: 'other' });
      expect(again.json).toEqual({ result: 0 });
      expect((await admin.hgetall(keysOf(q, second)[0]!)).payload!.toString()).toBe('by-sha');

      // upper-case sha, JSON EVALSHA, and the script's own refusals come back as 400 errors
      const third = mintId();
      const upper = await command(gw, gw.producer, ['EVALSHA', enqueueScript.sha1.toUpperCase(), 2, ...keysOf(q, third), third, 'u']);
      expect(upper).toMatchObject({ status: 200, json: { result: 1 } });
      const layout = await command(gw, gw.producer, ['EVALSHA', enqueueScript.sha1, 2, keysOf(q, mintId())[0], keysOf(q, third)[1], mintId(), 'x']);
      expect(layout.status).toBe(400);
      expect(layout.json.error).toMatch(/^EMQLAYOUT/);

      expect(await admin.footprint(q)).toEqual({
        [keysOf(q, first)[0]!]: 'hash',
        [keysOf(q, second)[0]!]: 'hash',
        [keysOf(q, third)[0]!]: 'hash',
        [`emq:{${q}}:pending`]: 'zset',
      });
    });

    it('a producer pipeline and transaction of allowed commands run', async () => {
      const q = freshQueue('allowpipe');
      const [a, b, c] = [mintId(), mintId(), mintId()];
      const p = await call(gw, '/pipeline', {
        token: gw.producer,
        method: 'POST',
        body: JSON.stringify([['PING'], evalEnqueue(q, a, 'A'), ['EVALSHA', enqueueScript.sha1, 2, ...keysOf(q, b), b, 'B']]),
      });
      expect(p.status).toBe(200);
      expect(p.json).toEqual([{ result: 'PONG' }, { result: 1 }, { result: 1 }]);
      const m = await call(gw, '/multi-exec', { token: gw.producer, method: 'POST', body: JSON.stringify([evalEnqueue(q, c, 'C'), ['PING']]) });
      expect(m.status).toBe(200);
      expect(m.json).toEqual([{ result: 1 }, { result: 'PONG' }]);
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(3);
    });
  });

  // ---- 3. bytes
  describe('bytes', () => {
    beforeAll(async () => {
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
    });

    it('all 256 byte values as a raw path-style EVALSHA body are stored byte-exact', async () => {
      const q = freshQueue('bytes');
      const id = mintId();
      const payload = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const r = await call(gw, evalshaPath(q, id), { token: gw.producer, method: 'POST', body: payload });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ result: 1 });
      const stored = (await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer;
      expect(Buffer.isBuffer(stored)).toBe(true);
      expect(stored.equals(payload)).toBe(true);

      // and back out: base64 exactly, or refused (not mangled) without Upstash-Encoding
      const path = `/hget/${encodeURIComponent(keysOf(q, id)[0]!)}/payload`;
      const b64 = await call(gw, path, { token: gw.admin, headers: { 'Upstash-Encoding': 'base64' } });
      expect(b64.status).toBe(200);
      expect(Buffer.from(b64.json.result, 'base64').equals(payload)).toBe(true);
      const plain = await call(gw, path, { token: gw.admin });
      expect(plain.status).toBe(400);
      expect(plain.json.error).toMatch(/UTF-8/);
    });

    it('a 2 KiB payload of NULs and invalid UTF-8 is stored byte-exact', async () => {
      const q = freshQueue('bytes');
      const id = mintId();
      const payload = Buffer.concat([Buffer.alloc(1000, 0), Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80, 0xff]), Buffer.alloc(1000, 0xfe)]);
      const r = await call(gw, evalshaPath(q, id), { token: gw.producer, method: 'POST', body: payload });
      expect(r.json).toEqual({ result: 1 });
      const stored = (await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer;
      expect(stored.equals(payload)).toBe(true);
    });

    it('a key segment with %FF reaches Valkey as the byte 0xFF (admin SET)', async () => {
      const key = Buffer.concat([Buffer.from(freshQueue('ff')), Buffer.from([0xff])]);
      const r = await call(gw, `/set/${percentBytes(key)}/ff`, { token: gw.admin });
      expect(r).toMatchObject({ status: 200, json: { result: 'OK' } });
      expect(((await admin.call('GET', key)) as Buffer).toString()).toBe('ff');
      const found = (await admin.call('KEYS', Buffer.concat([key.subarray(0, -1), Buffer.from('*')]))) as Buffer[];
      expect(found.map((k) => k.toString('hex'))).toEqual([key.toString('hex')]);
      await admin.call('DEL', key);
    });

    it('a key of every byte, percent-escaped (%2F, %25, %00 included), arrives exactly (admin SET)', async () => {
      const key = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const r = await call(gw, `/set/${percentBytes(key)}`, { token: gw.admin, method: 'POST', body: 'all' });
      expect(r.json).toEqual({ result: 'OK' });
      expect(((await admin.call('GET', key)) as Buffer).toString()).toBe('all');
      await admin.call('DEL', key);
    });

    it('finding 4 (security review): a producer cannot write a queue or id the wire refuses, through EVALSHA', async () => {
      for (const script of [enqueueOnceScript, jobStateScript]) await admin.call('SCRIPT', 'LOAD', script.text);
      const before = await snapshot(admin);
      const good = mintId();
      const cases: Array<[Buffer, string]> = [
        [Buffer.from('has space'), good],
        [Buffer.from('a:b'), good],
        [Buffer.from('nl\n'), good],
        [Buffer.from('caf\u00e9'), good],
        [Buffer.concat([Buffer.from('x'), Buffer.from([0xff])]), good],
        [Buffer.from('emq'), good],
        [Buffer.from('x'.repeat(129)), good],
        [Buffer.from('ok-queue'), 'JOB'],
        [Buffer.from('ok-queue'), 'JOB../../x y'],
        [Buffer.from('ok-queue'), 'JOB01m8ktkzg6eaatm9sqpt0r51n2'],
        [Buffer.from('ok-queue'), 'JOBzzzzzzzzzzz'],
      ];
      for (const [q, id] of cases) {
        const row = Buffer.concat([Buffer.from('emq:{'), q, Buffer.from(`}:job:${id}`)]);
        const pending = Buffer.concat([Buffer.from('emq:{'), q, Buffer.from('}:pending')]);
        const path = `/evalsha/${enqueueScript.sha1}/2/${percentBytes(row)}/${percentBytes(pending)}/${percentBytes(Buffer.from(id))}`;
        const r = await call(gw, path, { token: gw.producer, method: 'POST', body: 'p' });
        expect(r.status, `${q.toString('hex')} ${id}`).toBe(400);
        expect(r.json.error).toMatch(/^EMQLAYOUT /);
        expect(Buffer.byteLength(r.json.error)).toBeLessThan(300);
        // the same bad queue through @enqueue-once and @job-state: refused too
        if (id !== good) continue;
        const key = (suffix: string) => Buffer.concat([Buffer.from('emq:{'), q, Buffer.from(`}:${suffix}`)]);
        const onceId = good;
        const once = `/evalsha/${enqueueOnceScript.sha1}/3/${[key(`job:${onceId}`), key('pending'), key('de:k')].map(percentBytes).join('/')}/${onceId}/0/60`;
        const o = await call(gw, once, { token: gw.producer, method: 'POST', body: 'p' });
        expect([o.status, o.json.error], `@enqueue-once ${q.toString('hex')}`).toMatchObject([400, expect.stringMatching(/^EMQLAYOUT /)]);
        const state = `/evalsha/${jobStateScript.sha1}/5/${[key(`job:${onceId}`), key('pending'), key('active'), key('schedule'), key('dead')].map(percentBytes).join('/')}/${onceId}`;
        const st = await call(gw, state, { token: gw.producer });
        expect([st.status, st.json.error], `@job-state ${q.toString('hex')}`).toMatchObject([400, expect.stringMatching(/^EMQLAYOUT /)]);
      }
      expect(await snapshot(admin)).toEqual(before);
    });

    it('finding 3 (security review): a 7 MB key is refused with a short error, writing nothing', async () => {
      const before = await snapshot(admin);
      const huge = `emq:{${'\x7f'.repeat(7_000_000)}}:pending`;
      await admin.call('SLOWLOG', 'RESET');
      // straight to Valkey (the gateway's body cap would stop it first): the script itself is bounded
      const error = await admin.call('EVAL', enqueueScript.text, '2', 'x', huge, 'JOB00000000001', 'p').then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect(error).toMatch(/EMQLAYOUT/);
      expect(error!.length).toBeLessThan(300);
      // the time it took is printed, not asserted (the gsub of every byte took 1.76 s before)
      const slow = (await admin.call('SLOWLOG', 'GET', '10')) as unknown[][];
      console.log(`[finding 3] slowest EVAL in SLOWLOG (over 10 ms): ${slow.length ? `${Math.max(...slow.map((e) => Number(e[2])))} µs` : 'none'}`);
      expect(await snapshot(admin)).toEqual(before);
    });
  });

  // ---- 4. limits and malformed requests
  describe('limits', () => {
    it('a chunked body growing past EMQ_GATEWAY_MAX_BODY is answered 413 while the client is still writing, and nothing is written', async () => {
      const q = freshQueue('big');
      const id = mintId();
      const before = await snapshot(admin);
      const TOTAL = 16 * 1024 * 1024;
      const CHUNK = Buffer.alloc(64 * 1024, 0x61);
      const url = new URL(gw.url + evalshaPath(q, id));
      const outcome = await new Promise<{ status: number; written: number; body: string; finished: boolean }>((resolve, reject) => {
        let written = 0;
        let finished = false;
        let timer: NodeJS.Timeout | undefined;
        const req = request(
          url,
          { method: 'POST', agent: false, headers: { Authorization: `Bearer ${gw.producer}`, 'Transfer-Encoding': 'chunked' } },
          (res) => {
            const at = written;
            clearInterval(timer);
            readAll(res).then(
              (body) => {
                req.destroy();
                resolve({ status: res.statusCode!, written: at, body, finished });
              },
              (err) => {
                req.destroy();
                resolve({ status: res.statusCode!, written: at, body: String(err), finished });
              },
            );
          },
        );
        req.on('error', (err) => {
          if (!finished || written < TOTAL) reject(err);
        });
        timer = setInterval(() => {
          if (written >= TOTAL) {
            clearInterval(timer);
            finished = true;
            req.end();
            return;
          }
          req.write(CHUNK);
          written += CHUNK.length;
        }, 5);
      });
      expect(outcome.status).toBe(413);
      expect(outcome.finished).toBe(false);
      // the cap is 1 MiB: the answer comes after a little more than that, not after 16 MiB
      expect(outcome.written, `bytes written when the 413 arrived`).toBeGreaterThan(MAX_BODY);
      expect(outcome.written, `bytes written when the 413 arrived`).toBeLessThan(4 * 1024 * 1024);
      expect(JSON.parse(outcome.body).error).toContain(String(MAX_BODY));
      expect(await admin.footprint(q)).toEqual({});
      expect(await snapshot(admin)).toEqual(before);
    }, 20_000);

    it('a Content-Length above the cap is answered 413 at once, before any body byte is sent', async () => {
      const q = freshQueue('big');
      const id = mintId();
      const before = await snapshot(admin);
      const url = new URL(gw.url + evalshaPath(q, id));
      const outcome = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent: false,
            headers: { Authorization: `Bearer ${gw.producer}`, 'Content-Length': String(MAX_BODY + 1) },
          },
          (res) => {
            readAll(res).then((body) => {
              req.destroy();
              resolve({ status: res.statusCode!, body });
            }, reject);
          },
        );
        req.on('error', () => undefined);
        req.flushHeaders(); // headers only: not one byte of the body is ever written
        setTimeout(() => reject(new Error('no answer within 3 s to a Content-Length above the cap')), 3_000).unref();
      });
      expect(outcome.status).toBe(413);
      expect(JSON.parse(outcome.body).error).toContain(String(MAX_BODY));
      expect(await admin.footprint(q)).toEqual({});
      expect(await snapshot(admin)).toEqual(before);
    });

    it('a body of exactly the cap is accepted', async () => {
      const q = freshQueue('cap');
      const id = mintId();
      const payload = randomBytes(MAX_BODY);
      const r = await call(gw, evalshaPath(q, id), { token: gw.producer, method: 'POST', body: payload });
      expect(r.status).toBe(200);
      expect(((await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer).equals(payload)).toBe(true);
    });

    it('malformed JSON to POST /, /pipeline and /multi-exec → 400, nothing written', async () => {
      const before = await snapshot(admin);
      for (const [path, body] of [
        ['/', '["SET","json:k",'],
        ['/', '{"SET":"json:k"}'],
        ['/', ''],
        ['/', '[]'],
        // null and booleans go as their JSON text, as Upstash does (gateway-upstash.test.ts); nested values do not
        ['/', '["SET","json:k",{"a":1}]'],
        ['/', '["SET","json:k",[1]]'],
        ['/pipeline', '[["SET","json:k","v"],'],
        ['/pipeline', '[]'],
        ['/multi-exec', '[["SET","json:k","v"]'],
      ] as const) {
        const r = await call(gw, path, { token: gw.admin, method: 'POST', body });
        expect(r.status, `${path} ${body}`).toBe(400);
        expect(r.json.error, `${path} ${body}`).toMatch(/^ERR /);
      }
      expect(await snapshot(admin)).toEqual(before);
    });

    it('a pipeline longer than EMQ_GATEWAY_MAX_PIPELINE → 400 and none of it ran; exactly the limit runs', async () => {
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const sets = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ['SET', `pipe:${tag}:${i}`, 'v']);
      for (const route of ['/pipeline', '/multi-exec']) {
        const r = await call(gw, route, { token: gw.admin, method: 'POST', body: JSON.stringify(sets(MAX_PIPELINE + 1, 'over')) });
        expect(r.status, route).toBe(400);
        expect(r.json.error).toContain(String(MAX_PIPELINE));
      }
      const q = freshQueue('over');
      const jobs = Array.from({ length: MAX_PIPELINE + 1 }, () => mintId()).map((id) => evalEnqueue(q, id, 'x'));
      expect((await call(gw, '/pipeline', { token: gw.producer, method: 'POST', body: JSON.stringify(jobs) })).status).toBe(400);
      expect(await admin.calls('set')).toBe(0);
      expect(await admin.calls('eval')).toBe(0);
      expect(await admin.footprint(q)).toEqual({});
      expect(await snapshot(admin)).toEqual(before);

      const ok = await call(gw, '/pipeline', { token: gw.admin, method: 'POST', body: JSON.stringify(sets(MAX_PIPELINE, 'exact')) });
      expect(ok.status).toBe(200);
      expect(ok.json).toHaveLength(MAX_PIPELINE);
      expect(Number(await admin.call('DBSIZE'))).toBe(before.dbsize + MAX_PIPELINE);
    });

    it('a JSON body that is not UTF-8 → 400, never decoded into other bytes, nothing written', async () => {
      const before = await snapshot(admin);
      const body = Buffer.concat([Buffer.from('["SET","utf8:k","'), Buffer.from([0xff, 0xfe]), Buffer.from('"]')]);
      const r = await call(gw, '/', { token: gw.admin, method: 'POST', body });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: expect.stringMatching(/not valid UTF-8/) });
      expect(await snapshot(admin)).toEqual(before);
    });

    it('HEAD runs no command: 405, nothing written', async () => {
      const before = await snapshot(admin);
      const r = await call(gw, '/set/head:k/v', { token: gw.admin, method: 'HEAD' });
      expect(r.status).toBe(405);
      expect(await snapshot(admin)).toEqual(before);
    });

    it('dot segments (%2E, %2E%2E) are arguments, never path navigation', async () => {
      const before = await snapshot(admin);
      // a raw request: fetch would resolve the dots before sending
      const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(new URL(gw.url), { method: 'GET', path: '/exists/a/%2E%2E/%2E', headers: { Authorization: `Bearer ${gw.admin}` } }, (res) =>
          readAll(res).then((body) => resolve({ status: res.statusCode!, body }), reject),
        );
        req.on('error', reject);
        req.end();
      });
      expect(raw.status).toBe(200);
      expect(JSON.parse(raw.body)).toEqual({ result: 0 }); // EXISTS a .. . — three keys, none there
      expect(await snapshot(admin)).toEqual(before);
    });

    it('the Bearer scheme is case-insensitive', async () => {
      for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
        const r = await call(gw, '/ping', { headers: { Authorization: `${scheme} ${gw.producer}` } });
        expect(r.status, scheme).toBe(200);
      }
    });

    it('a producer may name the script by a percent-escaped sha', async () => {
      const q = freshQueue('esc');
      const id = mintId();
      const sha = percentBytes(Buffer.from(enqueueScript.sha1)).replace(/[0-9a-f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
      const path = `/evalsha/${sha}/2/${keysOf(q, id).map(encodeURIComponent).join('/')}/${id}`;
      const r = await call(gw, path, { token: gw.producer, method: 'POST', body: 'x' });
      expect(r.json).toEqual({ result: 1 });
    });

    it('PUT, DELETE, PATCH → 405 with Allow, nothing written', async () => {
      const before = await snapshot(admin);
      for (const method of ['PUT', 'DELETE', 'PATCH']) {
        const r = await call(gw, '/set/put:k/v', { token: gw.admin, method, body: method === 'DELETE' ? undefined : 'v' });
        expect(r.status, method).toBe(405);
        expect(r.headers.get('allow')).toMatch(/GET/);
        const root = await call(gw, '/', { token: gw.admin, method, body: JSON.stringify(['SET', 'put:k', 'v']) });
        expect(root.status, `${method} /`).toBe(405);
      }
      expect(await snapshot(admin)).toEqual(before);
    });

    it('BLPOP (JSON, path-style, in a pipeline) → 400 at once, nothing ran, and the shared connection still answers', async () => {
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const json = await command(gw, gw.admin, ['BLPOP', 'blk:list', 0]);
      expect(json.status).toBe(400);
      expect(json.json.error).toMatch(/BLPOP/);
      expect((await call(gw, '/blpop/blk:list/0', { token: gw.admin })).status).toBe(400);
      expect((await call(gw, '/blpop/blk:list/0', { token: gw.producer })).status).toBe(400);
      const pipe = await call(gw, '/pipeline', {
        token: gw.admin,
        method: 'POST',
        body: JSON.stringify([
          ['SET', 'blk:k', 'v'],
          ['BLPOP', 'blk:list', 0],
        ]),
      });
      expect(pipe.status).toBe(400);
      const multi = await call(gw, '/multi-exec', {
        token: gw.admin,
        method: 'POST',
        body: JSON.stringify([
          ['SET', 'blk:k', 'v'],
          ['BLPOP', 'blk:list', 0],
        ]),
      });
      expect(multi.status).toBe(400);
      expect(await admin.calls('blpop')).toBe(0);
      expect(await admin.calls('set')).toBe(0);
      expect(await snapshot(admin)).toEqual(before);
      expect(await command(gw, gw.admin, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
    }, 10_000);

    it('XREAD / XREADGROUP with BLOCK → 400 at once; without BLOCK they run', async () => {
      await admin.call('CONFIG', 'RESETSTAT');
      for (const cmd of [
        ['XREAD', 'BLOCK', 0, 'STREAMS', 'blk:stream', '$'],
        ['xread', 'count', 1, 'block', 0, 'streams', 'blk:stream', '$'],
        ['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', 'blk:stream', '>'],
      ]) {
        const r = await command(gw, gw.admin, cmd);
        expect(r.status, String(cmd)).toBe(400);
        expect(r.json.error).toMatch(/would block/);
      }
      expect((await call(gw, '/xread/Block/0/streams/blk:stream/$', { token: gw.admin })).status).toBe(400);
      expect(await admin.calls('xread')).toBe(0);
      expect(await admin.calls('xreadgroup')).toBe(0);
      expect(await command(gw, gw.admin, ['XREAD', 'STREAMS', 'blk:stream', '0'])).toMatchObject({ status: 200 });
    });
  });

  describe('finding 2 (security review): command names are ASCII, compared as ASCII', () => {
    it('pıng (dotless ı) with a 0xFF argument, and CONFIG %FF: 400 for both scopes, nothing sent, the shared connection never drops', async () => {
      await admin.call('CONFIG', 'RESETSTAT');
      // a steady stream of honest requests the whole time: none may fail
      let stop = false;
      const honest = (async () => {
        const statuses: number[] = [];
        while (!stop) statuses.push((await command(gw, gw.producer, ['PING'])).status);
        return statuses;
      })();
      const hostile: Array<[string, string]> = [
        [gw.producer, '/p%C4%B1ng/%FF'],
        [gw.admin, '/p%C4%B1ng/%FF'],
        [gw.admin, '/CONFIG/%FF'],
        [gw.admin, '/config/g%C3%A9t/x'],
        [gw.admin, '/obj%C4%B1ect/%FF'],
        [gw.producer, '/%FF'],
      ];
      for (let round = 0; round < 5; round++) {
        for (const [token, path] of hostile) {
          const r = await call(gw, path, { token });
          expect(r.status, path).toBe(400);
          expect(r.json.error, path).toMatch(/ASCII/);
        }
        const json = await command(gw, gw.admin, ['PİNG']);
        expect(json.status).toBe(400);
      }
      stop = true;
      const statuses = await honest;
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.every((st) => st === 200)).toBe(true);
      // none of them reached Valkey
      expect(await admin.calls('ping')).toBe(statuses.length);
      expect(await admin.calls('config')).toBe(0);
      // ASCII names in any case still work
      expect(await command(gw, gw.producer, ['pInG'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
      expect(await command(gw, gw.admin, ['config', 'get', 'maxmemory'])).toMatchObject({ status: 200 });
    });
  });

  describe("finding 2 (security review): unknown commands never reach Valkey, and nothing an admin sends drops the producers' connection", () => {
    /** Error replies Valkey has sent since the last CONFIG RESETSTAT: an unknown command sent would count. */
    const errorReplies = async () => Number(/total_error_replies:(\d+)/.exec(String(await admin.text('INFO', 'stats')))?.[1]);
    /** Calls of COMMAND LIST since the last CONFIG RESETSTAT. */
    const commandLists = async () => Number(/^cmdstat_command\|list:calls=(\d+)/m.exec(String(await admin.text('INFO', 'commandstats')))?.[1] ?? 0);

    /** Producers enqueueing and PINGing the whole time `during` runs: every status they got. */
    async function producersDuring(during: () => Promise<void>): Promise<number[]> {
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
      const q = freshQueue('steady');
      let stop = false;
      const statuses: number[] = [];
      const producers = Array.from({ length: 4 }, async (_, i) => {
        while (!stop) {
          const r =
            i % 2 === 0
              ? await command(gw, gw.producer, ['PING'])
              : await call(gw, evalshaPath(q, mintId()), { token: gw.producer, method: 'POST', body: 'steady' });
          statuses.push(r.status);
        }
      });
      try {
        await during();
      } finally {
        stop = true;
        await Promise.all(producers);
      }
      return statuses;
    }

    it('(a) an unknown command, with a 0xFF argument or a UTF-8 character Valkey would cut at 128 bytes: 400 for the admin scope, nothing sent', async () => {
      const cut = `x${'\u00e9'.repeat(100)}`; // Valkey echoes 128 bytes: 'x' and 63.5 characters
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const statuses = await producersDuring(async () => {
        for (let round = 0; round < 3; round++) {
          const answers = [
            await call(gw, '/nosuchcmd/%FF', { token: gw.admin }),
            await call(gw, `/nosuchcmd/${encodeURIComponent(cut)}`, { token: gw.admin }),
            await call(gw, '/nosuchcmd', { token: gw.admin, method: 'POST', body: Buffer.from([0xff, 0xfe]) }),
            await command(gw, gw.admin, ['nosuchcmd', cut]),
            await call(gw, '/pipeline', {
              token: gw.admin,
              method: 'POST',
              body: JSON.stringify([
                ['SET', 'unknown:k', 'v'],
                ['nosuchcmd', cut],
              ]),
            }),
            await call(gw, '/multi-exec', {
              token: gw.admin,
              method: 'POST',
              body: JSON.stringify([
                ['SET', 'unknown:k', 'v'],
                ['nosuchcmd', cut],
              ]),
            }),
          ];
          for (const r of answers) {
            expect(r.status, r.text).toBe(400);
            expect(r.json.error).toMatch(/^ERR unknown command 'NOSUCHCMD'/);
          }
        }
      });
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      // not one of them reached Valkey: no error reply was sent, no SET ran, nothing changed
      expect(await errorReplies()).toBe(0);
      expect(await admin.calls('set')).toBe(0);
      expect(await admin.call('EXISTS', 'unknown:k')).toBe(0);
      const after = await snapshot(admin);
      // the producers' jobs are the only change
      expect(
        Object.keys(after.entries)
          .filter((k) => !(k in before.entries))
          .every((k) => Buffer.from(k, 'hex').toString().startsWith('emq:{steady-')),
      ).toBe(true);
      for (const [k, v] of Object.entries(before.entries)) if (!Buffer.from(k, 'hex').toString().startsWith('emq:{steady-')) expect(after.entries[k]).toBe(v);
    });

    it('(a) known commands in any case still run, and the command table is read once, not per request', async () => {
      expect(await command(gw, gw.admin, ['PING'])).toMatchObject({ status: 200 }); // learned by now
      await admin.call('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 10; i++) {
        expect(await command(gw, gw.admin, ['set', 'known:k', String(i)])).toMatchObject({ status: 200, json: { result: 'OK' } });
        expect(await call(gw, '/GeT/known:k', { token: gw.admin })).toMatchObject({ status: 200, json: { result: String(i) } });
        expect(
          await call(gw, '/pipeline', {
            token: gw.admin,
            method: 'POST',
            body: JSON.stringify([
              ['Config', 'get', 'maxmemory'],
              ['object', 'encoding', 'known:k'],
            ]),
          }),
        ).toMatchObject({ status: 200 });
      }
      expect(await commandLists()).toBe(0);
      await admin.call('DEL', 'known:k');
    });

    it("(b) an admin command whose error reply is not UTF-8 (a script's error_reply) drops only the admin's own connection: every producer call still answers 200", async () => {
      const statuses = await producersDuring(async () => {
        for (let round = 0; round < 3; round++) {
          const r = await call(gw, `/eval/${encodeURIComponent('return redis.error_reply(ARGV[1])')}/0/%FF`, { token: gw.admin });
          // the admin's own connection cannot read the reply: 503, or 400 once glide learns to
          expect([400, 503], r.text).toContain(r.status);
          // the admin scope comes back by itself
          let back = 0;
          for (const deadline = Date.now() + 10_000; Date.now() < deadline && back !== 200; await sleep(50)) {
            back = (await command(gw, gw.admin, ['PING'])).status;
          }
          expect(back).toBe(200);
        }
      });
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    }, 60_000);
  });
});

// ---------------------------------------------------------------- finding 11: bodies and pipelines at their default caps

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ, 100 on Linux)
}

/**
 * A chunked POST written 64 KiB at a time until an answer arrives (or `total` bytes were
 * written): the status, how much was written by then, and the body.
 */
function streamUntilAnswered(url: URL, headers: Record<string, string>, total: number) {
  return new Promise<{ status: number; written: number; body: string; finished: boolean }>((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    let finished = false;
    const req = request(url, { method: 'POST', agent: false, headers: { ...headers, 'Transfer-Encoding': 'chunked' } }, (res) => {
      const at = written;
      clearInterval(timer);
      readAll(res).then(
        (body) => (req.destroy(), resolve({ status: res.statusCode!, written: at, body, finished })),
        (err) => (req.destroy(), resolve({ status: res.statusCode!, written: at, body: String(err), finished })),
      );
    });
    req.on('error', (err) => {
      if (!finished) reject(err);
    });
    const timer = setInterval(() => {
      if (written >= total) {
        clearInterval(timer);
        finished = true;
        req.end();
        return;
      }
      req.write(chunk);
      written += chunk.length;
    }, 2);
  });
}

describe('finding 11 (security review): a gateway at its default caps (8 MiB bodies, 2 MiB for a producer token, 10,000 commands)', () => {
  const MiB = 1024 * 1024;
  let server: RunningServer;
  let admin: Admin;
  let gw: GatewayProcess;
  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
    gw = await startGatewayProcess(server.url);
  });
  afterAll(async () => {
    const code = await gw?.stop();
    admin?.close();
    await server?.stop();
    expect(code).toBe(0);
  });

  it('an 8 MiB /pipeline of 2.1 M commands is refused before it is parsed: 400 naming the cap, nothing ran', async () => {
    const n = Math.floor((8 * MiB - 2) / 4); // [1], is 4 bytes: 2,097,151 commands
    const body = Buffer.concat([Buffer.from('['), Buffer.alloc(4 * (n - 1), '[1],'), Buffer.from('[1]]')]);
    expect(body.length).toBeLessThanOrEqual(8 * MiB);
    const before = await snapshot(admin);
    await admin.call('CONFIG', 'RESETSTAT');
    for (const route of ['/pipeline', '/multi-exec']) {
      const cpu = cpuSeconds(gw.child.pid!);
      const started = performance.now();
      const r = await call(gw, route, { token: gw.admin, method: 'POST', body });
      const ms = performance.now() - started;
      expect(r.status).toBe(400);
      // it stopped counting at the cap: it never learned how many there were
      expect(r.json.error).toBe('ERR more than 10000 commands in one request; the limit is 10000');
      console.log(
        `[finding 11] ${route}: 8 MiB of ${n.toLocaleString('en')} commands refused in ${ms.toFixed(0)} ms, gateway CPU ${((cpuSeconds(gw.child.pid!) - cpu) * 1000).toFixed(0)} ms (upload included)`,
      );
    }
    expect(await admin.calls('exec')).toBe(0);
    expect(await snapshot(admin)).toEqual(before);
  });

  it('the count skips what is inside strings (commas, brackets, escaped quotes) and nested arrays: exactly 10,000 such commands run', async () => {
    const tricky = ['a,b', '],[', '\\",[', '\\\\', '"', '{"x":[1,2]}'];
    const commands = Array.from({ length: 10_000 }, (_, i) => ['ECHO', tricky[i % tricky.length]!]);
    const ok = await call(gw, '/pipeline', { token: gw.admin, method: 'POST', body: JSON.stringify(commands) });
    expect(ok.status).toBe(200);
    expect(ok.json).toHaveLength(10_000);
    expect(ok.json[1]).toEqual({ result: '],[' });
    const over = await call(gw, '/pipeline', { token: gw.admin, method: 'POST', body: JSON.stringify([...commands, ['ECHO', 'one more']]) });
    expect(over.status).toBe(400);
    expect(over.json.error).toContain('10000');
  });

  it("a producer token's body past 2 MiB: 413 while it streams in (an admin's 3 MiB body is fine), nothing written; no token: 401 before any of it is read", async () => {
    const q = freshQueue('pcap');
    const before = await snapshot(admin);
    const streamed = await streamUntilAnswered(new URL(gw.url + evalshaPath(q, mintId())), { Authorization: `Bearer ${gw.producer}` }, 16 * MiB);
    expect(streamed.status).toBe(413);
    expect(streamed.finished).toBe(false);
    expect(streamed.written).toBeGreaterThan(2 * MiB);
    expect(streamed.written).toBeLessThan(8 * MiB);
    expect(JSON.parse(streamed.body).error).toContain(String(2 * MiB));
    const declared = await call(gw, evalshaPath(q, mintId()), { token: gw.producer, method: 'POST', body: Buffer.alloc(2 * MiB + 1, 0x62) });
    expect(declared.status).toBe(413);
    // JSON the same way
    const json = await call(gw, '/pipeline', { token: gw.producer, method: 'POST', body: JSON.stringify([['ECHO', 'x'.repeat(2 * MiB)]]) });
    expect(json.status).toBe(413);
    // without a token the body is never read: 401 at the first chunk
    const anonymous = await streamUntilAnswered(new URL(gw.url + evalshaPath(q, mintId())), {}, 16 * MiB);
    expect(anonymous.status).toBe(401);
    expect(anonymous.written).toBeLessThan(2 * MiB);
    expect(await admin.footprint(q)).toEqual({});
    expect(await snapshot(admin)).toEqual(before);

    // exactly 2 MiB for a producer, and 3 MiB for an admin, are taken
    const id = mintId();
    const payload = randomBytes(2 * MiB);
    expect(await call(gw, evalshaPath(q, id), { token: gw.producer, method: 'POST', body: payload })).toMatchObject({ status: 200, json: { result: 1 } });
    expect(((await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer).equals(payload)).toBe(true);
    const big = randomBytes(3 * MiB);
    expect(await call(gw, '/set/pcap:admin', { token: gw.admin, method: 'POST', body: big })).toMatchObject({ status: 200, json: { result: 'OK' } });
    expect(((await admin.call('GET', 'pcap:admin')) as Buffer).equals(big)).toBe(true);
    await admin.call('DEL', 'pcap:admin');
  }, 30_000);
});

// ---------------------------------------------------------------- 5. Valkey going away

describe('gateway while Valkey is down', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f().catch(() => undefined);
  });

  it('after one call found Valkey gone, the next answer 503 at once instead of waiting out the request timeout; a PING finds it back', async () => {
    const server = await startServer();
    cleanup.push(() => server.stop());
    // a request timeout twice the abort below: an answer in time did not wait it out
    const gw = await startGatewayProcess(server.url, { EMQ_GATEWAY_TIMEOUT_MS: '4000' });
    cleanup.push(() => gw.stop());
    expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200 });
    process.kill(server.pid, 'SIGKILL');
    await sleep(100);
    // the first call may wait for glide to give up (connection refused when it reconnects)
    const first = await fetch(`${gw.url}/ping`, { headers: { Authorization: `Bearer ${gw.producer}` } });
    expect(first.status).toBe(503);
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${gw.url}/ping`, { headers: { Authorization: `Bearer ${gw.producer}` }, signal: AbortSignal.timeout(2_000) });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    await server.restart();
    let status = 0;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && status !== 200; await sleep(50)) {
      status = (await command(gw, gw.producer, ['PING'])).status;
    }
    expect(status).toBe(200);
    expect(await gw.stop()).toBe(0);
  }, 60_000);

  it('answers 503 with Retry-After once Valkey is killed, and 200 again from the same process once it is back on the same port', async () => {
    let server = await startServer();
    const port = server.port;
    cleanup.push(() => server.stop());
    const gw = await startGatewayProcess(server.url, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
    cleanup.push(() => gw.stop());

    expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });

    await server.stop();
    const down = await command(gw, gw.producer, ['PING']);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(down.json.error).toMatch(/unavailable/i);
    const downReady = await call(gw, '/readyz');
    expect(downReady.status).toBe(503);
    expect(downReady.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call(gw, '/healthz')).status).toBe(200);

    server = await startServer({ port });
    let last: Answer | undefined;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      last = await command(gw, gw.producer, ['PING']);
      if (last.status === 200) break;
      await sleep(200);
    }
    expect(last?.status, `last answer: ${JSON.stringify(last?.json)}`).toBe(200);
    expect(last?.json).toEqual({ result: 'PONG' });
    expect(gw.child.exitCode).toBeNull();
    expect((await call(gw, '/readyz')).status).toBe(200);
    expect(await gw.stop()).toBe(0);
  }, 30_000);

  it('started while Valkey is down: /readyz 503 and /healthz 200; /readyz 200 once Valkey starts', async () => {
    // a port that nothing listens on, then Valkey on that very port
    const probe = await startServer();
    const port = probe.port;
    await probe.stop();
    const gw = await startGatewayProcess(`redis://127.0.0.1:${port}`, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
    cleanup.push(() => gw.stop());

    expect((await call(gw, '/healthz')).status).toBe(200);
    const notReady = await call(gw, '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toMatch(/^\d+$/);
    const cmd = await command(gw, gw.producer, ['PING']);
    expect(cmd.status).toBe(503);
    // what the gateway decides alone is answered as ever: a refusal stays a refusal
    expect((await command(gw, gw.producer, ['FLUSHALL'])).status).toBe(403);
    expect((await call(gw, '/evalsha/%ZZ/0', { token: gw.producer, method: 'POST', body: 'p' })).status).toBe(400);
    expect((await call(gw, '/', { token: gw.producer, method: 'POST', body: '[' })).status).toBe(400);

    const server = await startServer({ port });
    cleanup.push(() => server.stop());
    let status = 0;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      status = (await call(gw, '/readyz')).status;
      if (status === 200) break;
      await sleep(200);
    }
    expect(status).toBe(200);
    expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
    expect(await gw.stop()).toBe(0);
  }, 30_000);
});

// ---------------------------------------------------------------- 6. SIGTERM

describe('gateway SIGTERM', () => {
  let server: RunningServer;
  let admin: Admin;
  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
  });
  afterAll(async () => {
    admin?.close();
    await server?.stop();
  });

  it('finishes the request in flight with 200 and Connection: close, refuses new connections, and exits 0', async () => {
    const gw = await startGatewayProcess(server.url);
    const port = portOf(gw);
    // one keep-alive socket, so a second request can ride the connection of the first
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await call(gw, '/readyz')).status).toBe(200);
      const q = freshQueue('term');
      const id = mintId();
      const payload = randomBytes(512 * 1024);
      const half = payload.length / 2;

      let responded = false;
      let req!: ReturnType<typeof request>;
      const answer = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
        req = request(
          new URL(gw.url + evalshaPath(q, id)),
          { method: 'POST', agent, headers: { Authorization: `Bearer ${gw.producer}`, 'Content-Length': String(payload.length) } },
          (res) => {
            responded = true;
            readAll(res).then((body) => resolve({ status: res.statusCode!, body, connection: res.headers.connection }), reject);
          },
        );
        req.on('error', reject);
      });
      // half the body, then SIGTERM while the rest is still to come
      await new Promise<void>((r) => req.write(payload.subarray(0, half), () => r()));
      await sleep(100);
      expect(responded).toBe(false);
      const exited = gw.stop(); // sends SIGTERM

      // the listener closes: new connections are refused while the old one is still open
      let closed = false;
      for (const deadline = Date.now() + 3_000; Date.now() < deadline; ) {
        if ((closed = await refused(port))) break;
        await sleep(20);
      }
      expect(closed).toBe(true);
      expect(responded).toBe(false);
      expect(gw.child.exitCode).toBeNull();

      // the rest of the body, slowly
      for (let off = half; off < payload.length; off += 64 * 1024) {
        req.write(payload.subarray(off, Math.min(off + 64 * 1024, payload.length)));
        await sleep(20);
      }
      req.end();
      const r = await answer;
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ result: 1 });
      // its client is told not to reuse the socket, so nothing holds the exit up
      expect(r.connection).toBe('close');
      expect(((await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer).equals(payload)).toBe(true);

      expect(await exited).toBe(0);
      expect(gw.stderr()).toMatch(/SIGTERM/);
      expect(await refused(port)).toBe(true);
    } finally {
      agent.destroy();
      await gw.stop();
    }
  }, 20_000);
});
