// @enqueue-once through each connection against each real server: the dedupe marker that
// absorbs webhook redeliveries and Idempotency-Key retries. Its refusals write nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { ConflictError, WrongTypeError, enqueueOnce, enqueueOnceScript, markerKey, mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { targets } from './support/targets.js';

describe.each(targets())('@enqueue-once: $name', (target) => {
  let conn: Connection;
  let admin: Admin;
  beforeAll(async () => {
    conn = await target.connect();
    admin = await connectAdmin(target.url);
  });
  afterAll(async () => {
    await conn?.close();
    admin?.close();
  });

  const once = (q: string, over: Partial<Parameters<typeof enqueueOnce>[2]> = {}) =>
    enqueueOnce(conn, q, { scope: 'webhook:test', key: 'delivery-1', id: mintId(), payload: 'body', compare: false, ttlSeconds: 600, ...over });

  it('the first use enqueues exactly @enqueue\'s row and pending entry, and a marker with a TTL', async () => {
    const q = freshQueue('once');
    const first = await once(q);
    expect(first.verdict).toBe('enqueued');
    const row = await admin.hgetall(`emq:{${q}}:job:${first.id}`);
    expect(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v.toString()]))).toEqual({ state: 'pending', attempts: '0', payload: 'body' });
    expect(String(await admin.text('ZSCORE', `emq:{${q}}:pending`, first.id))).toBe('0');
    const marker = await markerKey(q, 'webhook:test', 'delivery-1');
    expect(Object.keys(await admin.footprint(q)).sort()).toEqual([`emq:{${q}}:job:${first.id}`, marker, `emq:{${q}}:pending`].sort());
    const ttl = Number(await admin.call('TTL', marker));
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
  });

  it('any bytes, large, with the payload compared: 256 KiB that are not UTF-8 arrive exactly (the payload is the last argument)', async () => {
    const q = freshQueue('once');
    const payload = Uint8Array.from({ length: 256 * 1024 }, (_, i) => (i % 7 === 0 ? 0xff : (i * 31) % 256));
    const first = await once(q, { payload, compare: true, key: 'big' });
    expect(first.verdict).toBe('enqueued');
    expect(Buffer.compare((await admin.hgetall(`emq:{${q}}:job:${first.id}`)).payload!, Buffer.from(payload))).toBe(0);
    expect(await once(q, { payload, compare: true, key: 'big' })).toEqual({ id: first.id, verdict: 'duplicate' });
  });

  it('a redelivery (new id offered, same key) answers the original job: no second row or pending entry', async () => {
    const q = freshQueue('once');
    const first = await once(q, { payload: 'v1' });
    const offered = mintId();
    const again = await once(q, { id: offered, payload: 'v1 again, other bytes' });
    expect(again).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${offered}`))).toBe(0);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(1);
  });

  it('keys are scoped: the same key in another scope is another job', async () => {
    const q = freshQueue('once');
    const a = await once(q, { scope: 'key:a' });
    const b = await once(q, { scope: 'key:b' });
    expect(a.id).not.toBe(b.id);
    expect(b.verdict).toBe('enqueued');
  });

  it('compare: the same payload answers the job; another payload is a conflict and writes nothing', async () => {
    const q = freshQueue('once');
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const first = await once(q, { compare: true, payload: bytes });
    expect(await once(q, { compare: true, payload: bytes.slice() })).toEqual({ id: first.id, verdict: 'duplicate' });
    const before = await admin.footprint(q);
    const offered = mintId();
    await expect(once(q, { compare: true, id: offered, payload: new Uint8Array([1]) })).rejects.toBeInstanceOf(ConflictError);
    expect(await admin.footprint(q)).toEqual(before);
    const stored = (await admin.call('HGET', `emq:{${q}}:job:${first.id}`, 'payload')) as Buffer;
    expect([...stored]).toEqual([...bytes]);
  });

  it('a wrong-typed pending key or marker: WrongTypeError, nothing written', async () => {
    const q = freshQueue('once');
    await admin.call('SET', `emq:{${q}}:pending`, 'not a zset');
    let before = await admin.footprint(q);
    await expect(once(q)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await admin.footprint(q)).toEqual(before);

    const q2 = freshQueue('once');
    await admin.call('HSET', await markerKey(q2, 'webhook:test', 'delivery-1'), 'f', 'v');
    before = await admin.footprint(q2);
    await expect(once(q2)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await admin.footprint(q2)).toEqual(before);
  });

  it('the layout gate: keys of other queues, a malformed marker, a bad ttl, a foreign kind: errors, nothing written', async () => {
    const q = freshQueue('once');
    const id = mintId();
    const marker = await markerKey(q, 's', 'k');
    const run = (keys: string[], args: string[]) => conn.run({ op: 'eval', script: enqueueOnceScript.text, keys, args });
    const row = `emq:{${q}}:job:${id}`;
    const pending = `emq:{${q}}:pending`;
    const cases: Array<[string[], string[], RegExp]> = [
      [[row, pending, marker.replace(`{${q}}`, `{${q}x}`)], [id, '-', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:once:nothex`], [id, '-', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending, `${marker}0`], [id, '-', '60', 'p'], /^EMQLAYOUT/],
      [[row, `emq:{${q}x}:pending`, marker], [id, '-', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending, marker], [id, '-', '0', 'p'], /^EMQLAYOUT/],
      [[row, pending, marker], [id, '-', '1.5', 'p'], /^EMQLAYOUT/],
      [[row, pending, marker], [id, 'has space', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending], [id, '-', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending, marker], [id, '-', '60'], /^EMQLAYOUT/],
      [[row, pending, marker], [id, '', '60', 'p'], /^EMQLAYOUT/],
      [[`emq:{${q}}:job:task-1`, pending, marker], ['task-1', '-', '60', 'p'], /^EMQKIND:? job id must be JOB-namespaced/],
    ];
    for (const [keys, args, why] of cases) {
      const outcome = await run(keys, args);
      expect(outcome.ok, `${keys} ${args}`).toBe(false);
      expect(!outcome.ok && outcome.error).toMatch(why);
    }
    expect(await admin.footprint(q)).toEqual({});
    expect(await admin.footprint(`${q}x`)).toEqual({});
  });

  it('works right after SCRIPT FLUSH', async () => {
    const q = freshQueue('once');
    await admin.call('SCRIPT', 'FLUSH');
    expect((await once(q)).verdict).toBe('enqueued');
    expect((await once(q)).verdict).toBe('duplicate');
  });
});
