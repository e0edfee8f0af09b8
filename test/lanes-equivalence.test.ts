// On every input the library's @schedule and @genqueue accept and our rules pass, our
// scripts write the same keys and reply the same (and the dedup-keyed variants, on a first
// use, the same plus the dedup key). Property-checked against each real server: the
// library's text runs first, then the state is reset and ours runs. Our scripts take the
// payload last, so the same input is passed in each script's argument order.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { encodeId, genqueueOnceScript, genqueueScript, mintId, scheduleOnceScript, scheduleScript } from '../shared/index.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { SEED_GENQUEUE } from './support/library-control.js';

// The library's scripts, restated from EchoMQ.Jobs (@schedule) and EchoMQ.Lanes (@genqueue,
// in support/library-control.ts) (../shared/protocol/LIBRARY.md §c.3, §c.4): the seeds ours
// must agree with.
const SEED_SCHEDULE = `if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local score
if ARGV[3] == 'in' then
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  score = now + tonumber(ARGV[4])
else
  score = tonumber(ARGV[4])
end
redis.call('HSET', KEYS[1], 'state', 'scheduled', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', KEYS[2], score, ARGV[1])
return 1`;

const HORIZON = 3_903_090_455_551n;
const DELAY_MAX = 315_576_000_000n;
const queueName = fc.string({ unit: fc.constantFrom(...'abcXYZ019._-'), minLength: 1, maxLength: 12 }).filter((q) => q !== 'emq');
const payloadBytes = fc.uint8Array({ maxLength: 300 });
const wholeUpTo = (max: bigint) => fc.oneof(fc.constantFrom(0n, 1n, max), fc.bigInt({ min: 0n, max })).map(String);
const when = fc.oneof(
  wholeUpTo(HORIZON).map((v) => ['at', v] as const),
  wholeUpTo(DELAY_MAX).map((v) => ['in', v] as const),
);
/** A branded id of any namespace: a group. */
const groupId = fc
  .tuple(fc.stringMatching(/^[A-Z]{3}$/), fc.oneof(fc.constantFrom(0n, 2n ** 63n - 1n), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n })))
  .map(([ns, s]) => encodeId(ns, s));

