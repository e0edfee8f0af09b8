// The `{emq}:version` fence on real servers (valkey-server 8 and redis-server 7, each private
// to this file, since these tests set the key), through every way this project writes:
// glide (run and pipeline), the REST connection through `emq gateway`, `emq producer` over
// glide, the producer app over REST (the Worker's path), and `emq enqueue`. Absent or equal:
// everything works and the key is never written. Another value, before start, while
// running, after a CLIENT KILL or a server restart: every write is refused, nothing lands,
// the admin scope still works; set back or deleted: everything recovers by itself.
import { createProducerClient as createClient } from '../client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { findServer, startServer, type RunningServer } from '../scripts/valkey.js';
import type { Connection } from '../shared/connection.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectRest } from '../shared/connections/rest.js';
import { enqueue, enqueueMany, jobState, mintId, WireMismatchError } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { answerOf, type Answer } from './support/answer.js';
import { emq } from './support/cli.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const KEY = '{emq}:version';
const OURS = 'echomq:3.0.0';
const OTHER = 'echomq:2.0.0';
const TOKEN = 'fence-test-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Longer than the fence's period (500 ms) plus a read: the periodic read has run since. */
const A_PERIOD = 1_100;

/** `emq producer` as its own process, over glide to `valkeyUrl`. */
const startProducer = (valkeyUrl: string) =>
  startProducerProcess({ VALKEY_URL: valkeyUrl, EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) });

/** Every way this project writes to one server, kept open across the tests of a block. */
interface Writers {
  glide: GlideConnection;
  gateway: GatewayProcess;
  rest: Connection;
  producer: ProducerProcess;
  /** The producer app over the REST connection through the gateway: the Worker's path, in Node. */
  app: ReturnType<typeof createProducerApp>;
}

async function openWriters(valkeyUrl: string, gatewayEnv: Record<string, string> = {}, glideTimeoutMs = 5_000): Promise<Writers> {
  const [glide, gateway, producer] = await Promise.all([
    connectGlide({ url: valkeyUrl, requestTimeoutMs: glideTimeoutMs }),
    startGatewayProcess(valkeyUrl, gatewayEnv),
    startProducer(valkeyUrl),
  ]);
  const rest = connectRest({ url: gateway.url, token: gateway.producer });
  const config = configFrom({ EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) });
  const app = createProducerApp({ config: () => config, connection: () => rest });
  return { glide, gateway, rest, producer, app };
}

async function closeWriters(w: Writers | undefined): Promise<void> {
  if (!w) return;
  await w.glide.close();
  expect(await w.gateway.stop()).toBe(0);
  expect(await w.producer.stop()).toBe(0);
}

/** An error as its code (`wire_mismatch`, `connection`, ...), anything else rethrown. */
const codeOf = (err: unknown) => {
  if (err instanceof Error && 'code' in err && typeof err.code === 'string') return err.code;
  throw err;
};

