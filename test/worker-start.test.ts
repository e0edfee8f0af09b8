// The Worker as wrangler.toml defines it, started from Node with wrangler's
// unstable_startWorker (workerd underneath), driven over real HTTP, through the real
// gateway to a real Valkey.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mintId } from '../shared/index.js';
import './workers/offline-env.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

const TOKEN = 'start-worker-token-0123456789';

describe('the Worker from wrangler.toml (unstable_startWorker)', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let gateway: GatewayProcess;
  let admin: Admin;
  let worker: Awaited<ReturnType<typeof import('wrangler').unstable_startWorker>>;
  let url: URL;

  beforeAll(async () => {
    gateway = await startGatewayProcess(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
    const { unstable_startWorker } = await import('wrangler');
    worker = await unstable_startWorker({
      config: 'wrangler.toml',
      bindings: {
        EMQ_REST_URL: { type: 'plain_text', value: gateway.url },
        EMQ_REST_TOKEN: { type: 'secret_text', value: gateway.producer },
        EMQ_TOKENS: { type: 'secret_text', value: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) },
      },
      dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: false, watch: false, logLevel: 'warn' },
    });
    await worker.ready;
    url = await worker.url;
  });
  afterAll(async () => {
    await worker?.dispose();
    admin?.close();
    expect(await gateway?.stop()).toBe(0);
  });

  it('listens on loopback', () => {
    expect(url.hostname).toBe('127.0.0.1');
  });

  it('enqueues over HTTP: 201, then 200 duplicate for the same Emq-Job-Id, then reads it back', async () => {
    const q = freshQueue('sw');
    const id = mintId();
    const post = (body: string) =>
      fetch(new URL(`/v1/queues/${q}/jobs`, url), { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}`, 'Emq-Job-Id': id } });
    const first = await post('hello from node');
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ id, queue: q, verdict: 'enqueued' });
    const again = await post('another payload');
    expect(again.status).toBe(200);
    expect(((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer).toString()).toBe('hello from node');
    const read = await fetch(new URL(`/v1/queues/${q}/jobs/${id}`, url), { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(await read.json()).toEqual({ id, queue: q, state: 'pending', attempts: 0 });
  });

  it('refuses a wrong token with a problem document, writing nothing', async () => {
    const q = freshQueue('sw');
    const res = await fetch(new URL(`/v1/queues/${q}/jobs`, url), { method: 'POST', body: 'x', headers: { Authorization: 'Bearer wrong-token-0123456789' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await admin.footprint(q)).toEqual({});
  });
});
