// One corpus of raw requests through the producer's three ways in, all over REST through one
// real gateway to one real Valkey:
//   worker   the Worker bundle under bare workerd (its Hono app: hono-app.ts)
//   node     `emq producer` (the node:http listener: node-http.ts)
//   mounted  createProducerApp mounted under /api/emq in a user's Hono app (with a middleware
//            of its own), served on @hono/node-server
// Every answer's status, headers (names and values), body and log line must be equal across
// the three once normalised: request and minted job ids, times and durations, each way's own
// queue names (ok.w… / ok.n… / ok.h…), the mount prefix, the log line's `app`, and the
// transport's own headers (Date, Connection, Keep-Alive, Transfer-Encoding).
import { createHmac } from 'node:crypto';
import { type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { requestLog } from '../functions/http/request-log.js';
import { configFrom } from '../functions/producer/config.js';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { connectRest } from '../shared/connections/rest.js';
import { mintId } from '../shared/index.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';
import { startWorkerd, type WorkerdProcess } from './support/workerd.js';

const TOKEN = 'paths-token-0123456789abcdef';
const OTHER = 'paths-other-token-0123456789ab'; // a valid token whose queues are elsewhere
const READER = 'paths-reader-token-0123456789a'; // may only read
const WRITER = 'paths-writer-token-0123456789a'; // may only enqueue
const GH_SECRET = 'paths-gh-secret-0123456789';
const MAX = 1024; // EMQ_MAX_PAYLOAD_BYTES
const PREFIX = '/api/emq';
const RUN = Date.now().toString(36);
const vars: Record<string, string> = {
  EMQ_TOKENS: JSON.stringify([
    { token: TOKEN, queues: ['ok.*'], can: ['enqueue', 'read', 'control'] },
    { token: OTHER, queues: ['elsewhere'] },
    { token: READER, queues: ['ok.*'], can: ['read'] },
    { token: WRITER, queues: ['ok.*'], can: ['enqueue'] },
  ]),
  EMQ_SOURCES: JSON.stringify({ gh: { kind: 'github', secrets: [GH_SECRET], queue: `hooks-${RUN}` } }),
  EMQ_MAX_PAYLOAD_BYTES: String(MAX),
  EMQ_MAX_BATCH_BYTES: String(4 * MAX),
};

interface Case {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent as Transfer-Encoding: chunked, in two writes. */
  chunked?: boolean;
  /**
   * The runtimes' URL parsers differ here: workerd keeps a percent-encoded dot segment in the
   * URL, so the Worker routes its decoded path as sent (a literal '..' segment: no route's,
   * 405); Node's URL parser (both Node ways) resolves it first. The Node ways must agree.
   */
  workerd?: number;
}

const ID = mintId(); // ids given by the caller: the same on every way in (each has its own queues)
const ID2 = mintId();
const GROUP = mintId();
const ID3 = mintId(); // a scheduled job the control routes act on
const RESCHEDULE_AT = String(Date.now() + 7_200_000);
const auth = { Authorization: `Bearer ${TOKEN}` };
const sign = (body: string) => `sha256=${createHmac('sha256', GH_SECRET).update(body).digest('hex')}`;

/** The corpus for one way in; `t` names its queues (one letter, so every text keeps its length). */
function corpus(t: string): Case[] {
  const q = (n: number | string) => `ok.${t}${n}`;
  const post = (name: string, path: string, body: string | Buffer, headers: Record<string, string> = {}): Case => ({
    name,
    method: 'POST',
    path,
    body,
    headers: { ...auth, ...headers },
  });
  const hook = JSON.stringify({ action: 'opened', run: RUN, way: t }); // deduplicated by its body: one per way
  const ghHeaders = (delivery: string, signature = sign(hook)) => ({
    'X-GitHub-Delivery': `${delivery}-${t}-${RUN}`,
    'X-GitHub-Event': 'issues',
    'X-Hub-Signature-256': signature,
    'Content-Type': 'application/json',
  });
  const notBefore = new Date(Date.now() + 3_600_000).toISOString();
  return [
    post('job, plain', `/v1/queues/${q(1)}/jobs`, 'hello'),
    post('job, Emq-Job-Id', `/v1/queues/${q(1)}/jobs`, 'given', { 'Emq-Job-Id': ID }),
    post('job, Emq-Job-Id again: duplicate', `/v1/queues/${q(1)}/jobs`, 'given again', { 'Emq-Job-Id': ID }),
    post('job, Idempotency-Key', `/v1/queues/${q(2)}/jobs`, 'keyed', { 'Idempotency-Key': 'key-1' }),
    post('job, Idempotency-Key again: duplicate', `/v1/queues/${q(2)}/jobs`, 'keyed', { 'Idempotency-Key': 'key-1' }),
    post('job, Idempotency-Key, another payload: conflict', `/v1/queues/${q(2)}/jobs`, 'other', { 'Idempotency-Key': 'key-1' }),
    post('job, bad Idempotency-Key', `/v1/queues/${q(2)}/jobs`, 'x', { 'Idempotency-Key': 'k'.repeat(256) }),
    post('job, Emq-Group', `/v1/queues/${q(3)}/jobs`, 'laned', { 'Emq-Group': GROUP }),
    post('job, bad Emq-Group', `/v1/queues/${q(3)}/jobs`, 'laned', { 'Emq-Group': 'not-a-group' }),
    post('job, Emq-Delay', `/v1/queues/${q(4)}/jobs`, 'later', { 'Emq-Delay': '5m' }),
    post('job, bad Emq-Delay', `/v1/queues/${q(4)}/jobs`, 'later', { 'Emq-Delay': 'soon' }),
    post('job, Emq-Not-Before', `/v1/queues/${q(4)}/jobs`, 'at', { 'Emq-Not-Before': notBefore }),
    post('job, bad Emq-Not-Before', `/v1/queues/${q(4)}/jobs`, 'at', { 'Emq-Not-Before': 'tomorrow' }),
    post('job, bad Emq-Job-Id', `/v1/queues/${q(1)}/jobs`, 'x', { 'Emq-Job-Id': 'nope' }),
    post('job, bad queue', `/v1/queues/ok.${t}%21bad/jobs`, 'x'),
    post('job, a forbidden queue', `/v1/queues/no.${t}1/jobs`, 'x'),
    { name: 'job, no token', method: 'POST', path: `/v1/queues/${q(1)}/jobs`, body: 'x' },
    post('job, unknown token', `/v1/queues/${q(1)}/jobs`, 'x', { Authorization: 'Bearer unknown-token-0123456789' }),
    post('job, a token for other queues', `/v1/queues/${q(1)}/jobs`, 'x', { Authorization: `Bearer ${OTHER}` }),
    post('job, a token that may only read', `/v1/queues/${q(1)}/jobs`, 'x', { Authorization: `Bearer ${READER}` }),
    post('job, over the cap (declared)', `/v1/queues/${q(5)}/jobs`, 'x'.repeat(MAX + 1)),
    { ...post('job, chunked', `/v1/queues/${q(5)}/jobs`, 'chunked payload'), chunked: true },
    { ...post('job, chunked over the cap', `/v1/queues/${q(5)}/jobs`, 'y'.repeat(MAX + 100)), chunked: true },
    post('job, empty payload', `/v1/queues/${q(5)}/jobs`, ''),
    post('job, X-Request-Id and traceparent', `/v1/queues/${q(5)}/jobs`, 'traced', {
      'X-Request-Id': 'caller-id-1',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    }),
    post('job, a query string', `/v1/queues/${q(6)}/jobs?x=1&y=2`, 'queried'),
    post('job, percent-encoded queue', `/v1/queues/ok.%${t.charCodeAt(0).toString(16)}6/jobs`, 'encoded'),
    post('job, dot segments', `/v1/queues/${q(9)}/../${q(6)}/jobs`, 'dotted'),
    { ...post('job, encoded dot segments', `/v1/queues/${q(9)}/%2e%2e/${q(6)}/jobs`, 'dotted'), workerd: 405 },
    post('job, encoded slash in the queue', `/v1/queues/ok.${t}%2F6/jobs`, 'x'),
    post('batch', `/v1/queues/${q(7)}/batch`, JSON.stringify([{ payload: 'a' }, { payload: 'b', id: ID2 }, { payload: 'c', delay: '1m' }])),
    post('batch again: duplicates', `/v1/queues/${q(7)}/batch`, JSON.stringify([{ payload: 'b', id: ID2 }])),
    post('batch, not JSON', `/v1/queues/${q(7)}/batch`, '[{'),
    post('batch, bad item', `/v1/queues/${q(7)}/batch`, JSON.stringify([{ payload: 'a', colour: 'red' }])),
    post(
      'batch, idempotencyKey (and a repeat inside the batch)',
      `/v1/queues/${q(10)}/batch`,
      JSON.stringify([
        ...[
          { payload: 'k1', idempotencyKey: 'key 1' },
          { payload: 'k2', group: GROUP, idempotencyKey: 'key-2' },
          { payload: 'k3', delay: '1m', idempotencyKey: 'key-3' },
        ],
        { payload: 'k1', idempotencyKey: 'key 1' },
      ]),
    ),
    post(
      'batch, idempotencyKey again: duplicates',
      `/v1/queues/${q(10)}/batch`,
      JSON.stringify([
        { payload: 'k1', idempotencyKey: 'key 1' },
        { payload: 'k2', group: GROUP, idempotencyKey: 'key-2' },
        { payload: 'k3', delay: '1m', idempotencyKey: 'key-3' },
      ]),
    ),
    post(
      'batch, idempotencyKey with another payload',
      `/v1/queues/${q(10)}/batch`,
      JSON.stringify([{ payload: 'new' }, { payload: 'other', idempotencyKey: 'key 1' }]),
    ),
    post('batch, bad idempotencyKey', `/v1/queues/${q(10)}/batch`, JSON.stringify([{ payload: 'a', idempotencyKey: ' leading space' }])),
    post('flow, one queue', `/v1/queues/${q(8)}/flows`, JSON.stringify({ parent: { payload: 'p', id: ID }, children: [{ payload: 'c1' }, { payload: 'c2' }] })),
    post(
      'flow, again: duplicate',
      `/v1/queues/${q(8)}/flows`,
      JSON.stringify({ parent: { payload: 'p', id: ID }, children: [{ payload: 'c1' }, { payload: 'c2' }] }),
    ),
    post('flow, across queues', `/v1/queues/${q(8)}/flows`, JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: 'c', queue: q('c') }] })),
    post(
      'flow, a forbidden child queue',
      `/v1/queues/${q(8)}/flows`,
      JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: 'c', queue: `no.${t}` }] }),
    ),
    post('flow, no children', `/v1/queues/${q(8)}/flows`, JSON.stringify({ parent: { payload: 'p' }, children: [] })),
    post(
      'flow, a child id that names a job: 409',
      `/v1/queues/${q(1)}/flows`,
      JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: 'c', id: ID }] }),
    ),
    post('flow, over the cap', `/v1/queues/${q(8)}/flows`, 'z'.repeat(4 * MAX + 1)),
    { name: 'get job, found', method: 'GET', path: `/v1/queues/${q(1)}/jobs/${ID}`, headers: auth },
    { name: 'get job, missing', method: 'GET', path: `/v1/queues/${q(1)}/jobs/${ID2}`, headers: auth },
    { name: 'get job, bad id', method: 'GET', path: `/v1/queues/${q(1)}/jobs/nope`, headers: auth },
    { name: 'get job, a token that may only enqueue', method: 'GET', path: `/v1/queues/${q(1)}/jobs/${ID}`, headers: { Authorization: `Bearer ${WRITER}` } },
    { name: 'get job, HEAD', method: 'HEAD', path: `/v1/queues/${q(1)}/jobs/${ID}`, headers: auth },
    post('control: a scheduled job in a lane', `/v1/queues/${q(11)}/jobs`, 'later', { 'Emq-Job-Id': ID3, 'Emq-Delay': '1h', 'Emq-Group': GROUP }),
    { name: 'control: reschedule', method: 'PATCH', path: `/v1/queues/${q(11)}/jobs/${ID3}`, headers: { ...auth, 'Emq-Not-Before': RESCHEDULE_AT } },
    { name: 'control: reschedule, no time', method: 'PATCH', path: `/v1/queues/${q(11)}/jobs/${ID3}`, headers: auth },
    { name: 'control: get job with its payload', method: 'GET', path: `/v1/queues/${q(11)}/jobs/${ID3}?payload=1`, headers: auth },
    post('control: promote', `/v1/queues/${q(11)}/jobs/${ID3}/promote`, ''),
    post('control: promote again: not scheduled', `/v1/queues/${q(11)}/jobs/${ID3}/promote`, ''),
    { name: 'control: the queue', method: 'GET', path: `/v1/queues/${q(11)}`, headers: auth },
    { name: 'control: the queue, a bad count', method: 'GET', path: `/v1/queues/${q(11)}?count=0`, headers: auth },
    { name: 'control: a group, set', method: 'PUT', path: `/v1/queues/${q(11)}/groups/${GROUP}`, headers: auth, body: '{"limit":2,"weight":5}' },
    { name: 'control: a group, a bad body', method: 'PUT', path: `/v1/queues/${q(11)}/groups/${GROUP}`, headers: auth, body: '{"limit":0}' },
    { name: 'control: a group', method: 'GET', path: `/v1/queues/${q(11)}/groups/${GROUP}`, headers: auth },
    { name: 'control: delete', method: 'DELETE', path: `/v1/queues/${q(11)}/jobs/${ID3}`, headers: auth },
    { name: 'control: delete again: not found', method: 'DELETE', path: `/v1/queues/${q(11)}/jobs/${ID3}`, headers: auth },
    post('control: pause', `/v1/queues/${q(11)}/pause`, ''),
    post('control: resume', `/v1/queues/${q(11)}/resume`, ''),
    post('control: pause, a token that may only read', `/v1/queues/${q(11)}/pause`, '', { Authorization: `Bearer ${READER}` }),
    {
      name: 'schedule: register',
      method: 'PUT',
      path: `/v1/queues/${q(12)}/schedules/nightly`,
      headers: auth,
      body: '{"every":"1h","payload":"n","firstIn":"1h"}',
    },
    { name: 'schedule: again: exists', method: 'PUT', path: `/v1/queues/${q(12)}/schedules/nightly`, headers: auth, body: '{"every":"1h","payload":"n"}' },
    {
      name: 'schedule: another period: 409',
      method: 'PUT',
      path: `/v1/queues/${q(12)}/schedules/nightly`,
      headers: auth,
      body: '{"every":"2h","payload":"n"}',
    },
    { name: 'schedule: a bad body', method: 'PUT', path: `/v1/queues/${q(12)}/schedules/nightly`, headers: auth, body: '{"every":"soon"}' },
    post('schedule: pause', `/v1/queues/${q(12)}/schedules/nightly/pause`, ''),
    { name: 'schedule: list', method: 'GET', path: `/v1/queues/${q(12)}/schedules`, headers: auth },
    { name: 'schedule: delete', method: 'DELETE', path: `/v1/queues/${q(12)}/schedules/nightly`, headers: auth },
    { name: 'schedule: missing', method: 'GET', path: `/v1/queues/${q(12)}/schedules/nightly`, headers: auth },
    { name: 'webhook, signed', method: 'POST', path: '/v1/webhooks/gh', body: hook, headers: ghHeaders('d1') },
    { name: 'webhook, signed again: duplicate', method: 'POST', path: '/v1/webhooks/gh', body: hook, headers: ghHeaders('d1') },
    { name: 'webhook, wrong signature', method: 'POST', path: '/v1/webhooks/gh', body: hook, headers: ghHeaders('d2', sign('other')) },
    { name: 'webhook, unknown source', method: 'POST', path: '/v1/webhooks/nope', body: hook, headers: ghHeaders('d3') },
    { name: 'healthz', method: 'GET', path: '/healthz' },
    { name: 'healthz, HEAD', method: 'HEAD', path: '/healthz' },
    { name: 'healthz, a query string', method: 'GET', path: '/healthz?probe=1' },
    { name: 'readyz', method: 'GET', path: '/readyz' },
    { name: 'openapi.json', method: 'GET', path: '/openapi.json' },
    { name: 'unknown route', method: 'GET', path: '/nope' },
    { name: 'unknown route, trailing slash', method: 'GET', path: '/healthz/' },
    { name: 'unknown route under /v1', method: 'GET', path: '/v1/nope' },
    { name: 'wrong method, no token', method: 'PUT', path: `/v1/queues/${q(1)}/jobs`, body: 'x' },
    { name: 'wrong method', method: 'DELETE', path: `/v1/queues/${q(1)}/jobs`, headers: auth },
    { name: 'wrong method on a job', method: 'POST', path: `/v1/queues/${q(1)}/jobs/${ID}`, headers: auth, body: 'x' },
    { name: 'wrong method outside /v1', method: 'POST', path: '/healthz', body: 'x' },
    { name: 'GET …/jobs', method: 'GET', path: `/v1/queues/${q(1)}/jobs`, headers: auth },
    { name: 'an empty queue segment', method: 'POST', path: '/v1/queues//jobs', headers: auth, body: 'x' },
    { name: '/v1/queues alone', method: 'GET', path: '/v1/queues' },
  ];
}

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request as given, on a connection of its own. */
function send(base: string, c: Case): Promise<Raw> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const body = c.body === undefined ? undefined : Buffer.from(c.body);
    const headers: Record<string, string | number> = { ...c.headers };
    if (body && !c.chunked) headers['Content-Length'] = body.length;
    const req = request({ host: hostname, port, method: c.method, path: c.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    if (body && c.chunked) {
      req.write(body.subarray(0, 8));
      req.end(body.subarray(8));
    } else req.end(body);
  });
}