/** What an HTTP answer says: `ok`, or its problem's or gateway error's code (`503` when it has none). */
function said(a: Answer, okStatuses: number[]): string {
  if (okStatuses.includes(a.status)) return 'ok';
  return typeof a.json?.code === 'string' ? a.json.code : String(a.status);
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}`, ...headers } }).then(answerOf);
const gatewayCall = (gw: GatewayProcess, token: string, args: unknown[]) =>
  fetch(gw.url, { method: 'POST', body: JSON.stringify(args), headers: { Authorization: `Bearer ${token}` } }).then(answerOf);

/**
 * One write (or read) through each path, each answered `ok` or with its code; the answers
 * too, for the tests that look at their shape. Every write goes to queue `q`.
 */
async function tryEvery(w: Writers, valkeyUrl: string, q: string) {
  const answers: Record<string, Answer> = {};
  const outcome = async (name: string, run: () => Promise<string>) => [name, await run().catch(codeOf)] as const;
  const http = async (name: string, ok: number[], a: Promise<Answer>) => {
    answers[name] = await a;
    return [name, said(answers[name]!, ok)] as const;
  };
  const results = await Promise.all([
    outcome('glide run', async () => (await enqueue(w.glide, q, mintId(), 'glide'), 'ok')),
    outcome(
      'glide pipeline',
      async () => (
        await enqueueMany(w.glide, q, [
          { id: mintId(), payload: 'a' },
          { id: mintId(), payload: 'b' },
        ]),
        'ok'
      ),
    ),
    outcome('glide read', async () => (await jobState(w.glide, q, mintId()), 'ok')),
    outcome('rest', async () => (await enqueue(w.rest, q, mintId(), 'rest'), 'ok')),
    http('gateway producer PING', [200], gatewayCall(w.gateway, w.gateway.producer, ['PING'])),
    http('gateway /readyz', [200], fetch(`${w.gateway.url}/readyz`).then(answerOf)),
    http('emq producer POST', [201], post(`${w.producer.url}/v1/queues/${q}/jobs`, 'producer')),
    http('emq producer batch', [200], post(`${w.producer.url}/v1/queues/${q}/batch`, JSON.stringify([{ payload: 'x' }]))),
    http('emq producer /readyz', [200], fetch(`${w.producer.url}/readyz`).then(answerOf)),
    http(
      'app over REST POST',
      [201],
      Promise.resolve(
        w.app.fetch(new Request(`http://app/v1/queues/${q}/jobs`, { method: 'POST', body: 'app', headers: { Authorization: `Bearer ${TOKEN}` } })),
      ).then(answerOf),
    ),
    http('app over REST /readyz', [200], Promise.resolve(w.app.fetch(new Request('http://app/readyz'))).then(answerOf)),
    outcome('emq enqueue', async () => {
      const run = await emq(['enqueue', q], 'cli', { VALKEY_URL: valkeyUrl });
      answers['emq enqueue'] = { status: run.code ?? -1, headers: new Headers(), text: run.stderr, json: undefined };
      return run.code === 0 ? 'ok' : /wire version mismatch/.test(run.stderr) ? 'wire_mismatch' : `exit ${run.code}: ${run.stderr}`;
    }),
  ]);
  return { results: Object.fromEntries(results), answers };
}

const PATHS = [
  'glide run',
  'glide pipeline',
  'glide read',
  'rest',
  'gateway producer PING',
  'gateway /readyz',
  'emq producer POST',
  'emq producer batch',
  'emq producer /readyz',
  'app over REST POST',
  'app over REST /readyz',
  'emq enqueue',
];
const every = (verdict: string) => Object.fromEntries(PATHS.map((p) => [p, verdict]));

/** What "nothing written" compares: DBSIZE, the server's change counter, the key itself. */
async function written(admin: Admin) {
  const info = String(await admin.text('INFO', 'persistence'));
  return {
    dbsize: Number(await admin.call('DBSIZE')),
    changes: Number(/rdb_changes_since_last_save:(\d+)/.exec(info)?.[1]),
    version: (await admin.call('GET', KEY)) as Buffer | null,
  };
}

/** The ids of the clients this project opened (glide names them emq). */
async function emqClients(admin: Admin): Promise<string[]> {
  const list = String(await admin.text('CLIENT', 'LIST'));
  return list
    .split('\n')
    .filter((l) => / name=emq /.test(l))
    .map((l) => /\bid=(\d+)/.exec(l)![1]!);
}

const servers = (['valkey', 'redis'] as const).flatMap((flavor) => {
  const binary = findServer(flavor);
  return binary ? [binary] : [];
});

