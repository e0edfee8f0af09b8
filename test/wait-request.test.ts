// ?wait=N on the routes that write jobs, over real servers: `emq producer` over glide and over
// REST through a real gateway (which runs the WAIT itself, asked by Emq-Wait). Without a
// replica (the test server): 503 not_replicated with the counts, the job on the primary, a bad
// ?wait refused with nothing written. With a replica attached: answered after the WAIT, the
// job already on the replica. On the cluster harness (3 primaries, a replica each): wait=1 is
// met on every queue's primary, wait=2 is not (one replica each). And the gateway's own rules.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { gatewayConfigFrom } from '../functions/gateway/config.js';
import { configFrom } from '../functions/producer/config.js';
import { startCluster, type RunningCluster } from '../scripts/cluster.js';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { ConfigError } from '../shared/config/parse.js';
import { mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';
import { producerOver, transports } from './support/producer-over.js';

const TOKEN = 'wait-route-token-0123456789abcdef';
const TOKENS = JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read'] }]);

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function post(base: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}`, ...headers } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const job = (id: string) => ({ 'Emq-Job-Id': id, 'Content-Type': 'application/octet-stream' });
const exists = async (admin: Admin, q: string, id: string) => Number(await admin.call('EXISTS', `emq:{${q}}:job:${id}`));

/** Sends until the answer is not 503 not_replicated (a replica just attached may ack late), at most 20 times. */
async function untilReplicated(send: () => Promise<Reply>): Promise<Reply> {
  for (let i = 0; ; i++) {
    const r = await send();
    if (r.body.code !== 'not_replicated' || i >= 20) return r;
  }
}

describe.each(transports())('?wait=N without a replica: $name', (transport) => {
  const over = producerOver(transport, { EMQ_TOKENS: TOKENS });

  it('POST …/jobs?wait=1: 503 not_replicated with the counts and Retry-After; the job landed; the same request again is safe', async () => {
    const q = freshQueue('wait');
    const id = mintId();
    const first = await post(over.producer.url, `/v1/queues/${q}/jobs?wait=1&wait_timeout_ms=100`, 'x', job(id));
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ code: 'not_replicated', replicas: 0, wanted: 1 });
    expect(first.body.detail).toMatch(/may have landed.*send the same request again/);
    expect(first.headers.get('retry-after')).toBe('1');
    // WAIT cannot undo the write: it is on the primary, only not safe from a failover
    expect(await exists(over.admin, q, id)).toBe(1);
    const again = await post(over.producer.url, `/v1/queues/${q}/jobs?wait=1&wait_timeout_ms=100`, 'x', job(id));
    expect(again.body).toMatchObject({ code: 'not_replicated' });
    expect(Number(await over.admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(1);
  });

  // the soak on the cluster harness met it: after a kill -9 the new primary has no replica, so
  // every write is a 503 not_replicated that landed; the consumer completed the job (its row
  // gone) before the resend, which a plain Emq-Job-Id then admitted anew and it ran twice
  it('the same request again after the job completed: duplicate, not admitted anew (flat, laned, scheduled, a batch)', async () => {
    const q = freshQueue('wait');
    const consumer = libraryConsumer(over.admin, q);
    const cases: Array<[string, Record<string, string>, () => Promise<{ id: string; token: number } | null>]> = [
      ['flat', {}, () => consumer.claim()],
      ['laned', { 'Emq-Group': 'PRT0KHTOWnGLuC' }, () => consumer.gclaim()],
      ['scheduled', { 'Emq-Delay': '1ms' }, async () => (await consumer.promote(), consumer.claim())],
    ];
    for (const [name, headers, claim] of cases) {
      const id = mintId();
      const send = () => post(over.producer.url, `/v1/queues/${q}/jobs?wait=1&wait_timeout_ms=20`, name, { ...job(id), ...headers });
      expect((await send()).body.code, name).toBe('not_replicated');
      if (name === 'scheduled') await new Promise((r) => setTimeout(r, 5));
      const claimed = await claim();
      expect(claimed?.id, name).toBe(id);
      expect(await consumer.complete(id, claimed!.token), name).toBe('ok');
      expect(await exists(over.admin, q, id), name).toBe(0);
      expect((await send()).body.code, name).toBe('not_replicated'); // the answer is the WAIT's; the job is the same
      expect(await exists(over.admin, q, id), `${name}: admitted anew`).toBe(0);
    }
    // a batch's items alike
    const ids = [mintId(), mintId()];
    const batch = () => post(over.producer.url, `/v1/queues/${q}/batch?wait=1&wait_timeout_ms=20`, JSON.stringify(ids.map((id) => ({ id, payload: id }))));
    const first = await batch();
    expect(first.body).toMatchObject({ code: 'not_replicated', replicas: 0, wanted: 1 });
    for (let i = 0; i < ids.length; i++) {
      const claimed = await consumer.claim();
      expect(await consumer.complete(claimed!.id, claimed!.token)).toBe('ok');
    }
    expect((await batch()).body.code).toBe('not_replicated');
    for (const id of ids) expect(await exists(over.admin, q, id), `batch item ${id}: admitted anew`).toBe(0);
    // a flow: its completed parent's :dependencies and :processed outlive it, and the resend finds them
    const [parent, child] = [mintId(), mintId()];
    const flow = () =>
      post(
        over.producer.url,
        `/v1/queues/${q}/flows?wait=1&wait_timeout_ms=20`,
        JSON.stringify({ parent: { id: parent, payload: 'p' }, children: [{ id: child, payload: 'c' }] }),
      );
    expect((await flow()).body.code).toBe('not_replicated');
    for (const id of [child, parent]) {
      const claimed = await consumer.claim();
      expect(claimed?.id).toBe(id);
      expect(await consumer.complete(id, claimed!.token)).toBe('ok');
    }
    expect((await flow()).body.code).toBe('not_replicated');
    for (const id of [parent, child]) expect(await exists(over.admin, q, id), `flow job ${id}: admitted anew`).toBe(0);
    expect(Number(await over.admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(0);
  });

  it('batch and flow with ?wait=1: 503 not_replicated, the same counts', async () => {
    const q = freshQueue('wait');
    const batch = await post(over.producer.url, `/v1/queues/${q}/batch?wait=1&wait_timeout_ms=50`, JSON.stringify([{ id: mintId(), payload: 'a' }]));
    expect(batch.status).toBe(503);
    expect(batch.body).toMatchObject({ code: 'not_replicated', replicas: 0, wanted: 1 });
    const flow = { parent: { id: mintId(), payload: 'p' }, children: [{ id: mintId(), payload: 'c' }] };
    const flowed = await post(over.producer.url, `/v1/queues/${q}/flows?wait=1&wait_timeout_ms=50`, JSON.stringify(flow));
    expect(flowed.status).toBe(503);
    expect(flowed.body).toMatchObject({ code: 'not_replicated', wanted: 1 });
  });

  it('?wait=0 is no wait: 201', async () => {
    const q = freshQueue('wait');
    const r = await post(over.producer.url, `/v1/queues/${q}/jobs?wait=0`, 'x', job(mintId()));
    expect(r.status).toBe(201);
  });

  it.each([
    ['wait=x', /wait must be/],
    ['wait=17', /wait must be/],
    ['wait=-1', /wait must be/],
    ['wait=1&wait_timeout_ms=0', /wait_timeout_ms must be/],
    ['wait=1&wait_timeout_ms=1001', /from 1 to 1000 \(EMQ_WAIT_MAX_MS\)/],
    ['wait_timeout_ms=5', /wait must be/],
  ])('?%s: 400 invalid_query, nothing written', async (query, detail) => {
    const q = freshQueue('wait');
    const before = await snapshot(over.admin, q);
    for (const path of ['jobs', 'batch', 'flows']) {
      const r = await post(over.producer.url, `/v1/queues/${q}/${path}?${query}`, path === 'jobs' ? 'x' : '[]', path === 'jobs' ? job(mintId()) : {});
      expect(r.status, path).toBe(400);
      expect(r.body.code).toBe('invalid_query');
      expect(r.body.detail).toMatch(detail);
    }
    expect(await snapshot(over.admin, q)).toEqual(before);
  });
});

describe('?wait=1 with a replica attached', () => {
  let primary: RunningServer;
  let replica: RunningServer;
  let gateway: GatewayProcess;
  const producers: Array<[string, ProducerProcess]> = [];

  beforeAll(async () => {
    primary = await startServer({ config: ['repl-diskless-sync-delay 0'] });
    replica = await startServer({ config: [`replicaof 127.0.0.1 ${primary.port}`] });
    const admin = await connectAdmin(primary.url);
    for (let i = 0; ; i++) {
      const info = String(await admin.text('INFO', 'replication'));
      if (/connected_slaves:1/.test(info) && /state=online/.test(info)) break;
      if (i > 200) throw new Error(`the replica did not attach: ${info}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    admin.close();
    gateway = await startGatewayProcess(primary.url);
    producers.push(['glide', await startProducerProcess({ VALKEY_URL: primary.url, EMQ_TOKENS: TOKENS })]);
    producers.push(['rest', await startProducerProcess({ EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer, EMQ_TOKENS: TOKENS })]);
  }, 60_000);
  afterAll(async () => {
    for (const [, p] of producers) await p.stop();
    if (gateway) expect(await gateway.stop()).toBe(0);
    await replica?.stop();
    await primary?.stop();
  });

  it('answered after the WAIT (glide and REST): the job, the batch and the flow are on the replica already', { timeout: 30_000 }, async () => {
    const onReplica = new Redis(replica.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    await onReplica.connect();
    try {
      for (const [name, p] of producers) {
        const q = freshQueue(`wait-${name}`);
        const id = mintId();
        const one = await untilReplicated(() => post(p.url, `/v1/queues/${q}/jobs?wait=1`, 'x', job(id)));
        expect(one.status, name).toBeLessThan(202);
        expect(await onReplica.exists(`emq:{${q}}:job:${id}`), name).toBe(1);
        const ids = [mintId(), mintId()];
        const batch = await untilReplicated(() => post(p.url, `/v1/queues/${q}/batch?wait=1`, JSON.stringify(ids.map((i) => ({ id: i, payload: i })))));
        expect(batch.status, name).toBe(200);
        for (const i of ids) expect(await onReplica.exists(`emq:{${q}}:job:${i}`), name).toBe(1);
        const parent = mintId();
        const flow = { parent: { id: parent, payload: 'p' }, children: [{ id: mintId(), payload: 'c' }] };
        const flowed = await untilReplicated(() => post(p.url, `/v1/queues/${q}/flows?wait=1`, JSON.stringify(flow)));
        expect(flowed.status, name).toBeLessThan(202);
        expect(await onReplica.exists(`emq:{${q}}:job:${parent}`), name).toBe(1);
      }
    } finally {
      onReplica.disconnect();
    }
  });
});

