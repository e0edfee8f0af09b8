// On every input the seed's @enqueue accepts, the hardened script writes the same row
// and pending entry and returns the same reply (../shared/protocol/PROTOCOL.md, beside this repository). Property-checked against
// each real server: the seed's text runs first, then the state is reset and ours runs.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { enqueueScript, mintId } from '../shared/index.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { LIBRARY_ENQUEUE as SEED } from './support/library-repeat.js';

// The seed's script: the library's @enqueue (EchoMQ.Jobs), as test/support/library-repeat.ts restates it.

const queueName = fc.string({ unit: fc.constantFrom(...'abcXYZ019._-'), minLength: 1, maxLength: 12 });
const before = fc.constantFrom('empty', 'row exists', 'pending has others', 'both');

describe.each(inject('servers'))('hardened @enqueue ≡ seed on accepted inputs: $name', ({ url }) => {
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(url);
  });
  afterAll(() => admin?.close());

  async function snapshot(keys: string[]) {
    return {
      row: await admin.call('HGETALL', keys[0]!),
      rowType: String(await admin.text('TYPE', keys[0]!)),
      pending: await admin.call('ZRANGE', keys[1]!, '0', '-1', 'WITHSCORES'),
    };
  }

  it('same reply, same row, same pending set', async () => {
    await fc.assert(
      fc.asyncProperty(queueName, fc.uint8Array({ maxLength: 300 }), before, async (q, payload, state) => {
        const id = mintId();
        const keys = [`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`];
        const prepare = async () => {
          await admin.call('DEL', ...keys);
          if (state === 'row exists' || state === 'both') await admin.call('HSET', keys[0]!, 'state', 'active', 'attempts', '2');
          if (state === 'pending has others' || state === 'both') await admin.call('ZADD', keys[1]!, '0', 'JOB00000000001');
        };
        const args = [id, Buffer.from(payload)];
        await prepare();
        const seedReply = await admin.call('EVAL', SEED, '2', ...keys, ...args);
        const seedState = await snapshot(keys);
        await prepare();
        const ourReply = await admin.call('EVAL', enqueueScript.text, '2', ...keys, ...args);
        const ourState = await snapshot(keys);
        await admin.call('DEL', ...keys);
        expect(ourReply).toEqual(seedReply);
        expect(ourState).toEqual(seedState);
      }),
      { numRuns: 60 },
    );
  });
});
