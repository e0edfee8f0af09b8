// rescheduleJob (lua/job-reschedule.lua) against each real server: `ZADD schedule XX` of the
// score and nothing else (runAt: the caller's ms; delayMs: on the server's clock, TIME), which
// the library's @promote then honours; not_scheduled and absent write nothing, nor do the gates,
// and a time out of range is refused before anything is sent.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { WrongTypeError, enqueue, jobRescheduleScript, mintId, rescheduleJob, schedule } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';
import { key, keyspaceOf } from './support/library-control.js';
import { connectedTo, glideTargets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';

describe.each(glideTargets())('rescheduleJob: $name', (target) => {
  const held = connectedTo(target);
  let admin: Admin;
  let conn: Connection;
  beforeAll(() => void ({ conn, admin } = held));
  const serverMs = async () => {
    const [s, us] = ((await admin.call('TIME')) as Buffer[]).map(Number) as [number, number];
    return s * 1000 + Math.floor(us / 1000);
  };
  const score = async (q: string, id: string) => Number(String(await admin.text('ZSCORE', key(q, 'schedule'), id)));

  it('runAtMs: the score is exactly it, and only the score changes; the answer is the score written', async () => {
    const q = freshQueue('rs-at');
    const [id, other] = [mintId(), mintId()];
    await schedule(conn, q, id, Buffer.from([0, 1, 2]), { inMs: 60_000, group: A });
    await schedule(conn, q, other, 'o', { inMs: 30_000 });
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(0, 1, 999_999_999_999_999), fc.integer({ min: 0, max: 999_999_999_999_999 })), async (ms) => {
        const before = await keyspaceOf(admin, q);
        expect(await rescheduleJob(conn, q, id, { runAtMs: ms })).toEqual({ rescheduled: true, runAt: ms });
        const after = await keyspaceOf(admin, q);
        expect(await score(q, id)).toBe(ms);
        for (const k of Object.keys(before)) if (k !== key(q, 'schedule')) expect(after[k], k).toEqual(before[k]);
        expect(Object.keys(after)).toEqual(Object.keys(before));
        expect(await score(q, other)).toBeGreaterThan(0);
      }),
      { numRuns: 40 },
    );
  });

  it("delayMs: on the server's clock; the library's @promote releases it once due, then its claim takes it", async () => {
    const q = freshQueue('rs-in');
    const consumer = libraryConsumer(admin, q);
    const id = mintId();
    await schedule(conn, q, id, 'soon', { inMs: 3_600_000 });
    const t0 = await serverMs();
    const moved = await rescheduleJob(conn, q, id, { delayMs: 300 });
    const t1 = await serverMs();
    expect(moved.rescheduled).toBe(true);
    const runAt = (moved as { runAt: number }).runAt;
    expect(runAt).toBeGreaterThanOrEqual(t0 + 300);
    expect(runAt).toBeLessThanOrEqual(t1 + 300);
    expect(await score(q, id)).toBe(runAt);
    expect(await consumer.promote()).toBe(0);
    let promoted = 0;
    for (const end = Date.now() + 3_000; promoted === 0 && Date.now() < end; await new Promise((r) => setTimeout(r, 25))) promoted = await consumer.promote();
    expect(promoted).toBe(1);
    expect(await serverMs()).toBeGreaterThanOrEqual(runAt);
    const claimed = (await consumer.claim())!;
    expect([claimed.id, claimed.payload.toString(), claimed.token]).toEqual([id, 'soon', 1]);
  });

  it('not_scheduled (pending, promoted) and absent: nothing written', async () => {
    const q = freshQueue('rs-refused');
    const [pending, orphan] = [mintId(), mintId()];
    await enqueue(conn, q, pending, 'p');
    await admin.call('ZADD', key(q, 'schedule'), '5', orphan);
    const before = await snapshot(admin, q);
    expect(await rescheduleJob(conn, q, pending, { delayMs: 10 })).toEqual({ rescheduled: false, reason: 'not_scheduled' });
    expect(await rescheduleJob(conn, q, mintId(), { runAtMs: 10 })).toEqual({ rescheduled: false, reason: 'absent' });
    // an orphan schedule entry without a row: there is no job to move
    expect(await rescheduleJob(conn, q, orphan, { runAtMs: 10 })).toEqual({ rescheduled: false, reason: 'absent' });
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('the gates: a time out of range (host-side, and the script itself), a mode, keys, a wrong type; nothing written', async () => {
    const q = freshQueue('rs-gates');
    const id = mintId();
    await schedule(conn, q, id, 'x', { inMs: 60_000 });
    const before = await snapshot(admin, q);
    for (const bad of [-1, 1.5, Number.NaN, 1e15, Number.MAX_SAFE_INTEGER + 1]) {
      await expect(rescheduleJob(conn, q, id, { runAtMs: bad })).rejects.toBeInstanceOf(RangeError);
      await expect(rescheduleJob(conn, q, id, { delayMs: bad })).rejects.toBeInstanceOf(RangeError);
    }
    const keys = [key(q, `job:${id}`), key(q, 'schedule')];
    const cases: Array<[string[], string[]]> = [
      [keys, [id, 'at', '1000000000000000']],
      [keys, [id, 'at', '01']],
      [keys, [id, 'at', '-1']],
      [keys, [id, 'at', '1e3']],
      [keys, [id, 'at', ' 1']],
      [keys, [id, 'at', '']],
      [keys, [id, 'when', '1']],
      [keys, [id, 'at']],
      [keys, [id, 'at', '1', 'x']],
      [[keys[0]!], [id, 'at', '1']],
      [
        [keys[0]!, key(`${q}x`, 'schedule')],
        [id, 'at', '1'],
      ],
      [keys, [mintId(), 'at', '1']],
      [keys, ['ABC0000000000A', 'at', '1']],
    ];
    for (const [k, a] of cases) {
      const outcome = await conn.run({ op: 'eval', script: jobRescheduleScript.text, keys: k, args: a });
      expect(outcome.ok, a.join(' ')).toBe(false);
      expect(!outcome.ok && outcome.error, a.join(' ')).toMatch(/^(EMQLAYOUT|EMQKIND) [\x20-\x7e]*$/);
    }
    expect(await snapshot(admin, q)).toEqual(before);
    await admin.call('DEL', key(q, 'schedule'));
    await admin.call('SET', key(q, 'schedule'), 'x');
    const typed = await snapshot(admin, q);
    await expect(rescheduleJob(conn, q, id, { runAtMs: 1 })).rejects.toBeInstanceOf(WrongTypeError);
    expect(await snapshot(admin, q)).toEqual(typed);
  });
});