describe.each(inject('servers'))("our scripts ≡ the library's on accepted inputs: $name", ({ url }) => {
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(url);
  });
  afterAll(() => admin?.close());

  const bytes = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v);
  const sortedPairs = (flat: unknown[]) => {
    const pairs: string[] = [];
    for (let i = 0; i < flat.length; i += 2) pairs.push(`${bytes(flat[i])}=${bytes(flat[i + 1])}`);
    return pairs.sort();
  };
  /** Each key's type and contents, read by type. */
  async function state(keys: string[]) {
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const type = String(await admin.text('TYPE', k));
      let value: unknown = null;
      if (type === 'hash')
        value = sortedPairs(
          ((await admin.call('HGETALL', k)) as unknown[]).flatMap((e) =>
            Buffer.isBuffer(e) ? [e] : [(e as { key: Buffer }).key, (e as { value: Buffer }).value],
          ),
        );
      else if (type === 'zset') {
        // [member, score] pairs, however the client shapes the reply (flat, nested, or glide's { key, value })
        const flat = ((await admin.call('ZRANGE', k, '0', '-1', 'WITHSCORES')) as unknown[]).flatMap((e) =>
          Array.isArray(e)
            ? e
            : e !== null && typeof e === 'object' && 'key' in e
              ? [(e as { key: unknown }).key, (e as unknown as { value: unknown }).value]
              : [e],
        );
        const pairs: Array<[unknown, number]> = [];
        for (let i = 0; i < flat.length; i += 2) pairs.push([bytes(flat[i]), Number(String(flat[i + 1]))]);
        value = pairs;
      } else if (type === 'list') value = ((await admin.call('LRANGE', k, '0', '-1')) as Buffer[]).map(bytes);
      else if (type === 'set') value = ((await admin.call('SMEMBERS', k)) as Buffer[]).map(bytes).sort();
      else if (type === 'string') value = bytes(await admin.call('GET', k));
      out[k] = [type, value];
    }
    return out;
  }
  const serverMs = async () => {
    const [s, us] = ((await admin.call('TIME')) as Buffer[]).map(Number) as [number, number];
    return s * 1000 + Math.floor(us / 1000);
  };

  describe('@schedule', () => {
    const before = fc.constantFrom('empty', 'row exists', 'row is a string', 'schedule has others', 'both');
    const arbitrary = fc.record({ q: queueName, payload: payloadBytes, when, state: before, once: fc.boolean(), compare: fc.constantFrom('0', '1') });

    it('same reply, same row, same schedule entries (an `in` score: the server clock at each run plus the delay)', async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, async ({ q, payload, when: [mode, value], state: s, once, compare }) => {
          // the dedup-keyed variant, first use: its row read refuses a string row (WRONGTYPE), outside the accepted inputs
          if (once && s === 'row is a string') return;
          const id = mintId();
          const keys = [`emq:{${q}}:job:${id}`, `emq:{${q}}:schedule`];
          const de = `emq:{${q}}:de:d-${id}`;
          const prepare = async () => {
            await admin.call('DEL', ...keys, de);
            if (s === 'row exists' || s === 'both') await admin.call('HSET', keys[0]!, 'state', 'active', 'attempts', '2');
            if (s === 'row is a string') await admin.call('SET', keys[0]!, 'x');
            if (s === 'schedule has others' || s === 'both') await admin.call('ZADD', keys[1]!, '5', 'JOB00000000001');
          };
          const p = Buffer.from(payload);
          await prepare();
          const t0 = await serverMs();
          const seedReply = await admin.call('EVAL', SEED_SCHEDULE, '2', ...keys, id, p, mode, value);
          const t1 = await serverMs();
          const seedState = await state(keys);
          await prepare();
          const t2 = await serverMs();
          const ourReply = once
            ? await admin.call('EVAL', scheduleOnceScript.text, '3', ...keys, de, id, compare, '60', mode, value, p)
            : await admin.call('EVAL', scheduleScript.text, '2', ...keys, id, mode, value, p);
          const t3 = await serverMs();
          const ourState = await state(keys);
          const deState = await state([de]);
          await admin.call('DEL', ...keys, de);

          if (once) {
            // first use: 1 → {1, id} and the dedup key parks id; an existing row → {2, id}, nothing written
            expect(ourReply).toEqual(seedReply === 1 ? [1, Buffer.from(id)] : [2, Buffer.from(id)]);
            expect(deState[de]).toEqual(seedReply === 1 ? ['string', Buffer.from(id).toString('hex')] : ['none', null]);
          } else {
            expect(ourReply).toEqual(seedReply);
          }
          // the scores of our id: equal for at; for in, each within its run's clock plus the delay
          const scoreOf = (st: Record<string, unknown>) => {
            const [type, pairs] = st[keys[1]!] as [string, Array<[unknown, number]>];
            if (type !== 'zset') return undefined;
            const at = pairs.findIndex(([member]) => member === Buffer.from(id).toString('hex'));
            if (at < 0) return undefined;
            const score = pairs[at]![1];
            st[keys[1]!] = [type, pairs.map((pair, i) => (i === at ? [pair[0], 'compared apart'] : pair))];
            return score;
          };
          const seedScore = scoreOf(seedState);
          const ourScore = scoreOf(ourState);
          expect(ourState).toEqual(seedState);
          expect(ourScore === undefined).toBe(seedScore === undefined);
          if (seedScore !== undefined) {
            if (mode === 'at') expect(ourScore).toBe(Number(value));
            else {
              expect(seedScore).toBeGreaterThanOrEqual(t0 + Number(value));
              expect(seedScore).toBeLessThanOrEqual(t1 + Number(value));
              expect(ourScore).toBeGreaterThanOrEqual(t2 + Number(value));
              expect(ourScore).toBeLessThanOrEqual(t3 + Number(value));
            }
          }
        }),
        { numRuns: 80 },
      );
    });
  });

  describe('@genqueue', () => {
    const before = fc.record({
      row: fc.constantFrom('none', 'hash', 'string'),
      laneOthers: fc.boolean(),
      paused: fc.constantFrom('none', 'this group', 'another group'),
      glimit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      gactive: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      ring: fc.constantFrom('none', 'this group', 'another group', 'both'),
      wake: fc.integer({ min: 0, max: 70 }),
    });
    const arbitrary = fc.record({ q: queueName, group: groupId, payload: payloadBytes, before, once: fc.boolean(), compare: fc.constantFrom('0', '1') });

    it('same reply, same row, lane, ring, paused, glimit, gactive and wake', async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, async ({ q, group, payload, before: b, once, compare }) => {
          if (once && b.row === 'string') return; // the dedup-keyed variant refuses a string row (WRONGTYPE)
          const id = mintId();
          const base = `emq:{${q}}:`;
          const keys = [`${base}job:${id}`, `${base}g:${group}:pending`, ...['ring', 'paused', 'glimit', 'gactive', 'wake'].map((s) => base + s)];
          const [row, lane, ring, paused, glimit, gactive, wake] = keys as [string, string, string, string, string, string, string];
          const de = `${base}de:d-${id}`;
          const other = 'ORD0NgWEfAEJfs' === group ? 'USR0NgWEfAEJfs' : 'ORD0NgWEfAEJfs';
          const prepare = async () => {
            await admin.call('DEL', ...keys, de);
            if (b.row === 'hash') await admin.call('HSET', row, 'state', 'active', 'attempts', '1', 'group', group);
            if (b.row === 'string') await admin.call('SET', row, 'x');
            if (b.laneOthers) await admin.call('ZADD', lane, '0', 'JOB00000000001');
            if (b.paused === 'this group') await admin.call('SADD', paused, group);
            if (b.paused === 'another group') await admin.call('SADD', paused, other);
            if (b.glimit !== undefined) await admin.call('HSET', glimit, group, String(b.glimit), other, '9');
            if (b.gactive !== undefined) await admin.call('HSET', gactive, group, String(b.gactive));
            if (b.ring === 'this group' || b.ring === 'both') await admin.call('RPUSH', ring, group);
            if (b.ring === 'another group' || b.ring === 'both') await admin.call('RPUSH', ring, other);
            for (let i = 0; i < b.wake; i++) await admin.call('LPUSH', wake, '1');
          };
          const p = Buffer.from(payload);
          await prepare();
          const seedReply = await admin.call('EVAL', SEED_GENQUEUE, '7', ...keys, id, p, group);
          const seedState = await state(keys);
          await prepare();
          const ourReply = once
            ? await admin.call('EVAL', genqueueOnceScript.text, '8', ...keys, de, id, compare, '60', group, p)
            : await admin.call('EVAL', genqueueScript.text, '7', ...keys, id, group, p);
          const ourState = await state(keys);
          const deState = await state([de]);
          await admin.call('DEL', ...keys, de);
          if (once) {
            expect(ourReply).toEqual(seedReply === 1 ? [1, Buffer.from(id)] : [2, Buffer.from(id)]);
            expect(deState[de]).toEqual(seedReply === 1 ? ['string', Buffer.from(id).toString('hex')] : ['none', null]);
          } else {
            expect(ourReply).toEqual(seedReply);
          }
          expect(ourState).toEqual(seedState);
        }),
        { numRuns: 120 },
      );
    });
  });
});
