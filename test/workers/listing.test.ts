// The listing routes (issue 28) on the producer Worker inside workerd, against the real gateway
// process (a producer-scope token, which the gateway lets run the listing's SCAN) and a real
// Valkey: GET /v1/queues finds every queue made across its pages, a narrow token only its own;
// GET /v1/queues/{q}/jobs pages each state in the library's order; a bad query is 400 invalid_query and writes nothing (read back
// through the gateway's admin token).
import { describe, expect, inject, it } from 'vitest';
import { producerFor } from '../../functions/producer/worker.js';
import { mintId } from '../../shared/ids.js';
import { gatewayAdmin } from './gateway-admin.js';

const gw = inject('gateway');
const TOKEN = 'list-worker-token-0123456789abcdef';
const NARROW = 'list-narrow-token-0123456789abcdef';
const A = 'PRT0KHTOWnGLuC';
const base = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([
    { token: TOKEN, queues: ['*'], rawPrefixes: true },
    { token: NARROW, queues: ['wl-narrow.*'] },
  ]),
};
const app = producerFor(base);
const admin = gatewayAdmin(gw);
const text = (b: unknown) => new TextDecoder().decode(b as Uint8Array);

let n = 0;
const fresh = (label: string) => `${label}-${Date.now().toString(36)}-${(n++).toString(36)}`;

async function send(path: string, init: RequestInit & { token?: string } = {}) {
  const { token = TOKEN, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('Authorization', `Bearer ${token}`);
  const res = await app.fetch(new Request(`http://producer${path}`, { ...rest, headers }), base);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const post = async (q: string, body: string, headers: Record<string, string> = {}) =>
  (await send(`/v1/queues/${q}/jobs`, { method: 'POST', body, headers })).body.id as string;
/** Every key of a queue with its DUMP: what "nothing written" compares. */
const footprint = async (q: string) => {
  const keys = ((await admin('KEYS', `emq:{${q}}:*`)) as Uint8Array[]).map(text).sort();
  return Promise.all(keys.map(async (k) => `${k} ${text(await admin('DUMP', k))}`));
};

describe('the listing routes on the Worker (REST through the gateway, a producer token)', () => {
  it('GET /v1/queues/{q}/jobs: pending newest first, a lane, scheduled soonest first; every page by its cursor', async () => {
    const q = fresh('wl-jobs');
    const flat = [await post(q, 'a'), await post(q, 'bb'), await post(q, 'ccc')];
    const laned = await post(q, 'lane', { 'Emq-Group': A });
    const at = Date.now() + 3_600_000;
    const later = await post(q, 'later', { 'Emq-Not-Before': String(at + 1) });
    const sooner = await post(q, 'soon', { 'Emq-Not-Before': String(at) });
    const first = await send(`/v1/queues/${q}/jobs?limit=2`);
    expect(first).toEqual({
      status: 200,
      body: {
        queue: q,
        state: 'pending',
        jobs: [
          { id: flat[2], state: 'pending', attempts: 0, bytes: 3 },
          { id: flat[1], state: 'pending', attempts: 0, bytes: 2 },
        ],
        cursor: flat[1],
      },
    });
    expect((await send(`/v1/queues/${q}/jobs?limit=2&cursor=${first.body.cursor}`)).body).toMatchObject({ jobs: [{ id: flat[0] }], cursor: null });
    expect((await send(`/v1/queues/${q}/jobs?group=${A}`)).body.jobs).toEqual([{ id: laned, state: 'pending', attempts: 0, group: A, bytes: 4 }]);
    const s1 = await send(`/v1/queues/${q}/jobs?state=scheduled&limit=1`);
    expect(s1.body.jobs).toEqual([{ id: sooner, state: 'scheduled', attempts: 0, runAt: at, bytes: 4 }]);
    const s2 = await send(`/v1/queues/${q}/jobs?state=scheduled&limit=1&cursor=${encodeURIComponent(String(s1.body.cursor))}`);
    expect(s2.body).toMatchObject({ jobs: [{ id: later, runAt: at + 1 }], cursor: null });
  });

  it('a bad query is 400 invalid_query and nothing is written; another queue than the token names is 403', async () => {
    const q = fresh('wl-bad');
    await post(q, 'x');
    const before = await footprint(q);
    for (const query of ['state=active', 'limit=101', 'cursor=nope', `state=dead&group=${A}`, `state=dead&cursor=${mintId()}`]) {
      const r = await send(`/v1/queues/${q}/jobs?${query}`);
      expect({ status: r.status, code: r.body.code }, query).toEqual({ status: 400, code: 'invalid_query' });
    }
    expect((await send(`/v1/queues/${q}/jobs`, { token: NARROW })).body.code).toBe('forbidden_queue');
    expect(await footprint(q)).toEqual(before);
  });

  it('GET /v1/queues: every queue made across the pages, with its counts; a narrow token only its own; a bad query 400', async () => {
    const made = [fresh('wl-q'), fresh('wl-q'), fresh('wl-narrow.x').replace('wl-narrow.x-', 'wl-narrow.x')];
    for (const q of made) await post(q, 'x');
    await post(made[0]!, 'later', { 'Emq-Delay': '1h' });
    const walk = async (token: string) => {
      const out: Array<{ name: string; counts: Record<string, number>; paused: boolean }> = [];
      let cursor: string | null = null;
      do {
        const r = await send(`/v1/queues?count=500${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { token });
        expect(r.status).toBe(200);
        out.push(...(r.body.queues as typeof out));
        cursor = r.body.cursor as string | null;
      } while (cursor !== null);
      return out;
    };
    const all = await walk(TOKEN);
    expect(new Set(all.filter((q) => made.includes(q.name)).map((q) => q.name))).toEqual(new Set(made));
    expect(all.find((q) => q.name === made[0])).toEqual({
      name: made[0],
      counts: { pending: 1, active: 0, scheduled: 1, dead: 0, completed: 0, failed: 0 },
      paused: false,
    });
    const narrow = await walk(NARROW);
    expect(narrow.map((q) => q.name)).toContain(made[2]);
    expect(narrow.every((q) => q.name.startsWith('wl-narrow.'))).toBe(true);
    for (const query of ['count=0', 'cursor=x', 'cursor=5461:0']) {
      const r = await send(`/v1/queues?${query}`);
      expect({ status: r.status, code: r.body.code }, query).toEqual({ status: 400, code: 'invalid_query' });
    }
  });
});
