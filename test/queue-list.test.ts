// listQueues finds the queues that exist by SCAN over the library's key families, over glide
// and over REST through the gateway (a producer token: the gateway lets the listing's SCAN
// through, and no other), on every test server: every family names its queue, job rows and
// foreign keys name none; collecting every page finds each queue, each name once per page,
// pages sorted; counts are @queue-info's; a token's queues only; bad arguments send nothing.
import { describe, expect, inject, it } from 'vitest';
import { InvalidArgumentError, enqueue, enqueueGrouped, mintId, queueInfo, schedule } from '../shared/index.js';
import { QUEUE_SCAN_MATCH, listQueues, type QueueListOptions, type QueueSummary } from '../shared/queue-list.js';
import { freshQueue, snapshot } from './support/admin.js';
import { gatewayOn } from './support/gateway.js';
import { connectedTo, targets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';

describe.each(targets())('listQueues: $name', (target) => {
  const t = connectedTo(target);

  /** Every page of the walk; each page sorted, each name once on it. */
  async function walk(options: QueueListOptions = {}): Promise<QueueSummary[]> {
    const out: QueueSummary[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listQueues(t.conn, { ...options, ...(cursor !== undefined && { cursor }) });
      const names = page.queues.map((q) => q.name);
      expect(names).toEqual([...new Set(names)].sort());
      out.push(...page.queues);
      cursor = page.cursor;
      expect(++pages).toBeLessThan(100_000);
    } while (cursor !== undefined);
    return out;
  }

  it("every family names its queue; job rows, dedup keys, foreign names and a queue of the wrong types name none; counts are @queue-info's", async () => {
    const stem = freshQueue('ql');
    const q = (s: string) => `${stem}.${s}`;
    await enqueue(t.conn, q('pending'), mintId(), 'x');
    await enqueueGrouped(t.conn, q('lane'), A, mintId(), 'x');
    await schedule(t.conn, q('sched'), mintId(), 'x', { inMs: 3_600_000 });
    await t.admin.call('ZADD', `emq:{${q('dead')}}:dead`, '0', mintId());
    await t.admin.call('HSET', `emq:{${q('meta')}}:meta`, 'paused', '1');
    await t.admin.call('HSET', `emq:{${q('metrics')}}:metrics:completed`, 'count', '7');
    await t.admin.call('ZADD', `emq:{${q('repeat')}}:repeat`, '1', 'nightly');
    await t.admin.call('HSET', `emq:{${q('gweight')}}:gweight`, A, '2');
    // not queues: a lone row, a dedup key, a name the rule refuses, the library's own name
    await t.admin.call('HSET', `emq:{${q('row')}}:job:${mintId()}`, 'state', 'pending');
    await t.admin.call('SET', `emq:{${q('dedup')}}:de:abc`, mintId());
    await t.admin.call('ZADD', `emq:{${stem} bad}:pending`, '0', mintId());
    await t.admin.call('ZADD', 'emq:{emq}:pending', '0', mintId());
    // a queue whose set is a string (not the library's wire): left out, the rest still listed
    await t.admin.call('SET', `emq:{${q('jam')}}:pending`, 'not a set');
    const found = (await walk()).filter((s) => s.name.startsWith(`${stem}`));
    const want = ['dead', 'gweight', 'lane', 'meta', 'metrics', 'pending', 'repeat', 'sched'].map(q);
    expect([...new Set(found.map((s) => s.name))].sort()).toEqual(want);
    for (const s of found) {
      const info = await queueInfo(t.conn, s.name);
      expect(s, s.name).toEqual({ name: s.name, counts: info.counts, paused: info.paused });
    }
    expect(found.find((s) => s.name === q('meta'))?.paused).toBe(true);
    expect(found.find((s) => s.name === q('metrics'))?.counts.completed).toBe(7);
    expect(found.find((s) => s.name === q('lane'))?.counts.pending).toBe(0);
    await t.admin.call('DEL', 'emq:{emq}:pending', `emq:{${stem} bad}:pending`);
  });

  it("paging covers every queue: 60 queues over pages of a small COUNT, a set equal to those made; allows keeps a token's", async () => {
    const stem = freshQueue('qp');
    const made = Array.from({ length: 60 }, (_, i) => `${stem}.${String(i).padStart(2, '0')}`);
    for (const q of made) await enqueue(t.conn, q, mintId(), 'x');
    const mine = (s: QueueSummary) => s.name.startsWith(`${stem}.`);
    for (const count of [7, 1000]) {
      const seen = (await walk({ count })).filter(mine).map((s) => s.name);
      expect(new Set(seen), `count ${count}`).toEqual(new Set(made));
    }
    const some = new Set(made.slice(0, 5));
    const allowed = await walk({ allows: (q) => some.has(q) });
    expect(new Set(allowed.map((s) => s.name))).toEqual(some);
  });

  it('a bad cursor or count is InvalidArgumentError, nothing sent; the match pattern is the one the gateway allows', async () => {
    const q = freshQueue('ql-bad');
    await enqueue(t.conn, q, mintId(), 'x');
    const before = await snapshot(t.admin, q);
    for (const options of [
      { cursor: 'x' },
      { cursor: '-1' },
      { cursor: '18446744073709551616' },
      { cursor: '16384:0' },
      { count: 0 },
      { count: 5001 },
      { count: 2.5 },
    ]) {
      await expect(listQueues(t.conn, options as QueueListOptions), JSON.stringify(options)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    // a cluster's cursor on a single server: the transport says so
    await expect(listQueues(t.conn, { cursor: '5461:0' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await snapshot(t.admin, q)).toEqual(before);
    expect(QUEUE_SCAN_MATCH).toBe('emq:{*}:[^j]*');
  });
});

describe.each(inject('servers').map((s) => ({ name: s.name, url: s.url })))(
  "the gateway's producer and control tokens: the listing's SCAN and no other, $name",
  ({ url }) => {
    const h = gatewayOn(url);
    const M = QUEUE_SCAN_MATCH;
    const call = async (body: unknown, token = h.gw.producer, path = '/') => {
      const res = await fetch(h.gw.url + path, { method: 'POST', body: JSON.stringify(body), headers: { Authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as { result?: unknown; error?: string } };
    };

    it('lets SCAN <cursor> MATCH <the pattern> COUNT <1-5000> through, for either token', async () => {
      for (const token of [h.gw.producer, h.gw.control]) {
        const ok = await call(['SCAN', '0', 'MATCH', M, 'COUNT', '10'], token);
        expect(ok.status).toBe(200);
        expect(Array.isArray(ok.body.result) && (ok.body.result as unknown[]).length === 2).toBe(true);
        expect((await call(['scan', '0', 'match', M, 'count', '5000'], token)).status).toBe(200);
      }
    });

    it('refuses (403) every other SCAN, KEYS and plain read, alone or in a pipeline, and nothing runs', async () => {
      const q = freshQueue('ql-gw');
      await h.admin.call('ZADD', `emq:{${q}}:pending`, '0', mintId());
      const before = await snapshot(h.admin, q);
      const calls = (await h.admin.calls('scan')) + (await h.admin.calls('keys'));
      for (const command of [
        ['SCAN', '0'],
        ['SCAN', '0', 'MATCH', '*', 'COUNT', '10'],
        ['SCAN', '0', 'MATCH', 'emq:*', 'COUNT', '10'],
        ['SCAN', '0', 'MATCH', M, 'COUNT', '5001'],
        ['SCAN', '0', 'MATCH', M, 'COUNT', '0'],
        ['SCAN', '0', 'MATCH', M, 'COUNT', '10', 'TYPE', 'zset'],
        ['SCAN', '0', 'COUNT', '10', 'MATCH', M],
        ['SCAN', 'x', 'MATCH', M, 'COUNT', '10'],
        ['SCAN', '18446744073709551616', 'MATCH', M, 'COUNT', '10'],
        ['KEYS', '*'],
        ['TYPE', `emq:{${q}}:pending`],
        ['ZRANGE', `emq:{${q}}:pending`, '0', '-1'],
      ]) {
        const alone = await call(command);
        expect(alone.status, command.join(' ')).toBe(403);
        expect(alone.body.error, command.join(' ')).toMatch(/^a producer token may (not )?run/);
        const piped = await call([['SCAN', '0', 'MATCH', M, 'COUNT', '10'], command], h.gw.producer, '/pipeline');
        expect(piped.status, command.join(' ')).toBe(403);
      }
      expect((await call(['SCAN', '0', 'MATCH', '*', 'COUNT', '10'])).body.error).toContain('only as the queue listing sends it');
      // nothing sent: the server counted no SCAN or KEYS from these
      expect((await h.admin.calls('scan')) + (await h.admin.calls('keys'))).toBe(calls);
      expect(await snapshot(h.admin, q)).toEqual(before);
    });
  },
);
