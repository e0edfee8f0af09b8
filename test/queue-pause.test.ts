// pauseQueue writes what the library's Admin.pause and Admin.resume write (property-checked
// from any meta hash, over any sequence of the two), the library's claims then stop while
// admission still answers enqueued, and they serve again after a resume; every refusal
// writes nothing. Against each server, over glide (the gateway admits a script only once
// functions/gateway/script-calls.ts lays it out: the lead's part, with the control scope).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidQueueError, WrongTypeError, enqueue, enqueueGrouped, mintId, pauseQueue, queuePauseScript } from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { keyspaceBySuffix, libraryVerbs } from './support/library-control.js';
import { connectedTo, glideTargets } from './support/targets.js';

const G = 'PRT0KHTOWnGLuC';

describe.each(glideTargets())('pauseQueue ≡ Admin.pause / Admin.resume: $name', (target) => {
  const t = connectedTo(target);

  it('the same meta hash after any sequence of pauses and resumes, from any meta', async () => {
    const field = fc.constantFrom('paused', 'concurrency', 'max', 'x');
    const arbitrary = fc.record({
      meta: fc.dictionary(field, fc.constantFrom('1', '0', 'yes', '')),
      verbs: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ meta, verbs }) => {
        const [ours, theirs] = [freshQueue('qp-ours'), freshQueue('qp-lib')];
        for (const q of [ours, theirs]) {
          if (Object.keys(meta).length > 0) await t.admin.call('HSET', `emq:{${q}}:meta`, ...Object.entries(meta).flat());
        }
        const library = libraryVerbs(t.admin, theirs);
        for (const paused of verbs) {
          expect(await (paused ? library.pause() : library.resume())).toBe(1);
          expect(await pauseQueue(t.conn, ours, paused)).toEqual({ queue: ours, paused });
        }
        expect(await keyspaceBySuffix(t.admin, ours)).toEqual(await keyspaceBySuffix(t.admin, theirs));
        await t.admin.call('DEL', `emq:{${ours}}:meta`, `emq:{${theirs}}:meta`);
      }),
      { numRuns: 60 },
    );
  });

  it('refusals write nothing: a meta of another type, wrong keys or arguments, a bad queue or flag', async () => {
    const q = freshQueue('qp-refuse');
    const meta = `emq:{${q}}:meta`;
    await t.admin.call('HSET', `emq:{${q}}:other`, 'f', 'v');
    const raw = (keys: string[], args: string[]) => t.admin.call('EVAL', queuePauseScript.text, String(keys.length), ...keys, ...args);
    const before = await snapshot(t.admin, q);
    for (const [keys, args, text] of [
      [[meta], ['PAUSE'], /EMQLAYOUT:? expected 1 argument: pause or resume/],
      [[meta], [], /EMQLAYOUT:? expected 1 argument/],
      [[meta], ['pause', 'resume'], /EMQLAYOUT:? expected 1 argument/],
      [[`emq:{${q}}:metas`], ['pause'], /EMQLAYOUT:? KEYS: exactly emq:\{q\}:meta of one queue/],
      [[meta, meta], ['pause'], /EMQLAYOUT:? KEYS/],
      ['emq:{emq}:meta', ['pause'], /EMQLAYOUT:? KEYS/],
    ] as Array<[string[] | string, string[], RegExp]>) {
      await expect(raw(typeof keys === 'string' ? [keys] : keys, args)).rejects.toThrow(text);
    }
    await expect(pauseQueue(t.conn, 'a queue', true)).rejects.toThrow(InvalidQueueError);
    await expect(pauseQueue(t.conn, q, 'yes' as unknown as boolean)).rejects.toThrow(InvalidArgumentError);
    expect(await snapshot(t.admin, q)).toEqual(before);

    for (const holds of [
      ['SET', meta, 'x'],
      ['RPUSH', meta, 'paused'],
    ]) {
      await t.admin.call(...holds);
      const held = await snapshot(t.admin, q);
      for (const paused of [true, false]) await expect(pauseQueue(t.conn, q, paused)).rejects.toThrow(WrongTypeError);
      expect(await snapshot(t.admin, q)).toEqual(held);
      await t.admin.call('DEL', meta);
    }
  });
});

describe.each(glideTargets())("a paused queue: the library's claims stop, admission goes on: $name", (target) => {
  const t = connectedTo(target);

  it('paused: claim and lane claim answer empty, enqueue answers enqueued; resumed: both serve again', async () => {
    const q = freshQueue('qp-claims');
    const library = libraryVerbs(t.admin, q);
    const [flat1, grouped1, flat2, grouped2] = [mintId(), mintId(), mintId(), mintId()];
    expect(await enqueue(t.conn, q, flat1, 'f1')).toBe('enqueued');
    expect(await enqueueGrouped(t.conn, q, G, grouped1, 'g1')).toBe('enqueued');

    expect(await pauseQueue(t.conn, q, true)).toEqual({ queue: q, paused: true });
    expect(String(await t.admin.text('HGET', `emq:{${q}}:meta`, 'paused'))).toBe('1');
    expect(await library.claim()).toBeNull();
    expect(await library.gclaim()).toBeNull();
    // admission is not gated: both kinds still land, and wait
    expect(await enqueue(t.conn, q, flat2, 'f2')).toBe('enqueued');
    expect(await enqueueGrouped(t.conn, q, G, grouped2, 'g2')).toBe('enqueued');
    expect(await library.claim()).toBeNull();
    expect(await library.gclaim()).toBeNull();
    expect(await library.counts()).toMatchObject({ pending: 2, active: 0 });
    expect(await t.admin.zmembers(`emq:{${q}}:g:${G}:pending`)).toEqual([grouped1, grouped2]);

    expect(await pauseQueue(t.conn, q, false)).toEqual({ queue: q, paused: false });
    expect(await library.claim()).toEqual([flat1, 'f1', 1]);
    expect(await library.claim()).toEqual([flat2, 'f2', 1]);
    expect(await library.gclaim()).toEqual([grouped1, 'g1', 1, G]);
    expect(await library.gclaim()).toEqual([grouped2, 'g2', 1, G]);
    for (const id of [flat1, flat2, grouped1, grouped2]) expect(await library.complete(id, 1)).toBe(1);
    expect(await library.counts()).toMatchObject({ pending: 0, active: 0, completed: 4 });
  });
});
