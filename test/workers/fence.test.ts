// The producer Worker inside workerd, through a real gateway whose Valkey's {emq}:version
// holds another wire version (echomq:2.0.0; the gateway speaks the default echomq:3.0.0):
// every route that reaches Valkey answers 503 wire_mismatch, at once (not retried), and
// nothing is written. The gateway and its private server are started Node-side
// (test/workers/global-setup.ts).
import { describe, expect, inject, it } from 'vitest';
import { producerFor } from '../../functions/producer/worker.js';
import { mintId } from '../../shared/ids.js';

const gw = inject('mismatchedGateway');
const TOKEN = 'fence-caller-token-0123456789abcdef';
const env = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
};
const app = producerFor(env);

function send(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${TOKEN}`);
  return Promise.resolve(app.fetch(new Request(`http://producer${path}`, { ...init, headers }), env));
}

/** One command through the mismatched gateway's admin token (the admin scope still works). */
async function admin(...args: string[]): Promise<unknown> {
  const res = await fetch(gw.url, { method: 'POST', headers: { Authorization: `Bearer ${gw.admin}` }, body: JSON.stringify(args) });
  const body = (await res.json()) as { result?: unknown; error?: string };
  if (body.error) throw new Error(body.error);
  return body.result;
}

/** DBSIZE, the server's change counter and the key: what "nothing written" compares. */
async function written() {
  const info = String(await admin('INFO', 'persistence'));
  return { dbsize: await admin('DBSIZE'), changes: /rdb_changes_since_last_save:(\d+)/.exec(info)?.[1], version: await admin('GET', '{emq}:version') };
}

async function expectMismatch(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get('Content-Type')).toBe('application/problem+json');
  expect(res.headers.get('Retry-After')).toBe('1');
  const p = (await res.json()) as Record<string, unknown>;
  expect(p).toMatchObject({
    type: 'urn:emq:problem:wire_mismatch',
    code: 'wire_mismatch',
    status: 503,
    expected: 'echomq:3.0.0',
    found: '"echomq:2.0.0"',
  });
  expect(p.detail).toContain('echomq:3.0.0');
  expect(p.detail).toContain('echomq:2.0.0');
}

describe('producer Worker in workerd, through a gateway whose Valkey speaks another wire version', () => {
  it('runs in workerd', () => {
    expect(navigator.userAgent).toBe('Cloudflare-Workers');
  });

  it('POST job, batch, job status and /readyz answer 503 wire_mismatch at once; /healthz 200; nothing written', async () => {
    expect(await admin('GET', '{emq}:version')).toBe('echomq:2.0.0');
    const before = await written();
    const q = `fenced-${Date.now().toString(36)}`;
    const started = Date.now();
    await expectMismatch(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'payload', headers: { 'Emq-Job-Id': mintId() } }));
    // a retried 503 would wait out Retry-After (1 s) at least twice
    expect(Date.now() - started).toBeLessThan(1_000);
    await expectMismatch(await send(`/v1/queues/${q}/jobs`, { method: 'POST', body: 'keyed', headers: { 'Idempotency-Key': 'k-1' } }));
    await expectMismatch(await send(`/v1/queues/${q}/batch`, { method: 'POST', body: JSON.stringify([{ payload: 'a' }, { payload: 'b' }]) }));
    await expectMismatch(await send(`/v1/queues/${q}/jobs/${mintId()}`));
    await expectMismatch(await send('/readyz'));
    expect((await send('/healthz')).status).toBe(200);
    expect(await written()).toEqual(before);
    expect(await admin('KEYS', `emq:{${q}}:*`)).toEqual([]);
  });
});
