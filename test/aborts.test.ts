// Finding 7 (second review): a client that aborts its body mid-way is the client's outcome:
// 499 client_closed in the log line and the metrics, no 5xx, no stack on stderr, nothing
// written. Over real sockets, against `emq gateway` and `emq producer` (its node:http
// listener, functions/producer/node-http.ts: every route, declared and chunked bodies).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { abortMidBody } from './support/abort.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { parseExposition } from './support/exposition.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const CALLER = `caller-${randomBytes(12).toString('hex')}`;
const METRICS = `metrics-${randomBytes(12).toString('hex')}`;
const linesOf = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const requests = async (url: string, status: string) => {
  const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } });
  const families = parseExposition(await res.text());
  let sum = 0;
  for (const family of families.values()) {
    for (const sample of family.samples) if (sample.name === 'emq_http_requests_total' && sample.labels.status === status) sum += sample.value;
  }
  return sum;
};

describe('finding 7 (second review): an aborted body is the client’s outcome', () => {
  let valkey: RunningServer;
  let admin: Admin;
  let gateway: GatewayProcess;
  let producer: ProducerProcess;
  const q = `aborts-${Date.now().toString(36)}`;
  beforeAll(async () => {
    valkey = await startServer();
    admin = await connectAdmin(valkey.url);
    gateway = await startGatewayProcess(valkey.url, { EMQ_METRICS_TOKEN: METRICS });
    producer = await startProducerProcess({
      EMQ_TOKENS: JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]),
      EMQ_SOURCES: JSON.stringify({ hooks: { kind: 'github', secrets: ['gh-secret-0123456789abcdef'], queue: q } }),
      EMQ_REST_URL: gateway.url,
      EMQ_REST_TOKEN: gateway.producer,
      EMQ_METRICS_TOKEN: METRICS,
    });
  });
  afterAll(async () => {
    await producer?.stop();
    await gateway?.stop();
    admin?.close();
    await valkey?.stop();
  });

  const bearer = { Authorization: `Bearer ${CALLER}` };
  it.each([
    ['producer', 'POST …/jobs', `/v1/queues/${q}/jobs`, bearer, false, '/v1/queues/:queue/jobs'],
    ['producer', 'POST …/jobs, chunked', `/v1/queues/${q}/jobs`, bearer, true, '/v1/queues/:queue/jobs'],
    ['producer', 'POST …/batch', `/v1/queues/${q}/batch`, bearer, false, '/v1/queues/:queue/batch'],
    ['producer', 'POST …/flows, chunked', `/v1/queues/${q}/flows`, bearer, true, '/v1/queues/:queue/flows'],
    ['producer', 'POST /v1/webhooks/:source, no credential', '/v1/webhooks/hooks', {}, false, '/v1/webhooks/:source'],
    ['gateway', 'a path-style command', `/set/emq:{${q}}:x`, 'producer', false, '/*'],
    ['gateway', 'POST /pipeline, chunked', '/pipeline', 'admin', true, '/pipeline'],
  ] as const)('finding 7 (second review): %s, %s: 499 client_closed, no 5xx, no stack', async (app, _, path, auth, chunked, route) => {
    const server = app === 'producer' ? producer : gateway;
    const headers = typeof auth === 'string' ? { Authorization: `Bearer ${auth === 'producer' ? gateway.producer : gateway.admin}` } : auth;
    const [fails, closed, stderr] = [await requests(server.url, '500'), await requests(server.url, '499'), server.stderr()];
    const seen = linesOf(server.stdout()).length;
    await abortMidBody(server.url, path, headers, chunked);
    const lineOf = () =>
      linesOf(server.stdout())
        .slice(seen)
        .find((l) => l.route === route && l.method === 'POST');
    await expect.poll(lineOf, { timeout: 5000 }).toBeDefined();
    const line = lineOf();
    expect(line).toMatchObject({ status: 499, code: 'client_closed' });
    expect(await requests(server.url, '500')).toBe(fails);
    expect(await requests(server.url, '499')).toBe(closed + 1);
    expect(server.stderr()).toBe(stderr); // no stack, no line at all
    expect(await admin.footprint(q)).toEqual({});
  });
});