describe('?wait=N on the cluster harness (3 primaries, 1 replica each)', () => {
  let cluster: RunningCluster;
  let gateway: GatewayProcess;
  const producers: Array<[string, ProducerProcess]> = [];

  beforeAll(async () => {
    cluster = await startCluster({ primaries: 3, replicas: 1 });
    gateway = await startGatewayProcess(cluster.url);
    producers.push(['glide', await startProducerProcess({ VALKEY_URL: cluster.url, EMQ_TOKENS: TOKENS })]);
    producers.push(['rest', await startProducerProcess({ EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer, EMQ_TOKENS: TOKENS })]);
  }, 120_000);
  afterAll(async () => {
    for (const [, p] of producers) await p.stop();
    if (gateway) expect(await gateway.stop()).toBe(0);
    await cluster?.stop();
  });

  it('wait=1: met on the primary of each queue (queues over every slot range); wait=2: 503 not_replicated, 1 of 2', { timeout: 60_000 }, async () => {
    for (const [name, p] of producers) {
      for (let i = 0; i < 6; i++) {
        const q = freshQueue(`wc${i}`);
        const r = await untilReplicated(() => post(p.url, `/v1/queues/${q}/jobs?wait=1`, 'x', job(mintId())));
        expect(r.status, `${name} ${q}: ${JSON.stringify(r.body)}`).toBe(201);
      }
      const q = freshQueue('wc');
      const short = await post(p.url, `/v1/queues/${q}/jobs?wait=2&wait_timeout_ms=100`, 'x', job(mintId()));
      expect(short.status, name).toBe(503);
      expect(short.body, name).toMatchObject({ code: 'not_replicated', replicas: 1, wanted: 2 });
    }
  });
});