interface Way {
  tag: string;
  url: string;
  prefix: string;
  lines(): string[];
}

const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** An answer and its log line, normalised (see the top of this file). */
async function answered(way: Way, c: Case) {
  const raw = await send(way.url, { ...c, path: way.prefix + c.path });
  const rid = String(raw.headers['x-request-id']);
  const minted = new Map<string, string>();
  const text = (s: string) => {
    let out = way.prefix ? s.replaceAll(way.prefix, '') : s;
    out = out
      .replaceAll(`ok.${way.tag}`, 'ok.T')
      .replaceAll(`no.${way.tag}`, 'no.T')
      .replaceAll(`%${way.tag.charCodeAt(0).toString(16)}`, '%T');
    out = out.replaceAll(ID, '<ID>').replaceAll(ID2, '<ID2>').replaceAll(GROUP, '<GROUP>');
    out = out.replace(/\b[A-Z]{3}[0-9][0-9A-Za-z]{10}\b/g, (id) => {
      if (!minted.has(id)) minted.set(id, `<minted${minted.size}>`);
      return minted.get(id)!;
    });
    return out.replaceAll(rid, '<request-id>').replace(',"servers":[{"url":""}]', '');
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw.headers)) if (!TRANSPORT.has(name)) headers[name] = text(String(value));
  const body = text(raw.body);
  if (headers['content-length'] !== undefined) {
    expect(headers['content-length']).toBe(String(Buffer.byteLength(raw.body)));
    headers['content-length'] = String(Buffer.byteLength(body)); // the normalised body's
  }
  // the request's log line, by its id (workerd's stdout may lag the answer)
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && !line; i++) {
    const found = way.lines().find((l) => l.includes(`"id":"${rid}"`));
    if (found) line = JSON.parse(text(found)) as Record<string, unknown>;
    else await new Promise((r) => setTimeout(r, 20));
  }
  if (line) {
    for (const field of ['time', 'ms', 'app']) delete line[field];
    expect(line.id).toBe('<request-id>');
  }
  return { status: raw.status, headers, body, line };
}

