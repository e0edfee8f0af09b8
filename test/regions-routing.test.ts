// Home regions for real: two regions, each with its own Valkey server behind its own gateway
// process (`emq gateway`), and each region's Worker started (wrangler's unstable_startWorker,
// workerd underneath) from a wrangler.toml that scripts/regions.ts (dist/scripts/regions.js) generated from a
// regions.json, driven over real HTTP. Only the secrets are given as bindings, as
// `wrangler secret put` would.
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import './workers/offline-env.js';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'regions-caller-token-0123456789';
const secret = (value: string) => ({ type: 'secret_text' as const, value });
const token = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

type Worker = Awaited<ReturnType<typeof import('wrangler').unstable_startWorker>>;

describe("a queue homed in another region: the Worker enqueues through that region's gateway", () => {
  let valkeyEu: RunningServer;
  let us: Admin; // us-east's Valkey, seen directly
  let eu: Admin; // eu-west's Valkey
  let gateways: GatewayProcess[] = [];
  const workers: Worker[] = [];
  let usUrl: URL;
  let euUrl: URL;
  let dir: string;
  // us-east's gateway takes only its own token and the shared one; eu-west's, likewise: so
  // us-east's Worker reaches eu-west only with its EMQ_REST_TOKEN_EU_WEST secret
  const usToken = token('us');
  const euToken = token('eu');
  const shared = token('shared');

  beforeAll(async () => {
    const valkeyUs = inject('servers')[0]!.url;
    valkeyEu = await startServer();
    [us, eu] = await Promise.all([connectAdmin(valkeyUs), connectAdmin(valkeyEu.url)]);
    gateways = await Promise.all([
      startGatewayProcess(valkeyUs, { EMQ_GATEWAY_TOKENS: `producer:${usToken},producer:${shared}` }),
      startGatewayProcess(valkeyEu.url, { EMQ_GATEWAY_TOKENS: `producer:${euToken},producer:${shared}` }),
    ]);

    dir = mkdtempSync(join(tmpdir(), 'emq-regions-routing-'));
    writeFileSync(
      join(dir, 'wrangler.toml'),
      `name = "echomq-producer"\nmain = ${JSON.stringify(join(root, 'functions', 'producer', 'worker.ts'))}\ncompatibility_date = "2026-05-03"\n`,
    );
    writeFileSync(
      join(dir, 'regions.json'),
      JSON.stringify({
        vars: { EMQ_REST_TIMEOUT_MS: '2000' },
        regions: [
          { name: 'us-east', restUrl: gateways[0]!.url },
          { name: 'eu-west', restUrl: gateways[1]!.url },
          { name: 'ap-south', restUrl: 'http://127.0.0.1:9' }, // nothing listens there
        ],
        queues: { 'eu.*': 'eu-west', 'eu.pinned-us': 'us-east', 'us.*': 'us-east', 'ap.*': 'ap-south' },
      }),
    );
    const generated = spawnSync(
      process.execPath,
      [join(root, 'dist', 'scripts', 'regions.js'), '--regions', join(dir, 'regions.json'), '--wrangler', join(dir, 'wrangler.toml')],
      {
        encoding: 'utf8',
      },
    );
    expect(generated.stderr).toBe('');
    expect(generated.status).toBe(0);

    const { unstable_startWorker } = await import('wrangler');
    const start = async (env: string, secrets: Record<string, string>) => {
      const worker = await unstable_startWorker({
        config: join(dir, 'wrangler.toml'),
        env,
        bindings: Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, secret(v)])),
        dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: false, watch: false, logLevel: 'warn' },
      });
      workers.push(worker);
      await worker.ready;
      return worker.url;
    };
    const callers = JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]);
    const hooks = JSON.stringify({
      hk: { kind: 'hmac', secrets: ['edge-secret-0123456789'], queue: 'eu.hooks', signatureHeader: 'X-Sig', encoding: 'hex', idHeader: 'X-Id' },
    });
    usUrl = await start('us-east', { EMQ_TOKENS: callers, EMQ_SOURCES: hooks, EMQ_REST_TOKEN: usToken, EMQ_REST_TOKEN_EU_WEST: euToken });
    euUrl = await start('eu-west', { EMQ_TOKENS: callers, EMQ_REST_TOKEN: shared });
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.dispose()));
    us?.close();
    eu?.close();
    const codes = await Promise.all(gateways.map((g) => g.stop()));
    await valkeyEu?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    expect(codes).toEqual(gateways.map(() => 0));
  });

  const post = (worker: URL, path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(new URL(path, worker), { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}`, ...headers } });
  const payloadOf = async (valkey: Admin, q: string, id: string) => (await valkey.hgetall(`emq:{${q}}:job:${id}`)).payload?.toString();

  it("us-east's Worker sends eu.* jobs to eu-west's Valkey, not its own, and says so in Emq-Region", async () => {
    const q = freshQueue('eu.orders');
    const res = await post(usUrl, `/v1/queues/${q}/jobs`, 'bound for eu-west');
    expect(res.status).toBe(201);
    expect(res.headers.get('Emq-Region')).toBe('eu-west');
    const { id } = (await res.json()) as { id: string };
    expect(await payloadOf(eu, q, id)).toBe('bound for eu-west');
    expect(Object.keys(await eu.footprint(q))).toEqual([`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`]);
    expect(await us.footprint(q)).toEqual({});

    // the same queue's reads, batches and Idempotency-Keys go to the same home
    const read = await fetch(new URL(`/v1/queues/${q}/jobs/${id}`, usUrl), { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(read.headers.get('Emq-Region')).toBe('eu-west');
    expect(await read.json()).toEqual({ id, queue: q, state: 'pending', attempts: 0 });
    const batch = await post(usUrl, `/v1/queues/${q}/batch`, JSON.stringify([{ payload: 'b1' }, { payload: 'b2' }]));
    expect(batch.status).toBe(200);
    expect(batch.headers.get('Emq-Region')).toBe('eu-west');
    const keyed = await post(usUrl, `/v1/queues/${q}/jobs`, 'keyed', { 'Idempotency-Key': 'order-77' });
    expect(keyed.status).toBe(201);
    const again = await post(usUrl, `/v1/queues/${q}/jobs`, 'keyed', { 'Idempotency-Key': 'order-77' });
    expect(again.status).toBe(200);
    expect(Number(await eu.call('ZCARD', `emq:{${q}}:pending`))).toBe(4);
    expect(await us.footprint(q)).toEqual({});
  });

  it("it took EMQ_REST_TOKEN_EU_WEST to get there: eu-west's gateway refuses us-east's own token", async () => {
    const res = await fetch(gateways[1]!.url, { method: 'POST', headers: { Authorization: `Bearer ${usToken}` }, body: '["PING"]' });
    expect(res.status).toBe(401);
  });

  it('a webhook whose queue is homed in eu-west lands there too', async () => {
    const body = '{"event":"paid"}';
    const sig = createHmac('sha256', 'edge-secret-0123456789').update(body).digest('hex');
    const res = await fetch(new URL('/v1/webhooks/hk', usUrl), { method: 'POST', body, headers: { 'X-Sig': sig, 'X-Id': `d-${mintId()}` } });
    expect(res.status).toBe(201);
    expect(res.headers.get('Emq-Region')).toBe('eu-west');
    const { id } = (await res.json()) as { id: string };
    expect(JSON.parse((await payloadOf(eu, 'eu.hooks', id))!)).toMatchObject({ v: 1, source: 'hk', body: btoa(body) });
    expect(await payloadOf(us, 'eu.hooks', id)).toBeUndefined();
  });

  it('queues the map does not name stay in the region whose Worker got them', async () => {
    const q = freshQueue('orders');
    const id = mintId();
    const viaUs = await post(usUrl, `/v1/queues/${q}/jobs`, 'stays in us-east', { 'Emq-Job-Id': id });
    expect(viaUs.status).toBe(201);
    expect(viaUs.headers.get('Emq-Region')).toBe('us-east');
    expect(await payloadOf(us, q, id)).toBe('stays in us-east');

    const viaEu = await post(euUrl, `/v1/queues/${q}/jobs`, 'stays in eu-west', { 'Emq-Job-Id': id });
    expect(viaEu.status).toBe(201); // a separate queue in a separate Valkey: enqueued, not a duplicate
    expect(viaEu.headers.get('Emq-Region')).toBe('eu-west');
    expect(await payloadOf(eu, q, id)).toBe('stays in eu-west');
    expect(await payloadOf(us, q, id)).toBe('stays in us-east');
  });

  it("eu-west's Worker sends us.* (and the exact eu.pinned-us, over eu.*) to us-east with the shared EMQ_REST_TOKEN", async () => {
    for (const [q, home] of [
      [freshQueue('us.billing'), 'us-east'],
      ['eu.pinned-us', 'us-east'],
      [freshQueue('eu.billing'), 'eu-west'],
    ] as const) {
      const id = mintId();
      const res = await post(euUrl, `/v1/queues/${q}/jobs`, `for ${home}`, { 'Emq-Job-Id': id });
      expect(res.status, q).toBe(201);
      expect(res.headers.get('Emq-Region')).toBe(home);
      const [there, notThere] = home === 'us-east' ? [us, eu] : [eu, us];
      expect(await payloadOf(there, q, id)).toBe(`for ${home}`);
      expect(await payloadOf(notThere, q, id)).toBeUndefined();
    }
  });

  it('a home region that does not answer: 503 unavailable naming it in Emq-Region, nothing written here', async () => {
    const q = freshQueue('ap.orders');
    const res = await post(usUrl, `/v1/queues/${q}/jobs`, 'x');
    expect(res.status).toBe(503);
    expect(res.headers.get('Emq-Region')).toBe('ap-south');
    expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect(((await res.json()) as { code: string }).code).toBe('unavailable');
    expect(await us.footprint(q)).toEqual({});
    expect(await eu.footprint(q)).toEqual({});
  });
});