describe("the gateway's Emq-Wait", () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess(inject('servers')[0]!.url);
  });
  afterAll(async () => {
    if (gateway) expect(await gateway.stop()).toBe(0);
  });
  const send = (token: string, headers: Record<string, string>, body = '[["PING"]]') =>
    fetch(`${gateway.url}/pipeline`, { method: 'POST', body, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers } });

  it('nothing written, nothing to wait for: 200 with Emq-Wait-Replicas as asked', async () => {
    const res = await send(gateway.producer, { 'Emq-Wait': '1', 'Emq-Wait-Timeout-Ms': '50' });
    expect(res.status).toBe(200);
    expect(res.headers.get('emq-wait-replicas')).toBe('1');
  });

  it.each([['0'], ['17'], ['x'], ['1, 1']])('Emq-Wait: %s is 400', async (value) => {
    const res = await send(gateway.producer, { 'Emq-Wait': value });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/Emq-Wait is a whole number of replicas from 1 to 16/);
  });

  it('an admin token may not ask it; nobody may send WAIT itself (it would block the shared connection)', async () => {
    const admin = await send(gateway.admin, { 'Emq-Wait': '1' });
    expect(admin.status).toBe(400);
    expect(((await admin.json()) as { error: string }).error).toMatch(/for producer and control tokens/);
    for (const token of [gateway.producer, gateway.control]) {
      const wait = await send(token, { 'Emq-Wait': '1' }, '[["WAIT","1","10"]]');
      expect(wait.status).toBe(400);
      expect(((await wait.json()) as { error: string }).error).toMatch(/WAIT is not available over REST/);
    }
  });
});