describe('one corpus through the Worker (workerd), emq producer and the mounted Hono app: the same answers and log lines', () => {
  let gateway: GatewayProcess;
  let worker: WorkerdProcess;
  let producer: ProducerProcess;
  let user: ServerType;
  const mountedLines: string[] = [];
  let middlewareSaw = 0;
  const ways: Way[] = [];

  beforeAll(async () => {
    gateway = await startGatewayProcess(inject('servers')[0]!.url);
    const rest = { EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.control };
    [worker, producer] = await Promise.all([startWorkerd({ ...vars, ...rest }), startProducerProcess({ ...vars, ...rest })]);
    const config = configFrom({ ...vars, ...rest });
    const connection = connectRest({ url: gateway.url, token: gateway.control });
    const app = new Hono();
    app.use('*', async (_c, next) => {
      middlewareSaw++; // a user's middleware: it must see every request, jobs included
      await next();
    });
    const log = requestLog({ app: 'mounted', level: () => 'info', write: (l) => mountedLines.push(l) });
    app.route(PREFIX, createProducerApp({ config: () => config, connection: () => connection, observe: { sinks: [log] } }));
    const url = await new Promise<string>((resolve) => {
      user = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
    ways.push(
      { tag: 'w', url: worker.url, prefix: '', lines: () => worker.lines() },
      { tag: 'n', url: producer.url, prefix: '', lines: () => producer.stdout().split('\n') },
      { tag: 'h', url, prefix: PREFIX, lines: () => mountedLines },
    );
  }, 120_000);

  afterAll(async () => {
    await new Promise<void>((r) => (user ? user.close(() => r()) : r()));
    await worker?.stop();
    await producer?.stop();
    if (gateway) expect(await gateway.stop()).toBe(0);
  });

  it('answers every request of the corpus alike, each with its log line', async () => {
    const cases = corpus('T');
    const results = await Promise.all(
      ways.map(async (way) => {
        const out = [];
        for (const c of corpus(way.tag)) out.push(await answered(way, c));
        return out;
      }),
    );
    const [worker, node, mounted] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];
    cases.forEach((c, i) => {
      // a path the producer has no route for is the user's app's to answer (Hono's own 404)
      if (node[i]!.line?.route === 'unmatched') expect.soft(mounted[i]!.body, `${c.name}: the user's app's 404`).toBe('404 Not Found');
      else expect.soft(mounted[i], `${c.name}: the mounted app against emq producer`).toEqual(node[i]);
      if (c.workerd === undefined) expect.soft(worker[i], `${c.name}: the Worker against emq producer`).toEqual(node[i]);
      else expect.soft(worker[i]!.status, `${c.name}: the Worker`).toBe(c.workerd);
      expect.soft(node[i]!.line, `${c.name}: a log line`).toBeDefined();
    });
    expect(middlewareSaw).toBe(cases.length);
    // the corpus reaches what it says: every route, refusals and duplicates among them
    const statuses = new Set(worker.map((r) => r.status));
    for (const s of [200, 201, 400, 401, 403, 404, 405, 409, 413, 422]) expect(statuses, `a ${s}`).toContain(s);
  }, 120_000);
});
