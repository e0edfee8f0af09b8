// On every input the library's flow scripts accept and our rules pass (a new parent, new
// children), our scripts write the same keys, field for field and in the same order, and reply
// the same: @flow as the library's @enqueue_flow followed by the parent_policy HSET its host
// sends per child; @flow-parent as its @hold_parent; @flow-child (land) as its
// @enqueue_flow_child followed by that HSET. Property-checked against each real server: the
// library's text runs first, then the state is reset and ours runs. Ours take the payloads
// last (@flow: all of them in one argument), so the same input is passed in each one's form.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { flowChildScript, flowParentScript, flowScript, mintId } from '../shared/index.js';
import { connectAdmin, type Admin } from './support/admin.js';

// The library's scripts, restated from EchoMQ.Flows (../shared/protocol/LIBRARY.md §c.5): the
// seeds ours must agree with.
const SEED_ENQUEUE_FLOW = `if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local n = tonumber(ARGV[3])
for i = 1, n do
  if string.sub(ARGV[2 + 2 * i], 1, 3) ~= 'JOB' then
    return redis.error_reply('EMQKIND job id must be JOB-namespaced')
  end
end
for i = 1, n do
  local child = KEYS[3 + i]
  local cid = ARGV[2 + 2 * i]
  local cpayload = ARGV[3 + 2 * i]
  redis.call('HSET', child, 'state', 'pending', 'attempts', '0', 'payload', cpayload, 'parent', ARGV[1])
  redis.call('ZADD', KEYS[3], 0, cid)
end
redis.call('HSET', KEYS[1], 'state', 'awaiting_children', 'attempts', '0', 'payload', ARGV[2])
redis.call('SET', KEYS[2], n)
return n`;

const SEED_HOLD_PARENT = `if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
redis.call('HSET', KEYS[1], 'state', 'awaiting_children', 'attempts', '0', 'payload', ARGV[2])
redis.call('SET', KEYS[2], tonumber(ARGV[3]))
return 1`;

const SEED_ENQUEUE_FLOW_CHILD = `if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2], 'parent', ARGV[3], 'parent_queue', ARGV[4])
else
  redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2], 'parent', ARGV[3])
end
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1`;

const queueName = fc.string({ unit: fc.constantFrom(...'abcXYZ019._-'), minLength: 1, maxLength: 12 }).filter((q) => q !== 'emq');
const payloadBytes = fc.uint8Array({ maxLength: 300 });
const policy = fc.constantFrom('fp', 'id');

