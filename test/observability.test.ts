// Metrics, request logs and request ids on the Node servers, for real: `emq gateway` and
// `emq producer` as processes in front of a private valkey-server (SCRIPT FLUSH, a changed
// {emq}:version and a killed server must not reach other suites), scraped over HTTP. Each
// scrape is parsed by the strict exposition parser in support/exposition.ts (written here: no
// maintained parser package), and the counters must move by exactly what was sent.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { startServer, which, type RunningServer } from '../scripts/valkey.js';
import { connectRest } from '../shared/connections/rest.js';
import { enqueue, enqueueMany, mintId, pendingKey } from '../shared/index.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { parseExposition, seriesValue, type Family } from './support/exposition.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const METRICS = `metrics-${randomBytes(12).toString('hex')}`;
const CALLER = `caller-${randomBytes(12).toString('hex')}`;
const MARK = `PAYLOAD-MARK-${randomBytes(6).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
const fresh = (label = 'obs') => `${label}-${Date.now().toString(36)}-${(n++).toString(36)}`;

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('Content-Type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await res.text());
}

/** The change of every listed series between two scrapes. */
const delta = (before: Map<string, Family>, after: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  seriesValue(after, name, labels) - seriesValue(before, name, labels);

/** Its JSON lines (every stdout line must be one). */
function linesOf(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function until<T>(what: string, read: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) {
    const got = await read();
    if (got !== undefined) return got;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the exposition parser is strict', () => {
  it.each([
    ['a bad metric name', 'x-y 1\n'],
    ['a bad escape', 'x{a="\\t"} 1\n'],
    ['a value that is not a float', 'x 1,5\n'],
    ['a TYPE after its samples', 'x 1\n# TYPE x counter\n'],
    ['a family in two groups', 'x 1\ny 1\nx{a="b"} 1\n'],
    ['a series twice', 'x{a="b"} 1\nx{a="b"} 2\n'],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n'],
    ['a histogram not cumulative', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ['no final newline', 'x 1'],
  ])('refuses %s', (_, text) => {
    expect(() => parseExposition(text)).toThrow();
  });
});

describe('emq gateway: /metrics, request logs, request ids', () => {
  let valkey: RunningServer;
  let admin: Admin;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    valkey = await startServer();
    admin = await connectAdmin(valkey.url);
    gateway = await startGatewayProcess(valkey.url, { EMQ_METRICS_TOKEN: METRICS });
  });
  afterAll(async () => {
    expect(await gateway?.stop()).toBe(0);
    admin?.close();
    await valkey?.stop();
  });

  it('/metrics: 404 while EMQ_METRICS_TOKEN is unset; with it, 401 without the token or with another, 405 but GET', async () => {
    const off = await startGatewayProcess(valkey.url);
    try {
      expect((await fetch(`${off.url}/metrics`, { headers: { Authorization: `Bearer ${off.admin}` } })).status).toBe(404);
    } finally {
      await off.stop();
    }
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${gateway.url}/metrics`, { headers: { Authorization: `Bearer ${gateway.admin}` } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('WWW-Authenticate')).toBe('Bearer');
    expect(await wrong.text()).not.toContain(METRICS);
    expect((await fetch(`${gateway.url}/metrics`, { method: 'POST', headers: { Authorization: `Bearer ${METRICS}` } })).status).toBe(405);
    const families = await scrape(gateway.url);
    for (const name of ['emq_http_requests_total', 'emq_fence_state', 'emq_valkey_up', 'emq_pipeline_size', 'process_cpu_user_seconds_total']) {
      expect(families.has(name), name).toBe(true);
    }
  });

  // Prometheus's own parser and linter, where the machine has it (Debian's `prometheus` package)
  it.skipIf(!which('promtool'))("promtool check metrics: the exposition parses, and this project's families lint clean", async () => {
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } })).text();
    const whole = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // exit 3 is lint only: prom-client's own nodejs_active_*_total gauges; a parse error is 1
    expect([0, 3], whole.stderr + whole.stdout).toContain(whole.status);
    expect(whole.stdout + whole.stderr).not.toMatch(/error while linting|text format parsing error/i);
    const ours = text
      .split('\n')
      .filter((l) => /^(# (HELP|TYPE) )?emq_/.test(l))
      .join('\n');
    const linted = spawnSync('promtool', ['check', 'metrics'], { input: `${ours}\n`, encoding: 'utf8' });
    expect(linted.status, linted.stdout + linted.stderr).toBe(0);
  });

  it('counters move by exactly what was sent: requests, latency, bytes, verdicts, pipelines, NOSCRIPT', async () => {
    const q = fresh();
    const rest = connectRest({ url: gateway.url, token: gateway.producer });
    const payloads = ['a', 'bb', `ccc-${MARK}`].map((p) => new TextEncoder().encode(p));
    await enqueue(rest, q, mintId(), 'warm-up'); // a fresh server: its first EVALSHA is a NOSCRIPT round trip
    const before = await scrape(gateway.url);

    const ids = payloads.map(() => mintId());
    for (const [i, p] of payloads.entries()) expect(await enqueue(rest, q, ids[i]!, p)).toBe('enqueued');
    expect(await enqueue(rest, q, ids[0]!, payloads[0]!)).toBe('duplicate');
    // the script's own refusal: the pending key holds a string
    const refusedQ = fresh('refused');
    await admin.call('SET', pendingKey(refusedQ), 'x');
    await expect(enqueue(rest, refusedQ, mintId(), 'r')).rejects.toMatchObject({ code: 'wrong_type' });
    // four jobs: one /pipeline of four EVALSHAs
    expect((await enqueueMany(rest, q, [{ payload: 'p1' }, { payload: 'p2' }, { payload: 'p3' }, { payload: 'p4' }])).map((r) => r.verdict)).toEqual(
      Array(4).fill('enqueued'),
    );
    const after = await scrape(gateway.url);
    const path = { route: '/*', method: 'POST' };
    expect(delta(before, after, 'emq_http_requests_total', { ...path, status: '200' })).toBe(4);
    expect(delta(before, after, 'emq_http_requests_total', { ...path, status: '400' })).toBe(1);
    expect(delta(before, after, 'emq_http_requests_total', { route: '/pipeline', method: 'POST', status: '200' })).toBe(1);
    expect(delta(before, after, 'emq_http_request_duration_seconds_count', path)).toBe(5);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'enqueued', code: '' })).toBe(3 + 4);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'duplicate', code: '' })).toBe(1);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'refused', code: 'WRONGTYPE' })).toBe(1);
    expect(delta(before, after, 'emq_pipeline_size_count', { kind: 'pipeline' })).toBe(1);
    expect(delta(before, after, 'emq_pipeline_size_sum', { kind: 'pipeline' })).toBe(4);
    // path-style: the body is the payload, exactly
    const bodies = [...payloads, payloads[0]!].reduce((sum, p) => sum + p.length, 0) + 'r'.length;
    expect(delta(before, after, 'emq_http_request_body_bytes_total', { route: '/*' })).toBe(bodies);
    expect(seriesValue(after, 'emq_fence_state', { state: 'ok' })).toBe(1);

    // after a flush, the producer's EVALSHA is answered NOSCRIPT (path-style, 400), then its EVAL
    // lands (path-style, or JSON to / when the script makes the path too long)
    await admin.call('SCRIPT', 'FLUSH');
    expect(await enqueue(rest, q, mintId(), 'after-flush')).toBe('enqueued');
    const flushed = await scrape(gateway.url);
    expect(delta(after, flushed, 'emq_script_noscript_total', { script: 'enqueue' })).toBe(1);
    expect(delta(after, flushed, 'emq_script_calls_total', { script: 'enqueue', verdict: 'error', code: 'NOSCRIPT' })).toBe(1);
    expect(delta(after, flushed, 'emq_script_calls_total', { script: 'enqueue', verdict: 'enqueued', code: '' })).toBe(1);
    expect(delta(after, flushed, 'emq_http_requests_total', { ...path, status: '400' })).toBe(1);
    const landed = ['/*', '/'].map((route) => delta(after, flushed, 'emq_http_requests_total', { route, method: 'POST', status: '200' }));
    expect(landed[0]! + landed[1]!).toBe(1);

    // bounded labels: route patterns only, never a queue
    const routes = new Set(after.get('emq_http_requests_total')!.samples.map((s) => s.labels.route));
    for (const r of routes) expect(['/*', '/', '/pipeline', '/multi-exec', '/healthz', '/readyz', 'unmatched']).toContain(r);
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } })).text();
    expect(text).not.toContain(q);
    expect(text).not.toContain(MARK);
  });

  it('one JSON line per request: id, route, status, ms, queue, verdict, bytes; never a token or a payload', async () => {
    const q = fresh();
    const rest = connectRest({ url: gateway.url, token: gateway.producer });
    const id = mintId();
    const requestId = `req-${randomBytes(8).toString('hex')}`;
    const trace = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const payload = `{"secret":"${MARK}"}`;
    await enqueue(rest, q, mintId(), 'warm-up'); // a flush before must not make this one a NOSCRIPT round trip
    expect(await enqueue(rest.withRequest({ headers: { 'X-Request-Id': requestId, traceparent: trace } }), q, id, payload)).toBe('enqueued');
    // the caller's id is logged beside the gateway's own
    const line = await until('the log line', () => linesOf(gateway.stdout()).find((l) => l.callerRequestId === requestId));
    expect(line.id).toMatch(/^[0-9a-f]{32}$/);
    expect(line).toMatchObject({
      level: 'info',
      app: 'gateway',
      msg: 'request',
      trace: trace.split('-')[1],
      method: 'POST',
      route: '/*',
      status: 200,
      queue: q,
      verdict: 'enqueued',
      bytes: payload.length,
    });
    expect(typeof line.ms).toBe('number');
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
    const all = gateway.stdout() + gateway.stderr();
    for (const secret of [gateway.admin, gateway.producer, METRICS, MARK]) expect(all).not.toContain(secret);
  });

  it('X-Request-Id: always minted and echoed; a sane caller id logged as callerRequestId, a bad one dropped; traceparent only when valid', async () => {
    const auth = { Authorization: `Bearer ${gateway.admin}` };
    const sent = async (headers: Record<string, string>) => {
      const res = await fetch(`${gateway.url}/`, { method: 'POST', headers: { ...auth, ...headers }, body: '["PING"]' });
      expect(res.status).toBe(200);
      return res.headers.get('X-Request-Id')!;
    };
    const given = await sent({ 'X-Request-Id': 'abc-123' });
    expect(given).toMatch(/^[0-9a-f]{32}$/);
    expect(await until('the caller id line', () => linesOf(gateway.stdout()).find((l) => l.id === given))).toMatchObject({ callerRequestId: 'abc-123' });
    for (const bad of ['x'.repeat(129), 'two words', 'caf\u00e9']) {
      const headers = new Headers();
      try {
        headers.set('X-Request-Id', bad);
      } catch {
        continue; // fetch refuses a header it cannot send
      }
      const id = await sent(Object.fromEntries(headers));
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect((await until('the bad id line', () => linesOf(gateway.stdout()).find((l) => l.id === id))).callerRequestId).toBeUndefined();
    }
    const minted = await sent({ traceparent: '00-00000000000000000000000000000000-0000000000000000-01' });
    expect(minted).toMatch(/^[0-9a-f]{32}$/);
    // an unauthenticated request has an id too
    expect((await fetch(`${gateway.url}/`, { method: 'POST', body: '["PING"]' })).headers.get('X-Request-Id')).toMatch(/^[0-9a-f]{32}$/);
    const line = await until('the minted line', () => linesOf(gateway.stdout()).find((l) => l.id === minted));
    expect(line.trace).toBeUndefined();
    expect(line.route).toBe('/');
  });

  it("a Valkey outage: the producer connection's emq_valkey_up drops, then one reconnect and the time spent unavailable", async () => {
    // glide may hold the first call after the kill until its request timeout (5 s) before it
    // fails: the client waits longer than that, so the gateway's 503 is what it gets
    const rest = connectRest({ url: gateway.url, token: gateway.producer, retries: 0, timeoutMs: 15_000 });
    const q = fresh();
    await enqueue(rest, q, mintId(), 'before');
    const before = await scrape(gateway.url);
    process.kill(valkey.pid, 'SIGKILL'); // the server this describe started
    const downAt = Date.now();
    await expect(enqueue(rest, q, mintId(), 'during')).rejects.toMatchObject({ code: 'connection' }); // 503
    expect(seriesValue(await scrape(gateway.url), 'emq_valkey_up', { connection: 'producer' })).toBe(0);
    await sleep(Math.max(0, 1_000 - (Date.now() - downAt)));
    await valkey.restart();
    await until('up', async () => (seriesValue(await scrape(gateway.url), 'emq_valkey_up', { connection: 'producer' }) === 1 ? true : undefined), 20_000);
    const after = await scrape(gateway.url);
    expect(delta(before, after, 'emq_valkey_reconnects_total', { connection: 'producer' })).toBe(1);
    expect(delta(before, after, 'emq_valkey_reconnects_total', { connection: 'admin' })).toBe(0);
    const unavailable = delta(before, after, 'emq_valkey_unavailable_seconds_total', { connection: 'producer' });
    expect(unavailable).toBeGreaterThan(0.5);
    expect(unavailable).toBeLessThan((Date.now() - downAt) / 1000 + 0.1);
    expect(delta(before, after, 'emq_http_requests_total', { route: '/*', method: 'POST', status: '503' })).toBe(1);
    expect(await enqueue(rest, q, mintId(), 'after')).toBe('enqueued');
    const events = linesOf(gateway.stdout())
      .filter((l) => l.connection === 'producer')
      .map((l) => l.msg);
    expect(events.slice(-2)).toEqual(['valkey unavailable', 'valkey available']);
  }, 30_000); // the first call after the kill may wait out glide's request timeout
});