describe('the WAIT caps are checked at start', () => {
  it('EMQ_WAIT_MAX_MS, set, must be below EMQ_REST_TIMEOUT_MS; unset, it is at most half of it', () => {
    const env = { EMQ_TOKENS: TOKENS, EMQ_REST_TIMEOUT_MS: '1000', EMQ_WAIT_MAX_MS: '1000' };
    const err = (() => {
      try {
        configFrom(env);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('EMQ_WAIT_MAX_MS');
    expect(configFrom({ ...env, EMQ_WAIT_MAX_MS: '999' }).waitMaxMs).toBe(999);
    expect(configFrom({ EMQ_TOKENS: TOKENS, EMQ_REST_TIMEOUT_MS: '1000' }).waitMaxMs).toBe(500);
    expect(configFrom({ EMQ_TOKENS: TOKENS }).waitMaxMs).toBe(1000);
  });

  it('EMQ_GATEWAY_WAIT_MAX_MS, set, must be below EMQ_GATEWAY_TIMEOUT_MS; unset, it is at most half of it', () => {
    const env = { VALKEY_URL: 'redis://127.0.0.1:1', EMQ_GATEWAY_TOKENS: `producer:${TOKEN}`, EMQ_GATEWAY_TIMEOUT_MS: '800' };
    expect(() => gatewayConfigFrom({ ...env, EMQ_GATEWAY_WAIT_MAX_MS: '800' })).toThrow(/EMQ_GATEWAY_WAIT_MAX_MS must be below EMQ_GATEWAY_TIMEOUT_MS/);
    expect(gatewayConfigFrom({ ...env, EMQ_GATEWAY_WAIT_MAX_MS: '700' }).settings.waitMaxMs).toBe(700);
    expect(gatewayConfigFrom(env).settings.waitMaxMs).toBe(400);
  });
});