describe.each(inject('servers'))("our flow scripts ≡ the library's on accepted inputs: $name", ({ url }) => {
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(url);
  });
  afterAll(() => admin?.close());

  const hex = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v);
  const flat = (reply: unknown[]) =>
    reply.flatMap((e) =>
      Array.isArray(e)
        ? e
        : e !== null && typeof e === 'object' && 'key' in e
          ? [(e as { key: unknown }).key, (e as unknown as { value: unknown }).value]
          : [e],
    );
  /** Each key's type and contents; a hash's fields in the server's order. */
  async function state(keys: string[]) {
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const type = String(await admin.text('TYPE', k));
      let value: unknown = null;
      if (type === 'hash') value = flat((await admin.call('HGETALL', k)) as unknown[]).map(hex);
      else if (type === 'zset') value = flat((await admin.call('ZRANGE', k, '0', '-1', 'WITHSCORES')) as unknown[]).map((v) => String(hex(v)));
      else if (type === 'list') value = ((await admin.call('LRANGE', k, '0', '-1')) as Buffer[]).map(hex);
      else if (type === 'string') value = hex(await admin.call('GET', k));
      out[k] = [type, value];
    }
    return out;
  }

  it('@flow ≡ @enqueue_flow then HSET parent_policy per child', async () => {
    const arbitrary = fc.record({
      q: queueName,
      parent: payloadBytes,
      children: fc.array(fc.record({ payload: payloadBytes, policy }), { minLength: 1, maxLength: 8 }),
      others: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ q, parent, children, others }) => {
        const p = mintId();
        const ids = children.map(() => mintId());
        const base = `emq:{${q}}:job:`;
        const keys = [base + p, `${base + p}:dependencies`, `emq:{${q}}:pending`, ...ids.map((id) => base + id)];
        const prepare = async () => {
          await admin.call('DEL', ...keys);
          if (others) await admin.call('ZADD', keys[2]!, '0', 'JOB00000000001');
        };
        await prepare();
        const seedReply = await admin.call(
          'EVAL',
          SEED_ENQUEUE_FLOW,
          String(keys.length),
          ...keys,
          p,
          Buffer.from(parent),
          String(children.length),
          ...children.flatMap((c, i) => [ids[i]!, Buffer.from(c.payload)]),
        );
        for (const [i, c] of children.entries()) await admin.call('HSET', base + ids[i], 'parent_policy', c.policy);
        const seedState = await state(keys);
        await prepare();
        const all = Buffer.concat([parent, ...children.map((c) => c.payload)]);
        const ourReply = await admin.call(
          'EVAL',
          flowScript.text,
          String(keys.length),
          ...keys,
          p,
          String(parent.length),
          ...children.flatMap((c, i) => [ids[i]!, c.policy, String(c.payload.length)]),
          all,
        );
        const ourState = await state(keys);
        await admin.call('DEL', ...keys);
        expect(ourReply).toEqual(seedReply);
        expect(ourState).toEqual(seedState);
      }),
      { numRuns: 60 },
    );
  });

  it('@flow-parent ≡ @hold_parent', async () => {
    const arbitrary = fc.record({ q: queueName, payload: payloadBytes, n: fc.oneof(fc.constantFrom(1, 1000), fc.integer({ min: 1, max: 1000 })) });
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ q, payload, n }) => {
        const p = mintId();
        const row = `emq:{${q}}:job:${p}`;
        const keys = [row, `${row}:dependencies`];
        await admin.call('DEL', ...keys);
        const seedReply = await admin.call('EVAL', SEED_HOLD_PARENT, '2', ...keys, p, Buffer.from(payload), String(n));
        const seedState = await state(keys);
        await admin.call('DEL', ...keys);
        const ourReply = await admin.call('EVAL', flowParentScript.text, '3', ...keys, `${row}:processed`, p, String(n), Buffer.from(payload));
        const ourState = await state([...keys, `${row}:processed`]);
        await admin.call('DEL', ...keys);
        expect(ourReply).toEqual(seedReply);
        expect(ourState).toEqual({ ...seedState, [`${row}:processed`]: ['none', null] });
      }),
      { numRuns: 60 },
    );
  });

  it('@flow-child land ≡ @enqueue_flow_child then HSET parent_policy', async () => {
    const arbitrary = fc.record({
      cq: queueName,
      pq: fc.option(queueName, { nil: undefined }),
      payload: payloadBytes,
      policy,
      others: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ cq, pq: other, payload, policy: pol, others }) => {
        const pq = other === cq ? undefined : other; // the parent in the child's queue: no parent_queue
        const [p, c, sibling] = [mintId(), mintId(), mintId()];
        const row = `emq:{${cq}}:job:${c}`;
        const keys = [row, `emq:{${cq}}:pending`];
        const record = pq === undefined ? `emq:{${cq}}:job:${p}:processed` : `emq:{${cq}}:flow:outbox`;
        const prepare = async () => {
          await admin.call('DEL', ...keys, record);
          if (others) await admin.call('ZADD', keys[1]!, '0', 'JOB00000000001');
          if (others && pq !== undefined) await admin.call('RPUSH', record, `${pq}\u0000${p}\u0000${sibling}\u0000r`);
          if (others && pq === undefined) await admin.call('HSET', record, sibling, 'r');
        };
        await prepare();
        const seedReply = await admin.call('EVAL', SEED_ENQUEUE_FLOW_CHILD, '2', ...keys, c, Buffer.from(payload), p, pq ?? '');
        await admin.call('HSET', row, 'parent_policy', pol);
        const seedState = await state([...keys, record]);
        await prepare();
        const ourReply = await admin.call('EVAL', flowChildScript.text, '3', ...keys, record, c, p, pq ?? '', pol, 'land', Buffer.from(payload));
        const ourState = await state([...keys, record]);
        await admin.call('DEL', ...keys, record);
        expect(ourReply).toEqual(seedReply);
        expect(ourState).toEqual(seedState);
      }),
      { numRuns: 80 },
    );
  });
});
