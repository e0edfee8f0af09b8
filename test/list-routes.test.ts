// The listing routes (issue 28) over real HTTP: `emq producer` over glide and over REST through
// a real gateway, against every test server. GET /v1/queues finds every queue across its pages
// (set equality with those made), with GET /v1/queues/{q}'s counts, only the token's queues;
// GET /v1/queues/{q}/jobs pages each state in the library's order and answers exactly the
// contract's fields; every refusal writes nothing; each needs read.
import { describe, expect, it } from 'vitest';
import { mintId } from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { producerOver, transports } from './support/producer-over.js';

const ALL = 'list-all-token-0123456789abcdefg';
const READER = 'list-reader-token-0123456789abcd';
const NARROW = 'list-narrow-token-0123456789abcd';
const WRITER = 'list-writer-token-0123456789abcd';
const A = 'PRT0KHTOWnGLuC';
const TOKENS = JSON.stringify([
  { token: ALL, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
  { token: READER, queues: ['*'], rawPrefixes: true, can: ['read'] },
  { token: NARROW, queues: ['lr-mine.*'], can: ['enqueue', 'read'] },
  { token: WRITER, queues: ['*'], rawPrefixes: true, can: ['enqueue'] },
]);

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

describe.each(transports())('the listing routes: $name', (transport) => {
  const over = producerOver(transport, { EMQ_TOKENS: TOKENS });

  const send = async (method: string, path: string, init: { body?: string; headers?: Record<string, string>; token?: string } = {}): Promise<Reply> => {
    const res = await fetch(`${over.producer.url}${path}`, {
      method,
      ...(init.body !== undefined && { body: init.body }),
      headers: { Authorization: `Bearer ${init.token ?? ALL}`, ...init.headers },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const post = async (q: string, payload: string, headers: Record<string, string> = {}) => {
    const answer = await send('POST', `/v1/queues/${q}/jobs`, { body: payload, headers });
    expect(answer.status).toBeLessThan(300);
    return answer.body.id as string;
  };
  const refused = async (queues: string[], status: number, code: string, request: () => Promise<Reply>) => {
    const before = await snapshot(over.admin, ...queues);
    const answer = await request();
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
    expect(await snapshot(over.admin, ...queues)).toEqual(before);
  };
  /** Every page of a listing, by its cursors. */
  const pages = async (q: string, query: string, token = ALL) => {
    const out: Array<Record<string, unknown>> = [];
    let cursor: string | null = null;
    do {
      const r = await send('GET', `/v1/queues/${q}/jobs?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { token });
      expect(r.status).toBe(200);
      out.push(...(r.body.jobs as Array<Record<string, unknown>>));
      cursor = r.body.cursor as string | null;
    } while (cursor !== null);
    return out;
  };

  it('GET …/jobs: pending newest first, a lane with group=, scheduled soonest first, dead newest first with its error', async () => {
    const q = freshQueue('lr-jobs');
    const flat = [await post(q, 'one'), await post(q, 'three'), await post(q, 'fifteen-bytes!!')];
    const laned = [await post(q, 'a', { 'Emq-Group': A }), await post(q, 'bb', { 'Emq-Group': A })];
    const at = Date.now() + 3_600_000;
    const later = await post(q, 'later', { 'Emq-Not-Before': String(at + 5) });
    const sooner = await post(q, 'sooner', { 'Emq-Not-Before': String(at) });
    const first = await send('GET', `/v1/queues/${q}/jobs?limit=2`);
    expect(first).toEqual({
      status: 200,
      body: {
        queue: q,
        state: 'pending',
        jobs: [
          { id: flat[2], state: 'pending', attempts: 0, bytes: 15 },
          { id: flat[1], state: 'pending', attempts: 0, bytes: 5 },
        ],
        cursor: flat[1],
      },
    });
    const rest = await send('GET', `/v1/queues/${q}/jobs?state=pending&limit=2&cursor=${flat[1]}`);
    expect(rest.body).toEqual({ queue: q, state: 'pending', jobs: [{ id: flat[0], state: 'pending', attempts: 0, bytes: 3 }], cursor: null });
    expect(await pages(q, `group=${A}&limit=1`)).toEqual([
      { id: laned[1], state: 'pending', attempts: 0, group: A, bytes: 2 },
      { id: laned[0], state: 'pending', attempts: 0, group: A, bytes: 1 },
    ]);
    expect(await pages(q, 'state=scheduled&limit=1')).toEqual([
      { id: sooner, state: 'scheduled', attempts: 0, runAt: at, bytes: 6 },
      { id: later, state: 'scheduled', attempts: 0, runAt: at + 5, bytes: 5 },
    ]);
    const dead = mintId();
    await over.admin.call('HSET', `emq:{${q}}:job:${dead}`, 'state', 'dead', 'attempts', '3', 'payload', 'gone', 'last_error', 'boom <b>');
    await over.admin.call('ZADD', `emq:{${q}}:dead`, '0', dead);
    expect((await send('GET', `/v1/queues/${q}/jobs?state=dead`)).body).toEqual({
      queue: q,
      state: 'dead',
      jobs: [{ id: dead, state: 'dead', attempts: 3, lastError: 'boom <b>', bytes: 4 }],
      cursor: null,
    });
    expect((await send('GET', `/v1/queues/${freshQueue('lr-empty')}/jobs`)).body).toMatchObject({ jobs: [], cursor: null });
  });

  it('GET …/jobs: a bad state, limit, cursor or group is 400 invalid_query, nothing run; a reader may, a writer may not', async () => {
    const q = freshQueue('lr-bad');
    const id = await post(q, 'x', { 'Emq-Delay': '1h' });
    const bad = [
      'state=active',
      'state=',
      'limit=0',
      'limit=101',
      'limit=1e2',
      'limit=050',
      'cursor=nope',
      `state=scheduled&cursor=${id}`,
      `cursor=1:${id}`,
      `state=scheduled&group=${A}`,
      'group=lane-a',
    ];
    for (const query of bad) await refused([q], 400, 'invalid_query', () => send('GET', `/v1/queues/${q}/jobs?${query}`));
    await refused([q], 403, 'forbidden_action', () => send('GET', `/v1/queues/${q}/jobs`, { token: WRITER }));
    await refused([q], 403, 'forbidden_queue', () => send('GET', `/v1/queues/${q}/jobs`, { token: NARROW }));
    expect((await send('GET', `/v1/queues/${q}/jobs?state=scheduled`, { token: READER })).body).toMatchObject({ jobs: [{ id, state: 'scheduled' }] });
    const mine = 'lr-mine.list';
    await send('POST', `/v1/queues/${mine}/jobs`, { body: 'm', token: NARROW });
    expect((await send('GET', `/v1/queues/${mine}/jobs`, { token: NARROW })).status).toBe(200);
  });

  /** Every page of GET /v1/queues. */
  const queuePages = async (query: string, token = ALL) => {
    const out: Array<{ name: string; counts: Record<string, number>; paused: boolean }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await send('GET', `/v1/queues?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { token });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['cursor', 'queues']);
      const names = (r.body.queues as Array<{ name: string }>).map((q) => q.name);
      expect(names).toEqual([...new Set(names)].sort());
      out.push(...(r.body.queues as typeof out));
      cursor = r.body.cursor as string | null;
      expect(++pages).toBeLessThan(100_000);
    } while (cursor !== null);
    return out;
  };

  it("GET /v1/queues: every queue made, across pages, with GET /v1/queues/{q}'s counts; a narrow token sees only its own", async () => {
    const narrow = [`lr-mine.a${Date.now().toString(36)}`, `lr-mine.b${Date.now().toString(36)}`];
    const others = Array.from({ length: 12 }, (_, i) => `${freshQueue('lr-q')}-${i}`);
    for (const q of [...narrow, ...others]) await post(q, 'x');
    await post(others[0]!, 'later', { 'Emq-Delay': '1h' });
    await send('POST', `/v1/queues/${others[1]}/pause`);
    for (const query of ['count=5', '']) {
      const seen = await queuePages(query);
      const mine = seen.filter((q) => others.includes(q.name) || narrow.includes(q.name));
      expect(new Set(mine.map((q) => q.name)), query).toEqual(new Set([...narrow, ...others]));
      for (const q of mine.filter((m) => [others[0], others[1]].includes(m.name))) {
        const view = (await send('GET', `/v1/queues/${q.name}`)).body;
        expect(q).toEqual({ name: q.name, counts: view.counts, paused: view.paused });
      }
    }
    const first = (await queuePages('count=5000')).find((q) => q.name === others[0]);
    expect(first).toEqual({ name: others[0], counts: { pending: 1, active: 0, scheduled: 1, dead: 0, completed: 0, failed: 0 }, paused: false });
    const theirs = await queuePages('', NARROW);
    expect(theirs.every((q) => q.name.startsWith('lr-mine.'))).toBe(true);
    expect(theirs.map((q) => q.name)).toEqual(expect.arrayContaining(narrow));
  });

  it('GET /v1/queues: a bad cursor or count is 400 invalid_query, nothing run; a writer may not list', async () => {
    const q = freshQueue('lr-qbad');
    await post(q, 'x');
    for (const query of ['count=0', 'count=5001', 'count=abc', 'cursor=abc', 'cursor=-1', 'cursor=18446744073709551616', 'cursor=16384:0', 'cursor=5461:0']) {
      await refused([q], 400, 'invalid_query', () => send('GET', `/v1/queues?${query}`));
    }
    await refused([q], 403, 'forbidden_action', () => send('GET', '/v1/queues', { token: WRITER }));
    expect((await send('GET', '/v1/queues?count=1', { token: READER })).status).toBe(200);
  });
});