describe.each(servers)('the {emq}:version fence on $flavor $version', (binary) => {
  let server: RunningServer;
  let admin: Admin;
  let w: Writers;

  beforeAll(async () => {
    server = await startServer({ binary });
    admin = await connectAdmin(server.url);
    w = await openWriters(server.url, { EMQ_GATEWAY_TIMEOUT_MS: '1000' }, 1_000);
  });
  afterAll(async () => {
    await closeWriters(w);
    admin?.close();
    await server?.stop();
  });

  it('absent: every path writes, and after all of it (reads, periodic reads, a reconnect, new processes) the key is still absent', async () => {
    expect(await admin.call('EXISTS', KEY)).toBe(0);
    const q = freshQueue('absent');
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    // a reconnect of every connection of ours, and time for the periodic reads
    for (const id of await emqClients(admin)) await admin.call('CLIENT', 'KILL', 'ID', id);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    expect(await admin.call('EXISTS', KEY)).toBe(0);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(2 * 8);
  });

  it('equal: every path writes, and the value stays ours', async () => {
    await admin.call('SET', KEY, OURS);
    await sleep(A_PERIOD);
    const q = freshQueue('equal');
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    expect(String(await admin.call('GET', KEY))).toBe(OURS);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(8);
  });

  it('another value before start: fresh connections and processes refuse every write (503 wire_mismatch), nothing is written, the admin scope works', async () => {
    await admin.call('SET', KEY, OTHER);
    const before = await written(admin);
    const fresh = await openWriters(server.url);
    try {
      const q = freshQueue('before');
      const { results, answers } = await tryEvery(fresh, server.url, q);
      expect(results).toEqual(every('wire_mismatch'));

      // the gateway: 503 + Retry-After, {error, code, expected, found}, for the producer scope
      const ping = answers['gateway producer PING']!;
      expect(ping.status).toBe(503);
      expect(ping.headers.get('Retry-After')).toBe('1');
      expect(ping.json).toEqual({
        error: `{emq}:version is "${OTHER}" but this producer speaks ${OURS}: nothing is written until they match`,
        code: 'wire_mismatch',
        expected: OURS,
        found: `"${OTHER}"`,
      });
      const readyz = answers['gateway /readyz']!;
      expect(readyz.status).toBe(503);
      expect(readyz.json).toMatchObject({ code: 'wire_mismatch', expected: OURS, found: `"${OTHER}"` });
      expect(readyz.json.error).toContain(OURS);
      expect(readyz.json.error).toContain(OTHER);
      expect((await fetch(`${fresh.gateway.url}/healthz`)).status).toBe(200);
      // the typed client does not retry a mismatch: it lasts until an operator acts
      let calls = 0;
      const client = createClient({ url: fresh.producer.url, token: TOKEN, retries: 3, backoffMs: 1, fetch: (i, init) => (calls++, fetch(i, init)) });
      await expect(client.enqueue(freshQueue('client'), 'x')).rejects.toMatchObject({ status: 503, code: 'wire_mismatch' });
      expect(calls).toBe(1);
      // the admin scope still works: an operator can look
      const look = await gatewayCall(fresh.gateway, fresh.gateway.admin, ['GET', KEY]);
      expect(look.status).toBe(200);
      expect(look.json).toEqual({ result: OTHER });

      // the producer app (emq producer over glide, and over REST as the Worker): RFC 9457
      for (const name of ['emq producer POST', 'app over REST POST', 'emq producer /readyz', 'app over REST /readyz']) {
        const a = answers[name]!;
        expect(a.status, name).toBe(503);
        expect(a.headers.get('Content-Type'), name).toBe('application/problem+json');
        expect(a.headers.get('Retry-After'), name).toBe('1');
        expect(a.json, name).toMatchObject({ type: 'urn:emq:problem:wire_mismatch', code: 'wire_mismatch', status: 503, expected: OURS, found: `"${OTHER}"` });
        expect(a.json.detail, name).toContain(OURS);
        expect(a.json.detail, name).toContain(OTHER);
      }
      expect((await fetch(`${fresh.producer.url}/healthz`)).status).toBe(200);

      // the CLI: exit 1, both versions on stderr
      expect(answers['emq enqueue']!.status).toBe(1);
      expect(answers['emq enqueue']!.text).toBe(
        `emq: wire version mismatch: {emq}:version is "${OTHER}" but this producer speaks ${OURS}: nothing is written until they match\n`,
      );

      // the typed error, from glide and from REST (one request: a wire_mismatch 503 is not retried)
      const viaGlide = await enqueue(fresh.glide, q, mintId(), 'x').catch((e: unknown) => e);
      expect(viaGlide).toBeInstanceOf(WireMismatchError);
      expect(viaGlide).toMatchObject({ code: 'wire_mismatch', expected: OURS, found: `"${OTHER}"` });
      let requests = 0;
      const counted = connectRest({
        url: fresh.gateway.url,
        token: fresh.gateway.producer,
        fetch: (input, init) => (requests++, fetch(input, init)),
      });
      const viaRest = await enqueue(counted, q, mintId(), 'x').catch((e: unknown) => e);
      expect(viaRest).toBeInstanceOf(WireMismatchError);
      expect(viaRest).toMatchObject({ code: 'wire_mismatch', expected: OURS, found: `"${OTHER}"` });
      expect((viaRest as Error).message).toContain(OURS);
      expect((viaRest as Error).message).toContain(OTHER);
      expect(requests).toBe(1);

      expect(await written(admin)).toEqual(before);
      expect(await admin.footprint(q)).toEqual({});
    } finally {
      await closeWriters(fresh);
    }
  });

  it('another value while running: the open connections and processes refuse within a period; deleted or set to ours: they recover by themselves', async () => {
    // the value changes under them (OTHER since the last test); a period later they all refuse
    await sleep(A_PERIOD);
    const before = await written(admin);
    const q = freshQueue('running');
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('wire_mismatch'));
    expect(await written(admin)).toEqual(before);
    expect(await admin.footprint(q)).toEqual({});

    await admin.call('DEL', KEY);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));

    await admin.call('SET', KEY, OTHER);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, freshQueue('running'))).results).toEqual(every('wire_mismatch'));
    await admin.call('SET', KEY, OURS);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(2 * 8);
  });

  it('another value after a reconnect (CLIENT KILL of every connection of ours): the next writes are refused and nothing lands; then recovery', async () => {
    expect(String(await admin.call('GET', KEY))).toBe(OURS);
    const q = freshQueue('killed');
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    const ids = await emqClients(admin);
    expect(ids.length).toBeGreaterThanOrEqual(3); // this file's glide, the gateway's, emq producer's
    await admin.call('SET', KEY, OTHER);
    const killedAt = Date.now();
    for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
    // glide reconnects without a word; a read (which writes nothing) shows when it is noticed
    let noticedMs = -1;
    while (noticedMs < 0 && Date.now() - killedAt < 5_000) {
      const e = await jobState(w.glide, q, mintId()).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (e instanceof WireMismatchError) noticedMs = Date.now() - killedAt;
      else await sleep(10);
    }
    expect(noticedMs).toBeGreaterThanOrEqual(0);
    expect(noticedMs).toBeLessThan(A_PERIOD);
    console.log(`[fence] ${binary.flavor}: CLIENT KILL + another value noticed by glide after ${noticedMs} ms`);
    await sleep(A_PERIOD);
    expect((await emqClients(admin)).some((id) => ids.includes(id))).toBe(false); // all of them are new connections
    const before = await written(admin);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('wire_mismatch'));
    expect(await written(admin)).toEqual(before);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(8);

    await admin.call('DEL', KEY);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(2 * 8);
  });

  it('another value after a server restart on the same port: refused, nothing lands; then recovery', async () => {
    expect(await admin.call('EXISTS', KEY)).toBe(0);
    const q = freshQueue('restarted');
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
    await server.restart(); // no persistence: it comes back empty
    await admin.call('SET', KEY, OTHER);
    await sleep(A_PERIOD);
    const before = await written(admin);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('wire_mismatch'));
    expect(await written(admin)).toEqual(before);
    expect(await admin.footprint(q)).toEqual({});

    await admin.call('SET', KEY, OURS);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, q)).results).toEqual(every('ok'));
  });

  it('after a transport failure the next write reads the key first, with no period to wait', async () => {
    // glide's request timeout here is 1 s: a call while the server is gone fails, and the
    // fence then reads before the next write, whenever it comes. The periodic read is
    // stopped so that it cannot be what finds the new value.
    await admin.call('DEL', KEY);
    await sleep(A_PERIOD);
    const q = freshQueue('failed');
    w.glide.fence.stop();
    expect(await enqueue(w.glide, q, mintId(), 'x')).toBe('enqueued');
    process.kill(server.pid, 'SIGKILL');
    await sleep(100);
    await expect(enqueue(w.glide, q, mintId(), 'x')).rejects.toMatchObject({ code: 'connection' });
    await server.restart();
    await admin.call('SET', KEY, OTHER);
    const before = await written(admin);
    await expect(enqueue(w.glide, q, mintId(), 'x')).rejects.toBeInstanceOf(WireMismatchError);
    expect(await written(admin)).toEqual(before);
    w.glide.fence.start();
    await admin.call('SET', KEY, OURS);
    await sleep(A_PERIOD);
    expect(await enqueue(w.glide, q, mintId(), 'x')).toBe('enqueued');
  });

  it('a hostile value is shown escaped, as printable ASCII, truncated; an error reply (not a string) refuses too', async () => {
    const hostile = Buffer.concat([Buffer.from([0xff, 0x22, 0x5c, 0x0a, 0x00, 0x1b]), Buffer.from('<script>'.repeat(20))]);
    await admin.call('SET', KEY, hostile);
    await sleep(A_PERIOD);
    const shown = `"\\xff\\"\\\\\\x0a\\x00\\x1b${'<script>'.repeat(20).slice(0, 58)}"... (166 bytes)`;
    const viaGlide = await enqueue(w.glide, freshQueue('hostile'), mintId(), 'x').catch((e: unknown) => e);
    expect(viaGlide).toMatchObject({ code: 'wire_mismatch', found: shown });
    const answer = await gatewayCall(w.gateway, w.gateway.producer, ['PING']);
    expect(answer.status).toBe(503);
    expect(answer.json.found).toBe(shown);
    expect(answer.text).toMatch(/^[\x20-\x7e]+$/);
    const problem = await post(`${w.producer.url}/v1/queues/${freshQueue('hostile')}/jobs`, 'x');
    expect(problem.json.found).toBe(shown);
    expect(problem.text).toMatch(/^[\x20-\x7e]+$/);

    await admin.call('DEL', KEY);
    await admin.call('HSET', KEY, 'not', 'a string');
    await sleep(A_PERIOD);
    const wrongType = await enqueue(w.glide, freshQueue('hostile'), mintId(), 'x').catch((e: unknown) => e);
    expect(wrongType).toBeInstanceOf(WireMismatchError);
    expect((wrongType as WireMismatchError).found).toMatch(/^\(an error reply: "WRONGTYPE/);
    await admin.call('DEL', KEY);
    await sleep(A_PERIOD);
  });

  it('steady state: no extra round trip per enqueue (a GET every 500 ms per connection, whatever the load)', async () => {
    expect(await admin.call('EXISTS', KEY)).toBe(0);
    await admin.call('CONFIG', 'RESETSTAT');
    const started = Date.now();
    const q = freshQueue('steady');
    let n = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (n < 20_000) {
          n++;
          await enqueue(w.glide, q, mintId(), 'steady');
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const gets = await admin.calls('get');
    // every process of ours reads: this file's glide, the gateway's, emq producer's (3), each every 0.5 s
    expect(await admin.calls('evalsha')).toBeGreaterThanOrEqual(20_000);
    expect(gets).toBeLessThanOrEqual(3 * (seconds / 0.5 + 2));
    console.log(`[fence] ${binary.flavor}: 20,000 enqueues in ${seconds.toFixed(2)} s beside ${gets} GETs of ${KEY} (all of this server's clients)`);
  });

  it('after everything: the key was never written by this project (absent where the tests left it absent)', async () => {
    expect(await admin.call('EXISTS', KEY)).toBe(0);
    await sleep(A_PERIOD);
    expect((await tryEvery(w, server.url, freshQueue('last'))).results).toEqual(every('ok'));
    expect(await admin.call('EXISTS', KEY)).toBe(0);
  });
});

describe('EMQ_WIRE_VERSION of the wrong shape stops each process, naming the variable, never its value', () => {
  const BAD = 'echomq:3.0.0-secret-looking';
  it.each(['gateway', 'producer'])('emq %s', async (which) => {
    const run = await emq([which], '', {
      VALKEY_URL: 'redis://127.0.0.1:1',
      EMQ_GATEWAY_TOKENS: 'producer:prd-0123456789abcdef0123',
      EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
      EMQ_WIRE_VERSION: BAD,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('EMQ_WIRE_VERSION is not a wire version');
    expect(run.stderr).not.toContain(BAD);
    expect(run.stdout).toBe('');
  });

  it('emq enqueue', async () => {
    const run = await emq(['enqueue', 'q'], 'x', { VALKEY_URL: 'redis://127.0.0.1:1', EMQ_WIRE_VERSION: BAD });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('EMQ_WIRE_VERSION is not a wire version');
    expect(run.stderr).not.toContain(BAD);
  });
});
