// @enqueue-once through each connection against each real server: the library's dedup key
// (emq:{q}:de:<dedupId>, a string holding the bare job id, with a TTL) that absorbs webhook
// redeliveries and Idempotency-Key retries. Its refusals write nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Outcome, Reply } from '../shared/connection.js';
import {
  enqueueGroupedOnce,
  ConflictError,
  InvalidIdError,
  KindError,
  ProtocolError,
  ServerError,
  WrongTypeError,
  dedupIdOf,
  dedupKey,
  enqueue,
  enqueueOnce,
  enqueueOnceScript,
  mintId,
  replyText,
} from '../shared/index.js';
import { MINT_TRIES } from '../shared/enqueue.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { refusalOf } from './support/gate.js';
import { connectedTo, targets } from './support/targets.js';

/** A job id the EchoMQ library minted (LIBRARY.md §a.4: 2026-01-01T00:00:00Z, node 4, seq 0). */
const LIBRARY_ID = 'JOB0JZGkP8sq48';

describe.each(targets())('@enqueue-once: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  type Options = Parameters<typeof enqueueOnce>[2];
  const once = (q: string, over: Partial<Options> = {}) =>
    enqueueOnce(conn, q, { scope: 'webhook:test', key: 'delivery-1', payload: 'body', compare: false, ttlSeconds: 600, ...over });
  const deOf = async (q: string, scope = 'webhook:test', key = 'delivery-1') => dedupKey(q, await dedupIdOf(scope, key));
  const run = (keys: string[], args: Array<string | Uint8Array>): Promise<Outcome> => conn.run({ op: 'eval', script: enqueueOnceScript.text, keys, args });

  it("the first use enqueues exactly @enqueue's row and pending entry, and parks the bare id at de:<dedupId> with a TTL", async () => {
    const q = freshQueue('once');
    const first = await once(q);
    expect(first.verdict).toBe('enqueued');
    expect(first.id).toMatch(/^JOB[0-9A-Za-z]{11}$/);
    const row = await admin.hgetall(`emq:{${q}}:job:${first.id}`);
    expect(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v.toString()]))).toEqual({ state: 'pending', attempts: '0', payload: 'body' });
    expect(String(await admin.text('ZSCORE', `emq:{${q}}:pending`, first.id))).toBe('0');
    const de = await deOf(q);
    expect(de).toMatch(new RegExp(`^emq:\\{${q}\\}:de:[0-9a-f]{64}$`));
    expect(await admin.footprint(q)).toEqual({ [`emq:{${q}}:job:${first.id}`]: 'hash', [`emq:{${q}}:pending`]: 'zset', [de]: 'string' });
    expect([...((await admin.call('GET', de)) as Buffer)]).toEqual([...Buffer.from(first.id)]);
    const ttl = Number(await admin.call('TTL', de));
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
  });

  it('a reuse (another payload, compare off) answers the original id as duplicate and writes nothing', async () => {
    const q = freshQueue('once');
    const first = await once(q, { payload: 'v1' });
    const before = await snapshot(admin, q);
    expect(await once(q, { payload: 'v1 again, other bytes' })).toEqual({ id: first.id, verdict: 'duplicate' });
    const offered = mintId();
    expect(await once(q, { id: offered, payload: 'v2' })).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${offered}`))).toBe(0);
  });

  it('compare: the same payload answers the job; another payload is a ConflictError and writes nothing', async () => {
    const q = freshQueue('once');
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const first = await once(q, { compare: true, payload: bytes });
    expect(await once(q, { compare: true, payload: bytes.slice() })).toEqual({ id: first.id, verdict: 'duplicate' });
    const before = await snapshot(admin, q);
    for (const other of [new Uint8Array([1]), bytes.slice(0, 255), new Uint8Array(0), 'text']) {
      const err = await once(q, { compare: true, id: mintId(), payload: other }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect((err as Error).message).toContain(first.id);
    }
    await expect(once(q, { compare: true, payload: new Uint8Array([1]) })).rejects.toBeInstanceOf(ConflictError);
    expect(await snapshot(admin, q)).toEqual(before);
    expect([...((await admin.call('HGET', `emq:{${q}}:job:${first.id}`, 'payload')) as Buffer)]).toEqual([...bytes]);
  });

  it('compare off never conflicts, whatever the payload', async () => {
    const q = freshQueue('once');
    const first = await once(q, { payload: 'one' });
    for (const payload of ['two', '', new Uint8Array([0xff, 0]), 'one']) {
      expect(await once(q, { payload })).toEqual({ id: first.id, verdict: 'duplicate' });
    }
  });

  it('the row gone (a worker completed the job): still a duplicate of the original id, compare or not, and nothing written', async () => {
    const q = freshQueue('once');
    const first = await once(q, { compare: true, payload: 'done soon' });
    // as @claim then @complete leave it: no row, no set entry; the dedup key stays
    await admin.call('ZREM', `emq:{${q}}:pending`, first.id);
    await admin.call('DEL', `emq:{${q}}:job:${first.id}`);
    const before = await snapshot(admin, q);
    expect(await once(q, { compare: true, payload: 'other bytes now' })).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await once(q, { compare: false, payload: 'done soon' })).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    expect(Object.keys(await admin.footprint(q))).toEqual([await deOf(q)]);
  });

  it("a de: key SET by hand to a library-minted id (as the library's tests park one) is honoured", async () => {
    const q = freshQueue('once');
    const de = await deOf(q, 'key:lib', 'order-99');
    await admin.call('SET', de, LIBRARY_ID);
    const before = await snapshot(admin, q);
    expect(await once(q, { scope: 'key:lib', key: 'order-99', compare: true })).toEqual({ id: LIBRARY_ID, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    // with the library's row there, compare reads it
    await admin.call('HSET', `emq:{${q}}:job:${LIBRARY_ID}`, 'state', 'pending', 'attempts', '0', 'payload', 'cargo');
    expect(await once(q, { scope: 'key:lib', key: 'order-99', compare: true, payload: 'cargo' })).toEqual({ id: LIBRARY_ID, verdict: 'duplicate' });
    await expect(once(q, { scope: 'key:lib', key: 'order-99', compare: true, payload: 'not cargo' })).rejects.toBeInstanceOf(ConflictError);
  });

  it('two scopes never share a dedup id: the same key in another scope is another job', async () => {
    const q = freshQueue('once');
    const a = await once(q, { scope: 'key:a' });
    const b = await once(q, { scope: 'key:b' });
    expect(b.verdict).toBe('enqueued');
    expect(a.id).not.toBe(b.id);
    const [deA, deB] = [await deOf(q, 'key:a'), await deOf(q, 'key:b')];
    expect(deA).not.toBe(deB);
    expect(String(await admin.text('GET', deA))).toBe(a.id);
    expect(String(await admin.text('GET', deB))).toBe(b.id);
  });

  it("a minted id that names another minter's job is a collision: minted again, and the caller never sees duplicate", async () => {
    const q = freshQueue('once');
    const theirs = mintId();
    await enqueue(conn, q, theirs, 'their job');
    // the first mint names their job; then fresh ids (a remint skips a few to leave lockstep)
    let calls = 0;
    const got = await once(q, { mint: () => (calls++ === 0 ? theirs : mintId()), payload: 'mine' });
    expect(got.verdict).toBe('enqueued');
    expect(got.id).not.toBe(theirs);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect((await admin.hgetall(`emq:{${q}}:job:${theirs}`)).payload!.toString()).toBe('their job');
    expect((await admin.hgetall(`emq:{${q}}:job:${got.id}`)).payload!.toString()).toBe('mine');
    expect(String(await admin.text('GET', await deOf(q)))).toBe(got.id);
  });

  it(`ids that keep colliding: ServerError after ${MINT_TRIES} tries, naming EMQ_NODE_ID; nothing written`, async () => {
    const q = freshQueue('once');
    const theirs = mintId();
    await enqueue(conn, q, theirs, 'their job');
    const before = await snapshot(admin, q);
    let calls = 0;
    const err = await once(q, { mint: () => (calls++, theirs) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as Error).message).toMatch(/colliding.*EMQ_NODE_ID/);
    expect(calls).toBeGreaterThanOrEqual(MINT_TRIES); // remints skip a few ids: more mints than sends
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('compare: a key that parked a grouped job, reused for a flat one with the same payload, is a conflict (another job), writing nothing', async () => {
    const q = freshQueue('once');
    const grouped = await enqueueGroupedOnce(conn, q, {
      scope: 's',
      key: 'k-grouped',
      group: 'PRT0NgWEfAEJfs',
      payload: 'same',
      compare: true,
      ttlSeconds: 60,
    });
    expect(grouped.verdict).toBe('enqueued');
    const before = await snapshot(admin, q);
    await expect(once(q, { scope: 's', key: 'k-grouped', payload: 'same', compare: true })).rejects.toBeInstanceOf(ConflictError);
    expect(await snapshot(admin, q)).toEqual(before);
    // without compare (webhooks) a reuse answers the parked job
    expect(await once(q, { scope: 's', key: 'k-grouped', payload: 'same', compare: false })).toEqual({ id: grouped.id, verdict: 'duplicate' });
  });

  it('a caller-given id that names an existing job answers duplicate with that id, writing nothing', async () => {
    const q = freshQueue('once');
    const given = mintId();
    await enqueue(conn, q, given, 'first');
    const before = await snapshot(admin, q);
    expect(await once(q, { id: given, payload: 'second', compare: true })).toEqual({ id: given, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    // and a fresh caller-given id is the job's id
    const mine = mintId();
    expect(await once(q, { id: mine, key: 'other' })).toEqual({ id: mine, verdict: 'enqueued' });
  });

  it('host-side refusals send nothing: a foreign kind, a malformed id, a bad ttl, a bad queue', async () => {
    const q = freshQueue('once');
    const before = await snapshot(admin, q);
    await expect(once(q, { id: 'ORD0NgWEfAEJfs' })).rejects.toBeInstanceOf(KindError);
    await expect(once(q, { id: 'JOB01m8ktkzg6eaatm9sqpt0r51n2' })).rejects.toBeInstanceOf(InvalidIdError);
    await expect(once(q, { mint: () => 'USR0KHTOWnGLuC' })).rejects.toBeInstanceOf(KindError);
    for (const ttlSeconds of [0, -1, 1.5, Number.NaN, 1e10]) await expect(once(q, { ttlSeconds })).rejects.toBeInstanceOf(RangeError);
    await expect(once('bad{queue}')).rejects.toThrow(/queue/);
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('wrong types (pending, de:, the row read on a miss, the parked row read on a compare): WrongTypeError, nothing written', async () => {
    const q1 = freshQueue('once');
    await admin.call('SET', `emq:{${q1}}:pending`, 'not a zset');
    let before = await snapshot(admin, q1);
    await expect(once(q1)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q1)).toEqual(before);

    const q2 = freshQueue('once');
    await admin.call('HSET', await deOf(q2), 'f', 'v');
    before = await snapshot(admin, q2);
    await expect(once(q2)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q2)).toEqual(before);

    const q3 = freshQueue('once');
    const id = mintId();
    await admin.call('SET', `emq:{${q3}}:job:${id}`, 'a string row');
    before = await snapshot(admin, q3);
    await expect(once(q3, { id })).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q3)).toEqual(before);

    const q4 = freshQueue('once');
    const parked = mintId();
    await admin.call('SET', await deOf(q4), parked);
    await admin.call('LPUSH', `emq:{${q4}}:job:${parked}`, 'a list row');
    before = await snapshot(admin, q4);
    await expect(once(q4, { compare: true })).rejects.toBeInstanceOf(WrongTypeError);
    expect(await once(q4, { compare: false })).toEqual({ id: parked, verdict: 'duplicate' }); // not read without compare
    expect(await snapshot(admin, q4)).toEqual(before);

    // a hit with a wrong-typed pending set is refused too: every type gate runs first
    const q5 = freshQueue('once');
    await admin.call('SET', await deOf(q5), mintId());
    await admin.call('SET', `emq:{${q5}}:pending`, 'not a zset');
    before = await snapshot(admin, q5);
    await expect(once(q5)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q5)).toEqual(before);
  });

  it('finding 5 (security review): a ttl of inf, 1e300 or 9.3e15 is refused before any write (it used to write the row and pending entry, then fail at SET EX)', async () => {
    const q = freshQueue('once');
    const id = mintId();
    const keys = [`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`, `emq:{${q}}:de:finding-5`];
    const before = await snapshot(admin, q);
    for (const ttl of ['inf', '1e300', '9.3e15', '9300000000000000']) {
      const outcome = await conn.run({ op: 'eval', script: enqueueOnceScript.text, keys, args: [id, '0', ttl, 'p'] });
      expect(!outcome.ok && outcome.error, ttl).toMatch(/^EMQLAYOUT/);
    }
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('the kind and layout gates: foreign kinds, keys of other queues, malformed dedup ids, missing or malformed arguments, bad ttls: errors, nothing written', async () => {
    const q = freshQueue('once');
    const other = `${q}x`;
    const id = mintId();
    const row = `emq:{${q}}:job:${id}`;
    const pending = `emq:{${q}}:pending`;
    const de = `emq:{${q}}:de:${'a'.repeat(64)}`;
    const good = [id, '1', '60', 'p'];
    const cases: Array<[string[], Array<string | Uint8Array>, RegExp]> = [
      [[`emq:{${q}}:job:ORD0NgWEfAEJfs`, pending, de], ['ORD0NgWEfAEJfs', '1', '60', 'p'], /^EMQKIND:? job id must be JOB-namespaced$/],
      [[`emq:{${q}}:job:task-1`, pending, de], ['task-1', '0', '60', 'p'], /^EMQKIND:? job id must be JOB-namespaced$/],
      [[row, pending, de], [], /^EMQKIND:? job id must be JOB-namespaced$/],
      [[`emq:{${q}}:job:JOB01m8ktkzg6eaatm9sqpt0r51n2`, pending, de], ['JOB01m8ktkzg6eaatm9sqpt0r51n2', '1', '60', 'p'], /^EMQLAYOUT/],
      [[`emq:{${q}}:job:JOBzzzzzzzzzzz`, pending, de], ['JOBzzzzzzzzzzz', '1', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending], good, /^EMQLAYOUT/],
      [[row, pending, de, de], good, /^EMQLAYOUT/],
      [[row, `emq:{${other}}:pending`, de], good, /^EMQLAYOUT/],
      [[`emq:{${other}}:job:${id}`, pending, de], good, /^EMQLAYOUT/],
      [[`emq:{${q}}:job:${mintId()}`, pending, de], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${other}}:de:abc`], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:de:`], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:de:${'a'.repeat(256)}`], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:de:has space`], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:de:a:b`], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:de:\xff`], good, /^EMQLAYOUT/],
      [[row, pending, `emq:{${q}}:once:${'a'.repeat(64)}`], good, /^EMQLAYOUT/],
      [[row, pending, de], [id, '1', '60'], /^EMQLAYOUT/],
      [[row, pending, de], [id], /^EMQLAYOUT/],
      [[row, pending, de], [...good, 'extra'], /^EMQLAYOUT/],
      [[row, pending, de], [id, '-', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending, de], [id, 'true', '60', 'p'], /^EMQLAYOUT/],
      [[row, pending, de], [id, '', '60', 'p'], /^EMQLAYOUT/],
      // finding 5 (security review): inf, 1e300 and 9.3e15 passed the old checks, and SET … EX then failed after the writes
      ...['0', '-1', '1.5', '01', '1e3', ' 60', '', 'x', '99999999999', 'inf', '1e300', '9.3e15', '9300000000000000'].map(
        (ttl): [string[], string[], RegExp] => [[row, pending, de], [id, '0', ttl, 'p'], /^EMQLAYOUT/],
      ),
    ];
    const before = await snapshot(admin, q, other);
    for (const [keys, args, why] of cases) {
      const outcome = await run(keys, args);
      expect(outcome.ok, `${keys.join(' ')} | ${args.join(' ')}`).toBe(false);
      expect(!outcome.ok && outcome.error, `${keys.join(' ')} | ${args.join(' ')}`).toMatch(refusalOf(target, enqueueOnceScript, keys, args, why));
    }
    expect(await snapshot(admin, q, other)).toEqual(before);
    // the widest ttl is taken
    const widest = await run([row, pending, de], [id, '0', '9999999999', 'p']);
    expect(widest.ok && (widest.value as Reply[]).map((v) => (typeof v === 'number' ? v : replyText(v)))).toEqual([1, id]);
    expect(Number(await admin.call('TTL', de))).toBeGreaterThan(9_999_999_000);
  });

  it('a dedup key holding anything but a branded JOB id is refused (EMQLAYOUT naming the key), nothing written', async () => {
    const q = freshQueue('once');
    const de = await deOf(q);
    for (const value of ['not-an-id', 'ORD0NgWEfAEJfs', 'JOB01m8ktkzg6eaatm9sqpt0r51n2', `${LIBRARY_ID} fingerprint`, '', 'JOBzzzzzzzzzzz']) {
      await admin.call('SET', de, value);
      const before = await snapshot(admin, q);
      const err = await once(q, { compare: true }).catch((e: unknown) => e);
      expect(err, value).toHaveProperty('code', 'layout');
      expect((err as Error).message).toContain(de);
      expect(await snapshot(admin, q)).toEqual(before);
    }
  });

  it('error replies stay short printable ASCII: a huge queue in the keys, a huge hostile value in de:', async () => {
    const big = `h${'\xff'.repeat(50_000)}`; // no {, }: the pattern still finds this queue
    const id = mintId();
    let outcome = await run([`emq:{${big}}:job:${mintId()}`, `emq:{${big}}:pending`, `emq:{${big}}:de:a`], [id, '0', '60', 'p']);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error).toMatch(/^EMQLAYOUT/);
      expect(outcome.error).toMatch(/^[\x20-\x7e]*$/);
      expect(outcome.error.length).toBeLessThan(1_200);
    }
    const q = freshQueue('once');
    const de = `emq:{${q}}:de:${'d'.repeat(255)}`;
    await admin.call('SET', de, Buffer.alloc(100_000, 0xfe));
    outcome = await run([`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`, de], [id, '1', '60', 'p']);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error).toMatch(/^EMQLAYOUT/);
      expect(outcome.error).toMatch(/^[\x20-\x7e]*$/);
      expect(outcome.error.length).toBeLessThan(2_000);
    }
    await admin.call('DEL', de);
    await admin.call('HSET', de, 'f', 'v');
    outcome = await run([`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`, de], [id, '1', '60', 'p']);
    expect(!outcome.ok && outcome.error).toMatch(/^WRONGTYPE/);
    expect(!outcome.ok && outcome.error.length).toBeLessThan(1_200);
    expect(Object.keys(await admin.footprint(q))).toEqual([de]);
  });

  it('payloads arrive byte-exact: NUL, non-UTF-8, empty, and 256 KiB that is not UTF-8 (the payload is the last argument), compared on reuse', async () => {
    const q = freshQueue('once');
    const big = Uint8Array.from({ length: 256 * 1024 }, (_, i) => (i % 7 === 0 ? 0xff : (i * 31) % 256));
    const payloads: Array<[string, Uint8Array | string]> = [
      ['nul', new Uint8Array([0, 1, 0, 2])],
      ['latin1', new Uint8Array([0xe9, 0x74, 0xe9])],
      ['empty', new Uint8Array(0)],
      ['text', 'héllo ✓'],
      ['big', big],
    ];
    for (const [key, payload] of payloads) {
      const first = await once(q, { key, payload, compare: true });
      expect(first.verdict, key).toBe('enqueued');
      const want = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
      const stored = (await admin.hgetall(`emq:{${q}}:job:${first.id}`)).payload ?? Buffer.alloc(0);
      expect(Buffer.compare(stored, want), key).toBe(0);
      expect(await once(q, { key, payload: typeof payload === 'string' ? payload : payload.slice(), compare: true })).toEqual({
        id: first.id,
        verdict: 'duplicate',
      });
    }
  });

  it('works right after SCRIPT FLUSH, also for the longest queue name, a 10-digit ttl and bytes that are not UTF-8 (over REST, an EVAL too long for a request line, with bytes JSON cannot carry, loads the script with a keyless EVAL, then sends the EVALSHA)', async () => {
    const q = freshQueue('once');
    await admin.call('SCRIPT', 'FLUSH');
    expect((await once(q)).verdict).toBe('enqueued');
    await admin.call('SCRIPT', 'FLUSH');
    expect((await once(q)).verdict).toBe('duplicate');
    const longest = `${freshQueue('once')}${'x'.repeat(128)}`.slice(0, 128);
    const payload = new Uint8Array([0xff, 0xfe, 0, 0xc3]);
    await admin.call('SCRIPT', 'FLUSH');
    const first = await once(longest, { payload, compare: true, ttlSeconds: 9_999_999_999 });
    expect(first.verdict).toBe('enqueued');
    expect([...(await admin.hgetall(`emq:{${longest}}:job:${first.id}`)).payload!]).toEqual([...payload]);
    await admin.call('SCRIPT', 'FLUSH');
    expect(await once(longest, { payload, compare: true, ttlSeconds: 9_999_999_999 })).toEqual({ id: first.id, verdict: 'duplicate' });
  });
});

describe('enqueueOnce reads its replies strictly', () => {
  /** A connection that answers every call with one outcome. */
  const answering = (outcome: Outcome): Connection => ({
    run: async () => outcome,
    pipeline: async (commands) => commands.map(() => outcome),
    close: async () => undefined,
  });
  const call = (outcome: Outcome, id?: string) =>
    enqueueOnce(answering(outcome), 'q', { scope: 's', key: 'k', payload: 'p', compare: true, ttlSeconds: 60, ...(id ? { id } : {}) });

  it('anything but [1|0|2, a JOB id] is a ProtocolError; 1 and 2 must name the id sent', async () => {
    const id = mintId();
    for (const value of [
      1,
      'OK',
      null,
      [1],
      [1, id, 3],
      [3, id],
      [-1, id],
      ['1', id],
      [0, 'JOB01m8ktkzg6eaatm9sqpt0r51n2'],
      [0, 'ORD0NgWEfAEJfs'],
      [0, ''],
      [0, 7],
      [1, mintId()],
      [2, mintId()],
    ]) {
      await expect(call({ ok: true, value: value as never }, id), JSON.stringify(value)).rejects.toBeInstanceOf(ProtocolError);
    }
    expect(await call({ ok: true, value: [0, LIBRARY_ID] }, id)).toEqual({ id: LIBRARY_ID, verdict: 'duplicate' });
    expect(await call({ ok: true, value: [1n, new TextEncoder().encode(id)] }, id)).toEqual({ id, verdict: 'enqueued' });
    expect(await call({ ok: true, value: [2, id] }, id)).toEqual({ id, verdict: 'duplicate' });
  });

  it('error replies map to typed errors', async () => {
    await expect(call({ ok: false, error: 'EMQCONFLICT this dedup id parks job JOB0JZGkP8sq48, enqueued with another payload' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(call({ ok: false, error: 'WRONGTYPE emq:{q}:pending holds a string, not a zset' })).rejects.toBeInstanceOf(WrongTypeError);
    await expect(call({ ok: false, error: 'EMQKIND: job id must be JOB-namespaced' })).rejects.toBeInstanceOf(KindError);
  });
});
