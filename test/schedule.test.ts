// @schedule and @schedule-once through each connection against each real server: the row
// born `state scheduled` (three fields, or four with a group), the id in the schedule set at
// its run-at score, nothing in any pending set or lane; duplicates and every refusal write
// nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Outcome, Reply } from '../shared/connection.js';
import {
  BatchError,
  ConflictError,
  InvalidIdError,
  InvalidPayloadError,
  InvalidQueueError,
  KindError,
  SCHEDULE_AT_MAX_MS,
  SCHEDULE_DELAY_MAX_MS,
  WrongTypeError,
  dedupIdOf,
  dedupKey,
  mintId,
  replyText,
  schedule,
  scheduleMany,
  scheduleOnce,
  scheduleOnceScript,
  scheduleScript,
} from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { counting } from './support/counting.js';
import { refusalOf } from './support/gate.js';
import { connectedTo, targets } from './support/targets.js';

const GROUP = 'PRT0KHTOWnGLuC';

describe.each(targets())('@schedule: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  const fields = (q: string, id: string) => admin.row(q, id);
  const scoreOf = async (q: string, id: string) => Number(String(await admin.text('ZSCORE', `emq:{${q}}:schedule`, id)));
  const serverMs = async () => {
    const [s, us] = ((await admin.call('TIME')) as Buffer[]).map(Number) as [number, number];
    return s * 1000 + Math.floor(us / 1000);
  };
  const run = (keys: string[], args: Array<string | Uint8Array>): Promise<Outcome> => conn.run({ op: 'eval', script: scheduleScript.text, keys, args });

  describe('writes', () => {
    it('at: the three-field row, state scheduled, and the id at the given Unix ms; nothing else', async () => {
      const q = freshQueue('sched');
      const id = mintId();
      const at = Date.now() + 60_000;
      expect(await schedule(conn, q, id, 'later', { at })).toBe('scheduled');
      expect(await fields(q, id)).toEqual({ state: 'scheduled', attempts: '0', payload: 'later' });
      expect(await scoreOf(q, id)).toBe(at);
      expect(await admin.footprint(q)).toEqual({ [`emq:{${q}}:job:${id}`]: 'hash', [`emq:{${q}}:schedule`]: 'zset' });
    });

    it('in: the score is the server clock at the call plus the delay', async () => {
      const q = freshQueue('sched');
      for (const inMs of [0, 1, 30_000, SCHEDULE_DELAY_MAX_MS]) {
        const id = mintId();
        const before = await serverMs();
        expect(await schedule(conn, q, id, 'in', { inMs })).toBe('scheduled');
        const after = await serverMs();
        const score = await scoreOf(q, id);
        expect(score).toBeGreaterThanOrEqual(before + inMs);
        expect(score).toBeLessThanOrEqual(after + inMs);
      }
    });

    it('with a group: a fourth field, group; the lane, ring, wake and pending sets untouched', async () => {
      const q = freshQueue('sched');
      const id = mintId();
      expect(await schedule(conn, q, id, 'grouped', { at: 5, group: GROUP })).toBe('scheduled');
      expect(await fields(q, id)).toEqual({ state: 'scheduled', attempts: '0', payload: 'grouped', group: GROUP });
      expect(await scoreOf(q, id)).toBe(5);
      expect(await admin.footprint(q)).toEqual({ [`emq:{${q}}:job:${id}`]: 'hash', [`emq:{${q}}:schedule`]: 'zset' });
    });

    it('the bounds: at 0 and the snowflake horizon, a Date, inMs 0 and ten years', async () => {
      const q = freshQueue('sched');
      const cases: Array<[Parameters<typeof schedule>[4], number | undefined]> = [
        [{ at: 0 }, 0],
        [{ at: SCHEDULE_AT_MAX_MS }, SCHEDULE_AT_MAX_MS],
        [{ at: new Date('2030-01-01T00:00:00Z') }, Date.UTC(2030, 0, 1)],
      ];
      for (const [when, score] of cases) {
        const id = mintId();
        expect(await schedule(conn, q, id, 'x', when)).toBe('scheduled');
        expect(await scoreOf(q, id)).toBe(score);
      }
      expect(SCHEDULE_AT_MAX_MS).toBe(Number(((1n << 63n) - 1n) >> 22n) + 1_704_067_200_000);
      expect(new Date(SCHEDULE_AT_MAX_MS).toISOString()).toBe('2093-09-06T15:47:35.551Z');
    });

    it('answers duplicate for an existing row, whatever it holds, and changes nothing (the schedule type gate comes after)', async () => {
      const q = freshQueue('sched');
      const id = mintId();
      await schedule(conn, q, id, 'first', { at: 10 });
      await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'active', 'attempts', '3');
      let before = await snapshot(admin, q);
      expect(await schedule(conn, q, id, 'second', { inMs: 5, group: GROUP })).toBe('duplicate');
      expect(await snapshot(admin, q)).toEqual(before);

      const q2 = freshQueue('sched');
      const id2 = mintId();
      await admin.call('SET', `emq:{${q2}}:job:${id2}`, 'not a hash');
      await admin.call('SET', `emq:{${q2}}:schedule`, 'not a zset');
      before = await snapshot(admin, q2);
      expect(await schedule(conn, q2, id2, 'x', { at: 1 })).toBe('duplicate');
      expect(await snapshot(admin, q2)).toEqual(before);
    });

    it('payload bytes are stored exactly (the payload is the last argument), with and without a group', async () => {
      const q = freshQueue('sched');
      const payloads = [
        Uint8Array.from({ length: 256 }, (_, i) => i),
        new Uint8Array(0),
        new Uint8Array([0xc3, 0x28, 0xff, 0xfe, 0]),
        Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24),
      ];
      for (const payload of payloads) {
        for (const group of [undefined, GROUP]) {
          const id = mintId();
          expect(await schedule(conn, q, id, payload, { inMs: 1000, group })).toBe('scheduled');
          const stored = (await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer | null;
          expect(Buffer.compare(Buffer.from(stored ?? []), payload)).toBe(0);
        }
      }
    });
  });

  describe('refusals write nothing', () => {
    it('host-side: kind, malformed ids and groups, the queue, the payload, times out of bounds; nothing sent', async () => {
      const q = freshQueue('sched');
      const before = await snapshot(admin, q);
      const id = mintId();
      await expect(schedule(conn, q, 'ORD0NgWEfAEJfs', 'x', { at: 1 })).rejects.toBeInstanceOf(KindError);
      await expect(schedule(conn, q, 'JOB01m8ktkzg6eaatm9sqpt0r51n2', 'x', { at: 1 })).rejects.toBeInstanceOf(InvalidIdError);
      for (const group of ['prt0KHTOWnGLuC', 'USRzzzzzzzzzzz', 'PRT0KHTOWnGLu', 'PRT0KHTOWnGL!C', '']) {
        const err = await schedule(conn, q, id, 'x', { at: 1, group }).catch((e: unknown) => e);
        expect(err, group).toBeInstanceOf(InvalidIdError);
        expect((err as Error).message).toMatch(/^group .* branded id of any namespace/);
      }
      await expect(schedule(conn, 'a{b}', id, 'x', { at: 1 })).rejects.toBeInstanceOf(InvalidQueueError);
      await expect(schedule(conn, 'emq', id, 'x', { at: 1 })).rejects.toBeInstanceOf(InvalidQueueError);
      await expect(schedule(conn, q, id, '\ud800', { at: 1 })).rejects.toBeInstanceOf(InvalidPayloadError);
      const times: Array<Parameters<typeof schedule>[4]> = [
        {},
        { at: 1, inMs: 1 },
        { at: -1 },
        { at: SCHEDULE_AT_MAX_MS + 1 },
        { at: 1.5 },
        { at: Number.NaN },
        { at: Infinity },
        { at: new Date(Number.NaN) },
        { inMs: -1 },
        { inMs: SCHEDULE_DELAY_MAX_MS + 1 },
        { inMs: 0.5 },
      ];
      for (const when of times) await expect(schedule(conn, q, id, 'x', when), JSON.stringify(when)).rejects.toBeInstanceOf(RangeError);
      expect(await snapshot(admin, q)).toEqual(before);
    });

    it('the script: kind, layout and argument gates (EMQKIND, EMQLAYOUT), nothing written', async () => {
      const q = freshQueue('sched');
      const other = `${q}x`;
      const id = mintId();
      const row = `emq:{${q}}:job:${id}`;
      const sched = `emq:{${q}}:schedule`;
      const at = (value: string) => [id, 'at', value, 'p'];
      const cases: Array<[string[], string[], RegExp]> = [
        [[`emq:{${q}}:job:ORD0NgWEfAEJfs`, sched], ['ORD0NgWEfAEJfs', 'at', '1', 'p'], /^EMQKIND:? job id must be JOB-namespaced$/],
        [[], [], /^EMQKIND/], // the keyless EVAL the REST connection loads a script with
        [[row, sched], [], /^EMQKIND/],
        [[`emq:{${q}}:job:JOBzzzzzzzzzzz`, sched], ['JOBzzzzzzzzzzz', 'at', '1', 'p'], /^EMQLAYOUT/],
        [[`emq:{${q}}:job:JOB0JZGkP8sq4`, sched], ['JOB0JZGkP8sq4', 'at', '1', 'p'], /^EMQLAYOUT/],
        [[row], at('1'), /^EMQLAYOUT/],
        [[row, sched, sched], at('1'), /^EMQLAYOUT/],
        [[row, `emq:{${other}}:schedule`], at('1'), /^EMQLAYOUT/],
        [[`emq:{${other}}:job:${id}`, sched], at('1'), /^EMQLAYOUT/],
        [[`emq:{${q}}:job:${mintId()}`, sched], at('1'), /^EMQLAYOUT/],
        [[row, `emq:{${q}}:pending`], at('1'), /^EMQLAYOUT/],
        [[row, `emq:${q}:schedule`], at('1'), /^EMQLAYOUT/],
        [[`emq:{emq}:job:${id}`, 'emq:{emq}:schedule'], at('1'), /^EMQLAYOUT/],
        [[`emq:{${'q'.repeat(129)}}:job:${id}`, `emq:{${'q'.repeat(129)}}:schedule`], at('1'), /^EMQLAYOUT/],
        [[`emq:{a b}:job:${id}`, 'emq:{a b}:schedule'], at('1'), /^EMQLAYOUT/],
        [[row, sched], [id, 'at', '1'], /^EMQLAYOUT/],
        [[row, sched], [id, 'at', '1', GROUP, 'p', 'extra'], /^EMQLAYOUT/],
        [[row, sched], [id, 'At', '1', 'p'], /^EMQLAYOUT/],
        [[row, sched], [id, 'later', '1', 'p'], /^EMQLAYOUT/],
        ...['', '-1', '01', '1.5', '1e3', ' 1', '1 ', '0x10', 'inf', 'nan', String(SCHEDULE_AT_MAX_MS + 1), '99999999999999'].map(
          (v): [string[], string[], RegExp] => [[row, sched], at(v), /^EMQLAYOUT/],
        ),
        [[row, sched], [id, 'in', String(SCHEDULE_DELAY_MAX_MS + 1), 'p'], /^EMQLAYOUT/],
        [[row, sched], [id, 'in', '-5', 'p'], /^EMQLAYOUT/],
        ...['prt0KHTOWnGLuC', 'USRzzzzzzzzzzz', 'PRT0KHTOWnGLu', 'PRT0KHTOWnGLuCx', '12345678901234'].map((g): [string[], string[], RegExp] => [
          [row, sched],
          [id, 'at', '1', g, 'p'],
          /^EMQLAYOUT/,
        ]),
      ];
      const before = await snapshot(admin, q, other);
      for (const [keys, args, why] of cases) {
        const outcome = await run(keys, args);
        expect(outcome.ok, `${keys.join(' ')} | ${args.join(' ')}`).toBe(false);
        expect(!outcome.ok && outcome.error, `${keys.join(' ')} | ${args.join(' ')}`).toMatch(refusalOf(target, scheduleScript, keys, args, why));
        expect(!outcome.ok && outcome.error).toMatch(/^[ -~]{1,400}$/);
      }
      expect(await snapshot(admin, q, other)).toEqual(before);
    });

    it.each([
      ['a string', (a: Admin, k: string) => a.call('SET', k, 'x')],
      ['a list', (a: Admin, k: string) => a.call('RPUSH', k, 'a')],
      ['a hash', (a: Admin, k: string) => a.call('HSET', k, 'f', 'v')],
      ['a set', (a: Admin, k: string) => a.call('SADD', k, 'm')],
    ])('type gate: a schedule key holding %s: WrongTypeError naming it, nothing written', async (_, put) => {
      const q = freshQueue('sched');
      const key = `emq:{${q}}:schedule`;
      await put(admin, key);
      const before = await snapshot(admin, q);
      const err = await schedule(conn, q, mintId(), 'x', { inMs: 5, group: GROUP }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongTypeError);
      expect((err as Error).message).toContain(key);
      expect(await snapshot(admin, q)).toEqual(before);
    });
  });

  describe('dispatch and batches', () => {
    it('EVALSHA in steady state; after SCRIPT FLUSH one EVAL, for bytes that are not UTF-8 with a group too', async () => {
      const q = freshQueue('sched');
      await schedule(conn, q, mintId(), 'warm', { at: 1 });
      await admin.call('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 5; i++) await schedule(conn, q, mintId(), `steady ${i}`, { inMs: i });
      expect(await admin.calls('evalsha')).toBe(5);
      expect(await admin.calls('eval')).toBe(0);
      await admin.call('SCRIPT', 'FLUSH');
      const id = mintId();
      const payload = new Uint8Array([0xff, 0xfe, 0x00, 0xc3]);
      expect(await schedule(conn, q, id, payload, { inMs: 10, group: GROUP })).toBe('scheduled');
      expect([...((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer)]).toEqual([...payload]);
      expect(String(await admin.text('SCRIPT', 'LOAD', scheduleScript.text))).toBe(scheduleScript.sha1);
    });

    it('scheduleMany: 300 jobs (at, in, grouped, repeats) in one pipeline, a verdict each; after a flush, two', async () => {
      const q = freshQueue('sched');
      const ids = Array.from({ length: 270 }, () => mintId());
      const jobs = ids.map((id, i) => ({ id, payload: `p${i}`, ...(i % 3 === 0 ? { at: 1000 + i } : { inMs: 60_000 }), ...(i % 2 ? { group: GROUP } : {}) }));
      for (let k = 0; k < 30; k++) jobs.splice(10 + k * 9, 0, { id: ids[k]!, payload: 'repeat', at: 1 });
      await schedule(conn, q, mintId(), 'warm', { at: 1 });
      const seam = counting(conn);
      const results = await scheduleMany(seam, q, jobs);
      expect(seam.counts).toEqual({ run: 0, pipeline: 1 });
      const seen = new Set<string>();
      results.forEach((r, i) => {
        expect(r.id).toBe(jobs[i]!.id);
        expect(r.verdict).toBe(seen.has(r.id) ? 'duplicate' : 'scheduled');
        seen.add(r.id);
      });
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:schedule`))).toBe(271);
      expect(await fields(q, ids[1]!)).toEqual({ state: 'scheduled', attempts: '0', payload: 'p1', group: GROUP });
      expect(await scoreOf(q, ids[3]!)).toBe(1003);

      await admin.call('SCRIPT', 'FLUSH');
      const seam2 = counting(conn);
      const fresh = await scheduleMany(seam2, q, [
        { payload: 'minted', inMs: 5 },
        { payload: new Uint8Array([0xff]), at: 7, group: GROUP },
      ]);
      expect(seam2.counts).toEqual({ run: 0, pipeline: 2 });
      expect(fresh.map((r) => r.verdict)).toEqual(['scheduled', 'scheduled']);
      expect(await scoreOf(q, fresh[1]!.id)).toBe(7);
    });

    it('scheduleMany refuses the whole batch before sending, naming the job; BatchError says which landed', async () => {
      const q = freshQueue('sched');
      const good = { id: mintId(), payload: 'ok', at: 1 };
      await expect(scheduleMany(conn, q, [good, { id: mintId(), payload: 'x', inMs: -1 }])).rejects.toThrow(/^job 1: inMs/);
      await expect(scheduleMany(conn, q, [good, { id: mintId(), payload: 'x', at: 1, group: 'nope' }])).rejects.toThrow(/^job 1: group/);
      await expect(scheduleMany(conn, q, [{ id: 'JOBnope', payload: 'x', at: 1 }])).rejects.toThrow(/^job 0: /);
      expect(await admin.footprint(q)).toEqual({});
      expect(await scheduleMany(conn, q, [])).toEqual([]);

      await admin.call('SET', `emq:{${q}}:schedule`, 'wrong');
      const existing = mintId();
      await admin.call('HSET', `emq:{${q}}:job:${existing}`, 'state', 'pending');
      const err = (await scheduleMany(conn, q, [{ id: existing, payload: 'a', at: 1 }, good]).catch((e: unknown) => e)) as BatchError;
      expect(err).toBeInstanceOf(BatchError);
      expect(err.results[0]).toEqual({ id: existing, verdict: 'duplicate' });
      expect((err.results[1] as { error: Error }).error).toBeInstanceOf(WrongTypeError);
      expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${good.id}`))).toBe(0);
    });

    it('scheduleMany: a minted id another minter had taken is minted again; the other job is untouched', async () => {
      const q = freshQueue('sched');
      const taken = mintId();
      await admin.call('HSET', `emq:{${q}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
      let first = true;
      const mint = () => (first ? ((first = false), taken) : mintId());
      const [result] = await scheduleMany(conn, q, [{ payload: 'ours', inMs: 100 }], mint);
      expect(result!.verdict).toBe('scheduled');
      expect(result!.id).not.toBe(taken);
      expect((await fields(q, taken)).payload).toBe('theirs');
      expect((await fields(q, result!.id)).payload).toBe('ours');
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:schedule`))).toBe(1);
    });
  });
});