describe('emq producer: /metrics and logs over glide, a NOSCRIPT fallback, the fence, a Valkey outage', () => {
  let valkey: RunningServer;
  let admin: Admin;
  let producer: ProducerProcess;
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${producer.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${CALLER}`, ...headers }, body });

  beforeAll(async () => {
    valkey = await startServer();
    admin = await connectAdmin(valkey.url);
    producer = await startProducerProcess({
      VALKEY_URL: valkey.url,
      EMQ_TOKENS: JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]),
      EMQ_METRICS_TOKEN: METRICS,
      EMQ_LOG: 'debug',
    });
  });
  afterAll(async () => {
    expect(await producer?.stop()).toBe(0);
    admin?.close();
    await valkey?.stop();
  });

  it('verdicts, refusals and a batch after SCRIPT FLUSH: one EVAL fallback, two pipelines of three', async () => {
    const q = fresh();
    // a fresh server has no scripts cached: load them first, so the only NOSCRIPT is the flush's
    expect((await post(`/v1/queues/${q}/jobs`, 'warm-up')).status).toBe(201);
    expect((await post(`/v1/queues/${q}/jobs`, 'warm-up', { 'Emq-Delay': '1h' })).status).toBe(201);
    const before = await scrape(producer.url);
    const job = mintId();
    expect((await post(`/v1/queues/${q}/jobs`, MARK, { 'Emq-Job-Id': job })).status).toBe(201);
    expect((await post(`/v1/queues/${q}/jobs`, MARK, { 'Emq-Job-Id': job })).status).toBe(200);
    expect((await post(`/v1/queues/${q}/jobs`, 'x', { 'Emq-Delay': '1h' })).status).toBe(201);
    const refusedQ = fresh('refused');
    await admin.call('SET', pendingKey(refusedQ), 'x');
    expect((await post(`/v1/queues/${refusedQ}/jobs`, 'x', { 'X-Request-Id': 'refused-1' })).status).toBe(409);
    expect((await post(`/v1/queues/${q}/jobs`, 'x', { 'Emq-Job-Id': 'not-an-id' })).status).toBe(400);
    expect((await fetch(`${producer.url}/v1/queues/${q}/jobs`, { method: 'POST', body: 'x' })).status).toBe(401);
    await admin.call('SCRIPT', 'FLUSH');
    const batch = JSON.stringify([{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
    const res = await post(`/v1/queues/${q}/batch`, batch, { 'X-Request-Id': 'batch-1' });
    expect(res.status).toBe(200);
    const after = await scrape(producer.url);

    const jobs = { route: '/v1/queues/:queue/jobs', method: 'POST' };
    expect(delta(before, after, 'emq_http_requests_total', { ...jobs, status: '201' })).toBe(2);
    expect(delta(before, after, 'emq_http_requests_total', { ...jobs, status: '200' })).toBe(1);
    expect(delta(before, after, 'emq_http_requests_total', { ...jobs, status: '409' })).toBe(1);
    expect(delta(before, after, 'emq_http_requests_total', { ...jobs, status: '400' })).toBe(1);
    // the 401 came from the auth middleware, and counts under the route it was for
    expect(delta(before, after, 'emq_http_requests_total', { ...jobs, status: '401' })).toBe(1);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'enqueued', code: '' })).toBe(1 + 3);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'duplicate', code: '' })).toBe(1);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'schedule', verdict: 'scheduled', code: '' })).toBe(1);
    expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'refused', code: 'WRONGTYPE' })).toBe(1);
    expect(delta(before, after, 'emq_script_noscript_total', { script: 'enqueue' })).toBe(1);
    // the delayed job without an id went as a pipeline of one (scheduleMany mints); the batch as two of three
    expect(delta(before, after, 'emq_pipeline_size_count', { kind: 'dispatch' })).toBe(1 + 2);
    expect(delta(before, after, 'emq_pipeline_size_sum', { kind: 'dispatch' })).toBe(1 + 6);
    expect(delta(before, after, 'emq_http_request_body_bytes_total', { route: '/v1/queues/:queue/batch' })).toBe(batch.length);
    expect(seriesValue(after, 'emq_fence_state', { state: 'ok' })).toBe(1);
    expect(seriesValue(after, 'emq_valkey_up', { connection: 'glide' })).toBe(1);

    const lines = linesOf(producer.stdout());
    expect(lines.find((l) => l.callerRequestId === 'refused-1')).toMatchObject({
      app: 'producer',
      route: '/v1/queues/:queue/jobs',
      status: 409,
      queue: refusedQ,
      verdict: 'refused:WRONGTYPE',
      code: 'conflict',
    });
    // debug: what the core did for the request
    expect(lines.find((l) => l.callerRequestId === 'batch-1')).toMatchObject({
      status: 200,
      verdict: 'enqueued',
      calls: 3,
      noscript: 1,
      pipelines: 2,
      pipelineCommands: 6,
    });
    expect(producer.stdout() + producer.stderr()).not.toContain(MARK);
    expect(producer.stdout() + producer.stderr()).not.toContain(CALLER);
  });

  it('the fence gauge follows {emq}:version', async () => {
    await admin.call('SET', '{emq}:version', 'echomq:2.0.0');
    try {
      await until('mismatch', async () => (seriesValue(await scrape(producer.url), 'emq_fence_state', { state: 'mismatch' }) === 1 ? true : undefined));
      expect((await post(`/v1/queues/${fresh()}/jobs`, 'x')).status).toBe(503);
    } finally {
      await admin.call('DEL', '{emq}:version');
    }
    await until('ok', async () => (seriesValue(await scrape(producer.url), 'emq_fence_state', { state: 'ok' }) === 1 ? true : undefined));
    expect(
      linesOf(producer.stdout())
        .filter((l) => l.msg === 'fence')
        .map((l) => l.state),
    ).toContain('mismatch');
  });

  it('a Valkey outage: emq_valkey_up drops, then one reconnect and the time spent unavailable', async () => {
    const before = await scrape(producer.url);
    process.kill(valkey.pid, 'SIGKILL'); // the server this file started
    const downAt = Date.now();
    expect((await post(`/v1/queues/${fresh()}/jobs`, 'x')).status).toBe(503);
    await until('down', async () => (seriesValue(await scrape(producer.url), 'emq_valkey_up', { connection: 'glide' }) === 0 ? true : undefined));
    await sleep(Math.max(0, 1_000 - (Date.now() - downAt)));
    await valkey.restart();
    await until('up', async () => (seriesValue(await scrape(producer.url), 'emq_valkey_up', { connection: 'glide' }) === 1 ? true : undefined), 20_000);
    const after = await scrape(producer.url);
    expect(delta(before, after, 'emq_valkey_reconnects_total', { connection: 'glide' })).toBe(1);
    const unavailable = delta(before, after, 'emq_valkey_unavailable_seconds_total', { connection: 'glide' });
    expect(unavailable).toBeGreaterThan(0.5);
    expect(unavailable).toBeLessThan((Date.now() - downAt) / 1000 + 0.1);
    expect((await post(`/v1/queues/${fresh()}/jobs`, 'x')).status).toBe(201);
    const events = linesOf(producer.stdout()).filter((l) => l.msg === 'valkey unavailable' || l.msg === 'valkey available');
    expect(events.map((l) => l.msg).slice(-2)).toEqual(['valkey unavailable', 'valkey available']);
  }, 30_000); // the first call after the kill may wait out glide's request timeout
});

describe('one request id across hops on Node: emq producer over REST → emq gateway', () => {
  it("the response and the producer's line carry its minted id, each gateway line carries it as callerRequestId, all the same trace; REST retries are counted", async () => {
    const valkey = await startServer();
    const gateway = await startGatewayProcess(valkey.url);
    const env = { EMQ_TOKENS: JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]), EMQ_METRICS_TOKEN: METRICS };
    const producer = await startProducerProcess({ ...env, EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer });
    const nowhere = await startProducerProcess({ ...env, EMQ_REST_URL: 'http://127.0.0.1:9', EMQ_REST_TOKEN: gateway.producer });
    try {
      const q = fresh();
      const trace = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
      const res = await fetch(`${producer.url}/v1/queues/${q}/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${CALLER}`, 'X-Request-Id': 'hop-1', traceparent: trace },
        body: MARK,
      });
      expect(res.status).toBe(201);
      const id = res.headers.get('X-Request-Id');
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      const mine = await until('producer line', () => linesOf(producer.stdout()).find((l) => l.id === id));
      expect(mine.callerRequestId).toBe('hop-1');
      // a fresh server: the EVALSHA is answered NOSCRIPT, then the EVAL lands; both hops carry the id
      const theirs = await until('gateway lines', () => {
        // the gateway's lines carry the producer's id as the caller's, each under its own id
        const lines = linesOf(gateway.stdout()).filter((l) => l.callerRequestId === id);
        return lines.length === 2 ? lines : undefined;
      });
      expect(theirs[0]).toMatchObject({ app: 'gateway', route: '/*', status: 400, queue: q, verdict: 'error', code: 'NOSCRIPT' });
      expect(mine).toMatchObject({ app: 'producer', route: '/v1/queues/:queue/jobs', status: 201, queue: q, verdict: 'enqueued', bytes: MARK.length });
      expect(theirs[1]).toMatchObject({ app: 'gateway', status: 200, queue: q, verdict: 'enqueued', trace: trace.split('-')[1] });

      const before = await scrape(nowhere.url);
      expect((await fetch(`${nowhere.url}/v1/queues/${q}/jobs`, { method: 'POST', headers: { Authorization: `Bearer ${CALLER}` }, body: 'x' })).status).toBe(
        503,
      );
      const after = await scrape(nowhere.url);
      expect(delta(before, after, 'emq_rest_retries_total', { reason: 'transport' })).toBe(2); // the REST connection's default: 2 retries
      expect(delta(before, after, 'emq_http_requests_total', { route: '/v1/queues/:queue/jobs', method: 'POST', status: '503' })).toBe(1);
    } finally {
      await Promise.all([producer.stop(), nowhere.stop()]);
      await gateway.stop();
      await valkey.stop();
    }
  });
});

describe('transient retries, counted by reply', () => {
  it('a stale replica answers MASTERDOWN: the producer sends the call again 14 times (TRANSIENT_RETRY), each counted', { timeout: 60_000 }, async () => {
    // a real transient reply: a replica whose master is away, told not to serve stale data
    const valkey = await startServer();
    const admin = await connectAdmin(valkey.url);
    const gateway = await startGatewayProcess(valkey.url);
    // the admin token: the gateway's producer scope is fenced, and a stale replica cannot be read
    const env = { EMQ_TOKENS: JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]), EMQ_METRICS_TOKEN: METRICS, EMQ_LOG: 'debug' };
    const producer = await startProducerProcess({ ...env, EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.admin });
    try {
      // the gateway's admin connection made first (glide cannot connect to a stale replica)
      const ping = await fetch(`${gateway.url}/`, { method: 'POST', headers: { Authorization: `Bearer ${gateway.admin}` }, body: '["PING"]' });
      expect(ping.status).toBe(200);
      // and the connection admin scripts run on (functions/gateway/alone.ts), kept for the next
      const warm = await fetch(`${gateway.url}/`, { method: 'POST', headers: { Authorization: `Bearer ${gateway.admin}` }, body: '["EVAL","return 1","0"]' });
      expect(warm.status).toBe(200);
      await admin.call('CONFIG', 'SET', 'replica-serve-stale-data', 'no');
      await admin.call('REPLICAOF', '127.0.0.1', '9'); // nothing listens there
      const before = await scrape(producer.url);
      const res = await fetch(`${producer.url}/v1/queues/${fresh()}/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${CALLER}`, 'X-Request-Id': 'stale-1' },
        body: 'x',
      });
      expect(res.status).toBe(502);
      const after = await scrape(producer.url);
      expect(delta(before, after, 'emq_transient_retries_total', { reply: 'MASTERDOWN' })).toBe(14);
      expect(delta(before, after, 'emq_script_calls_total', { script: 'enqueue', verdict: 'error', code: 'MASTERDOWN' })).toBe(1);
      const line = await until('the line', () => linesOf(producer.stdout()).find((l) => l.callerRequestId === 'stale-1'));
      expect(line).toMatchObject({ status: 502, verdict: 'error', code: 'internal', transient: 14, noscript: 1, calls: 1 });
      expect(delta(before, after, 'emq_script_noscript_total', { script: 'enqueue' })).toBe(1);
      // the gateway relayed every try under the same request id: the EVALSHA (NOSCRIPT: the
      // script lookup comes before the stale check), its EVAL, and the 14 retries
      const relayed = await until('the gateway lines', () => {
        const lines = linesOf(gateway.stdout()).filter((l) => l.callerRequestId === line.id);
        return lines.length === 16 ? lines : undefined;
      });
      expect(relayed.map((l) => l.code)).toEqual(['NOSCRIPT', ...Array(15).fill('MASTERDOWN')]);
    } finally {
      await producer.stop();
      await gateway.stop();
      admin.close();
      await valkey.stop();
    }
  });
});

describe('EMQ_LOG and EMQ_METRICS_TOKEN are checked at start', () => {
  const gatewayEnv = { VALKEY_URL: 'redis://127.0.0.1:1', EMQ_GATEWAY_TOKENS: `producer:${CALLER}`, EMQ_GATEWAY_PORT: '0' };
  const producerEnv = {
    EMQ_TOKENS: JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]),
    EMQ_REST_URL: 'http://127.0.0.1:1',
    EMQ_REST_TOKEN: CALLER,
    PORT: '0',
  };
  it.each([
    ['gateway', 'EMQ_LOG', 'verbose-please'],
    ['gateway', 'EMQ_METRICS_TOKEN', 'short-secret'],
    ['producer', 'EMQ_LOG', 'verbose-please'],
    ['producer', 'EMQ_METRICS_TOKEN', 'short-secret'],
  ])('emq %s: a bad %s exits 2, naming it and not its value', async (app, name, value) => {
    const run = await emq([app], '', { ...(app === 'gateway' ? gatewayEnv : producerEnv), [name]: value });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(name);
    expect(run.stderr).not.toContain(value);
  });

  it('EMQ_LOG=off: no request lines; emq producer without EMQ_METRICS_TOKEN: /metrics is its 404', async () => {
    const valkey = await startServer();
    const gateway = await startGatewayProcess(valkey.url, { EMQ_LOG: 'off' });
    const producer = await startProducerProcess({ ...producerEnv, EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer, EMQ_LOG: 'off' });
    try {
      const off = await fetch(`${producer.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } });
      expect(off.status).toBe(404);
      expect(await off.json()).toMatchObject({ code: 'not_found' });
      expect((await fetch(`${producer.url}/healthz`)).status).toBe(200);
      expect(producer.stdout()).toBe('');
      const res = await fetch(`${gateway.url}/`, { method: 'POST', headers: { Authorization: `Bearer ${gateway.admin}` }, body: '["PING"]' });
      expect(res.status).toBe(200);
      expect(res.headers.get('X-Request-Id')).toMatch(/^[0-9a-f]{32}$/); // ids are not logging
      await sleep(100);
      expect(gateway.stdout()).toBe('');
    } finally {
      await producer.stop();
      await gateway.stop();
      await valkey.stop();
    }
  });
});
