// Two minters pinned to one node id, on a frozen clock, mint the same ids in the same order:
// every id one of them sends, the other sends too. Enqueued concurrently into one queue,
// every job must land, none may be answered `duplicate`, none may be lost.
import { beforeAll, describe, expect, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { createMinter, decodeId, enqueueMany, enqueueNew } from '../shared/index.js';
import { freshQueue } from './support/admin.js';
import { connectedTo, targets } from './support/targets.js';

const FROZEN = Date.parse('2026-06-01T12:00:00Z');
let mints = 0;
/** Two minters on node 7 and a frozen clock; `mints` counts what they mint, so a test can see collisions happened. */
const twins = () =>
  [0, 1].map(() => {
    const m = createMinter({ node: 7, now: () => FROZEN });
    return () => (mints++, m());
  }) as [() => string, () => string];

describe.each(targets())('collisions: $name', (target) => {
  const t = connectedTo(target);

  /** Every payload is in the queue exactly once, under an id of node 7; some ids had to be minted again. */
  async function allLanded(q: string, payloads: string[], ids: string[]) {
    expect(mints).toBeGreaterThan(payloads.length); // collisions happened, and were cured
    mints = 0;
    expect(new Set(ids).size).toBe(ids.length);
    expect(Number(await t.admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(payloads.length);
    const stored = await Promise.all(ids.map(async (id) => String(await t.admin.text('HGET', `emq:{${q}}:job:${id}`, 'payload'))));
    expect(stored).toEqual(payloads);
    for (const id of ids) expect(decodeId(id).node).toBe(7);
  }

  beforeAll(() => {
    mints = 0;
  });

  it('enqueueNew: 2 × 150 concurrent jobs, every one enqueued under its own id', async () => {
    const q = freshQueue('collide');
    const [a, b] = twins();
    const payloads = Array.from({ length: 300 }, (_, i) => `job-${i}`);
    const ids = await Promise.all(payloads.map((p, i) => enqueueNew(t.conn, q, p, i % 2 ? a : b)));
    await allLanded(q, payloads, ids);
  });

  it('enqueueMany: two minters send batches of 50 at once, four rounds; every verdict enqueued', async () => {
    const q = freshQueue('collide');
    const [a, b] = twins();
    const payloads: string[] = [];
    const ids: string[] = [];
    for (let round = 0; round < 4; round++) {
      const batches = [a, b].map((mint, m) => {
        const jobs = Array.from({ length: 50 }, (_, i) => ({ payload: `r${round}-m${m}-${i}` }));
        return enqueueMany(t.conn, q, jobs, mint).then((results) => ({ jobs, results }));
      });
      for (const { jobs, results } of await Promise.all(batches)) {
        expect(results.map((r) => r.verdict)).toEqual(jobs.map(() => 'enqueued'));
        payloads.push(...jobs.map((j) => j.payload));
        ids.push(...results.map((r) => r.id));
      }
    }
    await allLanded(q, payloads, ids);
  });

  it('HTTP: two producer apps on one node id, POST jobs and batches concurrently: 201 each, never duplicate', async () => {
    const q = freshQueue('collide');
    const token = 'collision-test-token-0123456789';
    const config = configFrom({ EMQ_TOKENS: JSON.stringify([{ token, queues: ['*'], rawPrefixes: true }]) });
    const apps = twins().map((mint) => createProducerApp({ config: () => config, connection: () => t.conn, minter: Object.assign(mint, { node: 7 }) }));
    const post = (n: number, path: string, body: string) =>
      apps[n % 2]!.fetch(new Request(`http://producer/v1/queues/${q}/${path}`, { method: 'POST', body, headers: { Authorization: `Bearer ${token}` } }));
    const singles = Array.from({ length: 60 }, (_, i) => `single-${i}`);
    const batches = Array.from({ length: 6 }, (_, b) => Array.from({ length: 10 }, (_, i) => `batch-${b}-${i}`));
    const [one, many] = await Promise.all([
      Promise.all(
        singles.map(async (p, i) => {
          const r = await post(i, 'jobs', p);
          return { status: r.status, body: (await r.json()) as { id: string; verdict: string } };
        }),
      ),
      Promise.all(
        batches.map(
          async (items, i) =>
            (await (await post(i, 'batch', JSON.stringify(items.map((payload) => ({ payload }))))).json()) as {
              results: Array<{ id: string; verdict: string }>;
            },
        ),
      ),
    ]);
    expect(one.map((r) => [r.status, r.body.verdict])).toEqual(singles.map(() => [201, 'enqueued']));
    for (const m of many) expect(m.results.map((r) => r.verdict)).toEqual(m.results.map(() => 'enqueued'));
    await allLanded(q, [...singles, ...batches.flat()], [...one.map((r) => r.body.id), ...many.flatMap((m) => m.results.map((r) => r.id))]);
  });
});