describe.each(targets())('@schedule-once: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  type Options = Parameters<typeof scheduleOnce>[2];
  const once = (q: string, over: Partial<Options> = {}) =>
    scheduleOnce(conn, q, { scope: 'key:test', key: 'k-1', payload: 'body', compare: true, ttlSeconds: 600, inMs: 60_000, ...over } as Options);
  const deOf = async (q: string, key = 'k-1') => dedupKey(q, await dedupIdOf('key:test', key));
  const run = (keys: string[], args: Array<string | Uint8Array>): Promise<Outcome> => conn.run({ op: 'eval', script: scheduleOnceScript.text, keys, args });

  it("the first use writes @schedule's row and entry and parks the id at de:<dedupId> with its TTL", async () => {
    const q = freshQueue('sonce');
    const first = await once(q, { at: 1234, inMs: undefined, group: GROUP });
    expect(first.verdict).toBe('scheduled');
    const de = await deOf(q);
    expect(await admin.footprint(q)).toEqual({ [`emq:{${q}}:job:${first.id}`]: 'hash', [`emq:{${q}}:schedule`]: 'zset', [de]: 'string' });
    const row = Object.fromEntries(Object.entries(await admin.hgetall(`emq:{${q}}:job:${first.id}`)).map(([k, v]) => [k, v.toString()]));
    expect(row).toEqual({ state: 'scheduled', attempts: '0', payload: 'body', group: GROUP });
    expect(String(await admin.text('ZSCORE', `emq:{${q}}:schedule`, first.id))).toBe('1234');
    expect(String(await admin.text('GET', de))).toBe(first.id);
    expect(Number(await admin.call('TTL', de))).toBeGreaterThan(590);
  });

  it('a reuse answers the original id (another time is not compared), also once its row is gone; nothing written', async () => {
    const q = freshQueue('sonce');
    const first = await once(q);
    const before = await snapshot(admin, q);
    expect(await once(q, { inMs: 5 })).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await once(q, { inMs: undefined, at: 99, id: mintId() })).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await once(q, { compare: false, payload: 'other' })).toEqual({ id: first.id, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    await admin.call('DEL', `emq:{${q}}:job:${first.id}`);
    await admin.call('ZREM', `emq:{${q}}:schedule`, first.id);
    expect(await once(q, { payload: 'other now' })).toEqual({ id: first.id, verdict: 'duplicate' });
  });

  it('compare: another payload, another group, a group where there was none (or none where there was one) is a ConflictError, nothing written', async () => {
    const q = freshQueue('sonce');
    const flat = await once(q, { key: 'flat' });
    const grouped = await once(q, { key: 'grouped', group: GROUP });
    const before = await snapshot(admin, q);
    const conflicts: Array<Partial<Options>> = [
      { key: 'flat', payload: 'other' },
      { key: 'flat', group: GROUP },
      { key: 'grouped' },
      { key: 'grouped', group: 'USR0NgWEfAEJfs' },
      { key: 'grouped', group: GROUP, payload: '' },
    ];
    for (const over of conflicts) {
      const err = await once(q, over).catch((e: unknown) => e);
      expect(err, JSON.stringify(over)).toBeInstanceOf(ConflictError);
    }
    expect(await once(q, { key: 'flat' })).toEqual({ id: flat.id, verdict: 'duplicate' });
    expect(await once(q, { key: 'grouped', group: GROUP })).toEqual({ id: grouped.id, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('a caller id naming an existing job is that job; a minted one is a collision, minted again', async () => {
    const q = freshQueue('sonce');
    const taken = mintId();
    await admin.call('HSET', `emq:{${q}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
    const before = await snapshot(admin, q);
    expect(await once(q, { id: taken })).toEqual({ id: taken, verdict: 'duplicate' });
    expect(await snapshot(admin, q)).toEqual(before);
    let first = true;
    const got = await once(q, { key: 'k-2', mint: () => (first ? ((first = false), taken) : mintId()) });
    expect(got.verdict).toBe('scheduled');
    expect(got.id).not.toBe(taken);
    expect(String(await admin.text('GET', await deOf(q, 'k-2')))).toBe(got.id);
  });

  it("refusals: host-side, wrong types (de:, schedule, the row, the parked row), the script's gates; nothing written", async () => {
    const q = freshQueue('sonce');
    let before = await snapshot(admin, q);
    await expect(once(q, { id: 'ORD0NgWEfAEJfs' })).rejects.toBeInstanceOf(KindError);
    await expect(once(q, { group: 'nope' })).rejects.toBeInstanceOf(InvalidIdError);
    await expect(once(q, { inMs: -1 })).rejects.toBeInstanceOf(RangeError);
    await expect(once(q, { ttlSeconds: 0 })).rejects.toBeInstanceOf(RangeError);
    expect(await snapshot(admin, q)).toEqual(before);

    await admin.call('HSET', await deOf(q), 'f', 'v');
    before = await snapshot(admin, q);
    await expect(once(q)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q)).toEqual(before);

    const q2 = freshQueue('sonce');
    await admin.call('SET', `emq:{${q2}}:schedule`, 'x');
    before = await snapshot(admin, q2);
    await expect(once(q2)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q2)).toEqual(before);

    const q3 = freshQueue('sonce');
    const id = mintId();
    await admin.call('SET', `emq:{${q3}}:job:${id}`, 'a string row');
    before = await snapshot(admin, q3);
    await expect(once(q3, { id })).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q3)).toEqual(before);

    const q4 = freshQueue('sonce');
    const parked = mintId();
    await admin.call('SET', await deOf(q4), parked);
    await admin.call('RPUSH', `emq:{${q4}}:job:${parked}`, 'a list row');
    before = await snapshot(admin, q4);
    await expect(once(q4)).rejects.toBeInstanceOf(WrongTypeError);
    expect(await once(q4, { compare: false })).toEqual({ id: parked, verdict: 'duplicate' });
    await admin.call('SET', await deOf(q4), 'ORD0NgWEfAEJfs');
    await expect(once(q4)).rejects.toHaveProperty('code', 'layout');

    const q5 = freshQueue('sonce');
    const id5 = mintId();
    const row = `emq:{${q5}}:job:${id5}`;
    const sched = `emq:{${q5}}:schedule`;
    const de = `emq:{${q5}}:de:abc`;
    const cases: Array<[string[], string[], RegExp]> = [
      [[row, sched, de], [], /^EMQKIND/],
      [[], [], /^EMQKIND/],
      [[row, sched], [id5, '1', '60', 'at', '1', 'p'], /^EMQLAYOUT/],
      [[row, `emq:{${q5}x}:schedule`, de], [id5, '1', '60', 'at', '1', 'p'], /^EMQLAYOUT/],
      [[row, sched, `emq:{${q5}x}:de:abc`], [id5, '1', '60', 'at', '1', 'p'], /^EMQLAYOUT/],
      [[row, sched, `emq:{${q5}}:de:a:b`], [id5, '1', '60', 'at', '1', 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'at', '1'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '2', '60', 'at', '1', 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '0', 'at', '1', 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'on', '1', 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'at', '-1', 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'at', String(SCHEDULE_AT_MAX_MS + 1), 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'in', String(SCHEDULE_DELAY_MAX_MS + 1), 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'in', '1', 'prt0KHTOWnGLuC', 'p'], /^EMQLAYOUT/],
      [[row, sched, de], [id5, '1', '60', 'in', '1', GROUP, 'p', 'x'], /^EMQLAYOUT/],
    ];
    before = await snapshot(admin, q5, `${q5}x`);
    for (const [keys, args, why] of cases) {
      const outcome = await run(keys, args);
      expect(!outcome.ok && outcome.error, `${keys.join(' ')} | ${args.join(' ')}`).toMatch(refusalOf(target, scheduleOnceScript, keys, args, why));
    }
    expect(await snapshot(admin, q5, `${q5}x`)).toEqual(before);
    const ok = await run([row, sched, de], [id5, '0', '9999999999', 'in', '0', GROUP, new Uint8Array([0xff, 0])] as Array<string | Uint8Array>);
    expect(ok.ok && (ok.value as Reply[]).map((v) => (typeof v === 'number' ? v : replyText(v)))).toEqual([1, id5]);
  });

  it('works right after SCRIPT FLUSH with bytes that are not UTF-8 (over REST: loaded by a keyless EVAL, then EVALSHA)', async () => {
    const q = freshQueue('sonce');
    await admin.call('SCRIPT', 'FLUSH');
    const payload = Uint8Array.from({ length: 300 }, (_, i) => 255 - (i % 256));
    const got = await once(q, { payload, group: GROUP });
    expect(got.verdict).toBe('scheduled');
    expect(Buffer.compare((await admin.call('HGET', `emq:{${q}}:job:${got.id}`, 'payload')) as Buffer, payload)).toBe(0);
    await admin.call('SCRIPT', 'FLUSH');
    await expect(once(q, { payload })).rejects.toBeInstanceOf(ConflictError); // no group now: a conflict
    expect(await once(q, { payload, group: GROUP })).toEqual({ id: got.id, verdict: 'duplicate' });
  });
});
