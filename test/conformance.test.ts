// The wire, proven: @enqueue through each connection against each real server.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import {
  BatchError,
  InvalidIdError,
  InvalidPayloadError,
  InvalidQueueError,
  KindError,
  WrongTypeError,
  enqueue,
  enqueueMany,
  enqueueScript,
  mintId,
} from '../shared/index.js';
import { freshQueue, type Admin } from './support/admin.js';
import { counting } from './support/counting.js';
import { connectedTo, targets } from './support/targets.js';

const raw = (sha1: string, keys: string[], args: (string | Uint8Array)[]) => ({ op: 'evalsha', sha1, keys, args }) as const;

describe.each(targets())('$name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  it('writes the three-field row and a pending entry at score 0', async () => {
    const q = freshQueue();
    const id = mintId();
    expect(await enqueue(conn, q, id, 'hello')).toBe('enqueued');
    const row = await admin.hgetall(`emq:{${q}}:job:${id}`);
    expect(Object.keys(row).sort()).toEqual(['attempts', 'payload', 'state']);
    expect(row.state!.toString()).toBe('pending');
    expect(row.attempts!.toString()).toBe('0');
    expect(row.payload!.toString()).toBe('hello');
    expect(String(await admin.text('ZSCORE', `emq:{${q}}:pending`, id))).toBe('0');
    expect(await admin.footprint(q)).toEqual({ [`emq:{${q}}:job:${id}`]: 'hash', [`emq:{${q}}:pending`]: 'zset' });
  });

  it('answers duplicate for the same id, even with another payload, and changes nothing', async () => {
    const q = freshQueue();
    const id = mintId();
    await enqueue(conn, q, id, 'first');
    await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'active', 'attempts', '3');
    expect(await enqueue(conn, q, id, 'second')).toBe('duplicate');
    const row = await admin.hgetall(`emq:{${q}}:job:${id}`);
    expect(row.payload!.toString()).toBe('first');
    expect(row.state!.toString()).toBe('active');
    expect(row.attempts!.toString()).toBe('3');
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(1);
  });

  it('pending members sort in mint order', async () => {
    const q = freshQueue();
    const ids = Array.from({ length: 50 }, () => mintId());
    for (const id of [...ids].reverse()) await enqueue(conn, q, id, '');
    const members = ((await admin.call('ZRANGE', `emq:{${q}}:pending`, '0', '-1')) as Buffer[]).map(String);
    expect(members).toEqual(ids);
  });

  describe('refusals write nothing', () => {
    it('kind gate: the script refuses an id that is not JOB-namespaced', async () => {
      const q = freshQueue();
      const outcome = await conn.run(raw(enqueueScript.sha1, [`emq:{${q}}:job:job1`, `emq:{${q}}:pending`], ['job1', 'x']));
      // the first run after start may meet an empty script cache: load it and retry
      const again =
        !outcome.ok && /NOSCRIPT|No matching/i.test(outcome.error)
          ? await conn.run({ op: 'eval', script: enqueueScript.text, keys: [`emq:{${q}}:job:job1`, `emq:{${q}}:pending`], args: ['job1', 'x'] })
          : outcome;
      expect(again).toMatchObject({ ok: false });
      expect(!again.ok && again.error).toMatch(/^EMQKIND:? job id must be JOB-namespaced/);
      expect(await admin.footprint(q)).toEqual({});
    });

    it('kind gate: enqueue refuses before sending, with KindError', async () => {
      const q = freshQueue();
      await expect(enqueue(conn, q, 'ORD0NgWEfAEJfs', 'x')).rejects.toBeInstanceOf(KindError);
      await expect(enqueue(conn, q, 'job-1', 'x')).rejects.toBeInstanceOf(InvalidIdError);
      await expect(enqueue(conn, q, 'JOB', 'x')).rejects.toBeInstanceOf(InvalidIdError);
      await expect(enqueue(conn, q, 'JOB01m8ktkzg6eaatm9sqpt0r51n2', 'x')).rejects.toBeInstanceOf(InvalidIdError);
      await expect(enqueue(conn, 'a{b}', mintId(), 'x')).rejects.toBeInstanceOf(InvalidQueueError);
      await expect(enqueue(conn, q, mintId(), '\ud800')).rejects.toBeInstanceOf(InvalidPayloadError);
      expect(await admin.footprint(q)).toEqual({});
      expect(await admin.footprint('a{b}')).toEqual({});
    });

    const layouts: Array<[string, (q: string, id: string) => string[]]> = [
      ['a row key for another id', (q) => [`emq:{${q}}:job:${mintId()}`, `emq:{${q}}:pending`]],
      ['a pending key of another queue', (q, id) => [`emq:{${q}}:job:${id}`, `emq:{${q}x}:pending`]],
      ['a row key of another queue', (q, id) => [`emq:{${q}x}:job:${id}`, `emq:{${q}}:pending`]],
      ['a pending key with no hash tag', (q, id) => [`emq:{${q}}:job:${id}`, `emq:${q}:pending`]],
      ['a pending key under another prefix', (q, id) => [`emq:{${q}}:job:${id}`, `emq:{${q}}:active`]],
      ['one key only', (q, id) => [`emq:{${q}}:job:${id}`]],
    ];
    it.each(layouts)('layout gate: %s', async (_, keysOf) => {
      const q = freshQueue();
      const id = mintId();
      const keys = keysOf(q, id);
      const call = { op: 'eval', script: enqueueScript.text, keys, args: [id, 'x'] } as const;
      const outcome = await conn.run(call);
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.error).toMatch(/^EMQLAYOUT/);
      expect(await admin.footprint(q)).toEqual({});
      expect(await admin.footprint(`${q}x`)).toEqual({});
      expect(Number(await admin.call('EXISTS', ...keys))).toBe(0);
    });

    it('layout gate: a missing payload', async () => {
      const q = freshQueue();
      const id = mintId();
      const outcome = await conn.run({ op: 'eval', script: enqueueScript.text, keys: [`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`], args: [id] });
      expect(!outcome.ok && outcome.error).toMatch(/^EMQLAYOUT/);
      expect(await admin.footprint(q)).toEqual({});
    });

    it('layout gate: a bad id is echoed as printable ASCII, its first 200 bytes (lua/lib/wire.lua shown) and its length', async () => {
      const q = freshQueue();
      const id = new Uint8Array([...Buffer.from('JOB'), ...Array<number>(297).fill(0xff)]);
      const outcome = await conn.run({ op: 'eval', script: enqueueScript.text, keys: [`emq:{${q}}:job:x`, `emq:{${q}}:pending`], args: [id, 'x'] });
      expect(!outcome.ok && outcome.error).toMatch(/^EMQLAYOUT[\x20-\x7e]*$/);
      expect(!outcome.ok && outcome.error).toContain(`ARGV[1] JOB${'\\xff'.repeat(197)}...(300 bytes) is not a branded id`);
      expect(await admin.footprint(q)).toEqual({});
    });

    it.each([
      ['a string', (k: string) => admin.call('SET', k, 'x')],
      ['a list', (k: string) => admin.call('RPUSH', k, 'a', 'b')],
      ['a hash', (k: string) => admin.call('HSET', k, 'f', 'v')],
    ])('type gate: a pending key holding %s', async (what, put) => {
      const q = freshQueue();
      const pending = `emq:{${q}}:pending`;
      await put(pending);
      const before = await admin.footprint(q);
      const error = await enqueue(conn, q, mintId(), 'x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WrongTypeError);
      expect((error as Error).message).toContain(pending);
      expect(await admin.footprint(q)).toEqual(before);
      expect(Object.keys(before)).toEqual([pending]);
      void what;
    });

    it('type gate comes after idempotency: an existing row is a duplicate whatever it holds', async () => {
      const q = freshQueue();
      const id = mintId();
      await admin.call('SET', `emq:{${q}}:job:${id}`, 'not a hash');
      await admin.call('SET', `emq:{${q}}:pending`, 'not a zset');
      expect(await enqueue(conn, q, id, 'x')).toBe('duplicate');
      expect(String(await admin.text('GET', `emq:{${q}}:job:${id}`))).toBe('not a hash');
    });
  });

  describe('payload bytes are stored exactly', () => {
    const all256 = Uint8Array.from({ length: 256 }, (_, i) => i);
    const cases: Array<[string, Uint8Array]> = [
      ['all 256 byte values', all256],
      ['NUL only', new Uint8Array([0])],
      ['invalid UTF-8', new Uint8Array([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc, 0xff, 0xfe])],
      ['empty', new Uint8Array(0)],
      ['a UTF-8 byte order mark first', new Uint8Array([0xef, 0xbb, 0xbf, 0x41, 0xef, 0xbb, 0xbf])],
      ['5 MiB', Uint8Array.from({ length: 5 * 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24)],
    ];
    it.each(cases)('%s', async (_, payload) => {
      const q = freshQueue();
      const id = mintId();
      expect(await enqueue(conn, q, id, payload)).toBe('enqueued');
      const stored = (await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer | null;
      // an empty payload may come back as an empty buffer or an empty string
      const bytes = stored === null ? null : Buffer.from(stored);
      expect(bytes?.length).toBe(payload.length);
      expect(createHash('sha256').update(bytes!).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
      expect(Buffer.compare(bytes!, payload)).toBe(0);
    });

    it('a subarray payload sends only its own bytes', async () => {
      const q = freshQueue();
      const id = mintId();
      const backing = Uint8Array.from([9, 9, 1, 2, 3, 9]);
      await enqueue(conn, q, id, backing.subarray(2, 5));
      expect([...((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer)]).toEqual([1, 2, 3]);
    });

    it('a string payload is stored as its UTF-8 bytes', async () => {
      const q = freshQueue();
      const id = mintId();
      await enqueue(conn, q, id, 'héllo \u{1f680} \u0000');
      const stored = (await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer;
      expect(stored.equals(Buffer.from('héllo \u{1f680} \u0000', 'utf8'))).toBe(true);
    });
  });

  describe('dispatch: EVALSHA, and EVAL only after NOSCRIPT', () => {
    it('one EVALSHA per enqueue in steady state; one EVALSHA and one EVAL after SCRIPT FLUSH', async () => {
      const q = freshQueue();
      await enqueue(conn, q, mintId(), 'warm');
      await admin.call('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 10; i++) await enqueue(conn, q, mintId(), `steady ${i}`);
      expect(await admin.calls('evalsha')).toBe(10);
      expect(await admin.calls('eval')).toBe(0);
      expect(await admin.calls('script')).toBe(0);

      await admin.call('SCRIPT', 'FLUSH');
      await admin.call('CONFIG', 'RESETSTAT');
      expect(await enqueue(conn, q, mintId(), 'after flush')).toBe('enqueued');
      expect(await admin.calls('evalsha')).toBe(1);
      expect(await admin.calls('eval')).toBe(1);
      expect(await admin.calls('script')).toBe(0);

      await admin.call('CONFIG', 'RESETSTAT');
      await enqueue(conn, q, mintId(), 'cached again');
      expect(await admin.calls('evalsha')).toBe(1);
      expect(await admin.calls('eval')).toBe(0);
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(13);
    });

    it('concurrent enqueues after a flush all land', async () => {
      const q = freshQueue();
      await admin.call('SCRIPT', 'FLUSH');
      const ids = Array.from({ length: 200 }, () => mintId());
      const verdicts = await Promise.all(ids.map((id) => enqueue(conn, q, id, id)));
      expect(verdicts.every((v) => v === 'enqueued')).toBe(true);
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(200);
    });

    it('the server knows the script by the SHA-1 of lua/enqueue.lua as sent (its include expanded)', async () => {
      expect(String(await admin.text('SCRIPT', 'LOAD', enqueueScript.text))).toBe(enqueueScript.sha1);
    });
  });

  describe('enqueueMany', () => {
    it('1,000 jobs with duplicates inside the batch: one pipeline, a verdict each', async () => {
      const q = freshQueue();
      const ids = Array.from({ length: 900 }, () => mintId());
      const jobs = [...ids.map((id) => ({ id, payload: `p-${id}` }))];
      // 100 repeats of earlier ids, spread through the batch
      for (let k = 0; k < 100; k++) jobs.splice(100 + k * 8, 0, { id: ids[k]!, payload: 'repeat' });
      expect(jobs).toHaveLength(1000);
      await enqueue(conn, q, mintId(), 'warm');
      await admin.call('CONFIG', 'RESETSTAT');
      const seam = counting(conn);
      const results = await enqueueMany(seam, q, jobs);
      expect(seam.counts).toEqual({ run: 0, pipeline: 1 });
      expect(await admin.calls('evalsha')).toBe(1000);
      expect(await admin.calls('eval')).toBe(0);

      const seen = new Set<string>();
      results.forEach((r, i) => {
        expect(r.id).toBe(jobs[i]!.id);
        expect(r.verdict).toBe(seen.has(r.id) ? 'duplicate' : 'enqueued');
        seen.add(r.id);
      });
      expect(results.filter((r) => r.verdict === 'duplicate')).toHaveLength(100);
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(901);
      const sample = await admin.hgetall(`emq:{${q}}:job:${ids[5]}`);
      expect(sample.payload!.toString()).toBe(`p-${ids[5]}`);
    });

    it('after SCRIPT FLUSH: one EVAL loads the script for the rest of the batch', async () => {
      const q = freshQueue();
      const jobs = Array.from({ length: 300 }, () => ({ id: mintId(), payload: 'x' }));
      await admin.call('SCRIPT', 'FLUSH');
      await admin.call('CONFIG', 'RESETSTAT');
      const seam = counting(conn);
      const results = await enqueueMany(seam, q, jobs);
      expect(seam.counts).toEqual({ run: 0, pipeline: 2 });
      expect(results.every((r) => r.verdict === 'enqueued')).toBe(true);
      expect(await admin.calls('eval')).toBe(1);
      expect(await admin.calls('evalsha')).toBe(300 + 299);
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(300);
    });

    it('refuses the whole batch before sending when one job is invalid, naming its index', async () => {
      const q = freshQueue();
      const jobs = [
        { id: mintId(), payload: 'ok' },
        { id: 'JOBnope', payload: 'bad' },
        { id: mintId(), payload: 'ok' },
      ];
      await expect(enqueueMany(conn, q, jobs)).rejects.toThrow(/^job 1: /);
      await expect(enqueueMany(conn, 'bad queue', jobs.slice(0, 1))).rejects.toBeInstanceOf(InvalidQueueError);
      expect(await admin.footprint(q)).toEqual({});
    });

    it('reports every job when the server refuses some: BatchError with per-job outcomes', async () => {
      const q = freshQueue();
      await admin.call('SET', `emq:{${q}}:pending`, 'wrong');
      const id = mintId();
      await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'pending');
      const fresh = mintId();
      const error = (await enqueueMany(conn, q, [
        { id, payload: 'a' },
        { id: fresh, payload: 'b' },
      ]).catch((e) => e)) as BatchError;
      expect(error).toBeInstanceOf(BatchError);
      expect(error.results[0]).toEqual({ id, verdict: 'duplicate' });
      expect(error.results[1]).toMatchObject({ id: fresh });
      expect((error.results[1] as { error: Error }).error).toBeInstanceOf(WrongTypeError);
      expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${fresh}`))).toBe(0);
    });

    it('payloads with a byte order mark, text and not, keep every byte in a batch', async () => {
      const q = freshQueue();
      const bom = [0xef, 0xbb, 0xbf];
      const jobs = [new Uint8Array([...bom, 0x41]), new Uint8Array([...bom]), new Uint8Array([...bom, 0xff]), '\ufeffB'].map((payload) => ({
        id: mintId(),
        payload,
      }));
      await enqueueMany(conn, q, jobs);
      for (const job of jobs) {
        const stored = (await admin.call('HGET', `emq:{${q}}:job:${job.id}`, 'payload')) as Buffer;
        const want = typeof job.payload === 'string' ? Buffer.from(job.payload, 'utf8') : Buffer.from(job.payload);
        expect([...stored]).toEqual([...want]);
      }
    });

    it('an empty batch sends nothing', async () => {
      expect(await enqueueMany(conn, freshQueue(), [])).toEqual([]);
    });
  });

  it('every key enqueue builds passes the layout gate, for queue names at the edges of the rule', async () => {
    for (const q of ['a', 'A.b_c-d', 'x'.repeat(128), '...', '-_-']) {
      const id = mintId();
      expect(await enqueue(conn, q, id, 'edge')).toBe('enqueued');
      expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${id}`))).toBe(1);
      await admin.call('DEL', `emq:{${q}}:job:${id}`, `emq:{${q}}:pending`);
    }
  });
});
