// functions/http/metrics.ts: the Prometheus registry of a Node server, its labels bounded (route
// patterns, methods, statuses, verdicts, codes from fixed sets; never a queue, an id or a token),
// and GET /metrics: 405 for another method, 401 without the token, else the exposition.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createMetrics, metricsEndpoint, pathOf, serveMetrics } from '../functions/http/metrics.js';
import { RequestRecord } from '../functions/http/request-record.js';
import { enqueueScript } from '../shared/scripts.js';
import { parseExposition, seriesValue } from './support/exposition.js';

const TOKEN = 'metrics-token-0123456789';
const scrape = async (m: ReturnType<typeof createMetrics>) => {
  const text = await m.registry.metrics();
  return { text, families: parseExposition(text) };
};

describe('createMetrics', () => {
  it('counts requests by route pattern, method and status, never by the queue, id or caller id', async () => {
    const m = createMetrics();
    const record = new RequestRecord('id-secret-0001', undefined, undefined, 'caller-secret');
    record.script(enqueueScript, { ok: true, value: 1 }, ['emq:{queue-secret}:x']);
    record.bytes = 14;
    m.sink(record.summary('POST', '/v1/queues/:queue/jobs', 201));
    m.sink({ ...record.summary('POST', '/v1/queues/:queue/jobs', 201), bytes: 0 });
    m.sink({ ...record.summary('GET', 'unmatched', 404), bytes: 0 }); // no body read: no bytes series
    const { text, families } = await scrape(m);
    expect(seriesValue(families, 'emq_http_requests_total', { route: '/v1/queues/:queue/jobs', method: 'POST', status: '201' })).toBe(2);
    expect(seriesValue(families, 'emq_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(seriesValue(families, 'emq_http_request_duration_seconds_count', { route: '/v1/queues/:queue/jobs', method: 'POST' })).toBe(2);
    expect(seriesValue(families, 'emq_http_request_body_bytes_total', { route: '/v1/queues/:queue/jobs' })).toBe(14);
    expect(families.get('emq_http_request_body_bytes_total')!.samples.map((s) => s.labels.route)).not.toContain('unmatched');
    expect(text).not.toMatch(/secret/);
  });

  it('counts script verdicts with bounded codes, NOSCRIPT, retries and pipeline sizes', async () => {
    const m = createMetrics();
    m.observer.script!(enqueueScript, { ok: true, value: 0 }, []);
    m.observer.script!(enqueueScript, { ok: false, error: 'EMQKIND not a queue' }, []);
    m.observer.script!(enqueueScript, { ok: false, error: 'SOMETHING-unheard-of queue-secret' }, []);
    m.observer.noscript!(enqueueScript);
    m.observer.transient!('TRYAGAIN');
    m.observer.retry!('503');
    m.observer.pipeline!(7);
    const { text, families } = await scrape(m);
    expect(seriesValue(families, 'emq_script_calls_total', { script: 'enqueue', verdict: 'duplicate', code: '' })).toBe(1);
    expect(seriesValue(families, 'emq_script_calls_total', { script: 'enqueue', verdict: 'refused', code: 'EMQKIND' })).toBe(1);
    expect(seriesValue(families, 'emq_script_calls_total', { script: 'enqueue', verdict: 'error', code: 'OTHER' })).toBe(1);
    expect(seriesValue(families, 'emq_script_noscript_total', { script: 'enqueue' })).toBe(1);
    expect(seriesValue(families, 'emq_transient_retries_total', { reply: 'TRYAGAIN' })).toBe(1);
    expect(seriesValue(families, 'emq_rest_retries_total', { reason: '503' })).toBe(1);
    expect(seriesValue(families, 'emq_pipeline_size_sum', { kind: 'dispatch' })).toBe(7);
    expect(text).not.toMatch(/secret|unheard/);
  });

  it("tells a connection's availability: up, down, back with a reconnect and the time it was down", async () => {
    const m = createMetrics();
    const glide = m.availability('glide');
    let families = (await scrape(m)).families;
    expect(seriesValue(families, 'emq_valkey_up', { connection: 'glide' })).toBe(1);
    expect(families.get('emq_valkey_reconnects_total')!.samples).toHaveLength(1); // present at 0 from the start
    glide.down();
    glide.down(); // a second down is the same outage
    await new Promise((r) => setTimeout(r, 20));
    families = (await scrape(m)).families;
    expect(seriesValue(families, 'emq_valkey_up', { connection: 'glide' })).toBe(0);
    expect(seriesValue(families, 'emq_valkey_unavailable_seconds_total', { connection: 'glide' })).toBeGreaterThanOrEqual(0.015);
    glide.up();
    glide.up();
    families = (await scrape(m)).families;
    expect(seriesValue(families, 'emq_valkey_up', { connection: 'glide' })).toBe(1);
    expect(seriesValue(families, 'emq_valkey_reconnects_total', { connection: 'glide' })).toBe(1);
  });

  it('sets the fence gauge to 1 for its one state', async () => {
    const m = createMetrics();
    expect(seriesValue((await scrape(m)).families, 'emq_fence_state', { state: 'unknown' })).toBe(1);
    m.fence('mismatch');
    const { families } = await scrape(m);
    expect(['unknown', 'ok', 'mismatch'].map((state) => seriesValue(families, 'emq_fence_state', { state }))).toEqual([0, 0, 1]);
  });
});

describe('pathOf', () => {
  it.each([
    ['http://h:8080/metrics', '/metrics'],
    ['http://h/metrics?x=1', '/metrics'],
    ['https://h', '/'],
    ['http://h/?q', '/'],
  ])('reads %s as %s', (url, path) => expect(pathOf(url)).toBe(path));
});

describe('GET /metrics', () => {
  const m = createMetrics();
  const endpoint = metricsEndpoint({ token: TOKEN, metrics: m })!;
  let server: Server;
  afterAll(() => server?.close());

  it('is off without a token or metrics', () => {
    expect(metricsEndpoint({ token: undefined, metrics: m })).toBeUndefined();
    expect(metricsEndpoint({ token: TOKEN, metrics: undefined })).toBeUndefined();
  });

  it.each([undefined, '', `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, `Bearer ${TOKEN}, Bearer ${TOKEN}`, TOKEN])('answers 401 to Authorization %j', async (auth) => {
    const answer = await endpoint('GET', auth);
    expect(answer.status).toBe(401);
    expect(answer.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
  });

  it('answers 405 to another method, with Allow: GET, before the token is looked at', async () => {
    expect(await endpoint('POST', `Bearer ${TOKEN}`)).toMatchObject({ status: 405, headers: { Allow: 'GET' } });
    expect(await endpoint('DELETE', undefined)).toMatchObject({ status: 405, headers: { Allow: 'GET' } });
  });

  it('serves the exposition on node:http to the token, in any case of Bearer', async () => {
    server = createServer((req, res) => serveMetrics(req, res, endpoint, req.headers.authorization, 'test'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    const res = await fetch(url, { headers: { Authorization: `bearer  ${TOKEN} ` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(m.registry.contentType);
    const body = await res.text();
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(body));
    expect(parseExposition(body).has('emq_fence_state')).toBe(true);
    expect((await fetch(url)).status).toBe(401);
  });
});
