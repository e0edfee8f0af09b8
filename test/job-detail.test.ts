// jobDetail (lua/job-state.lua with ARGV[2] 'detail' or 'payload') against each real server:
// what a reader of one job is shown besides its state and attempts, each field only when the
// row has it (group, runAt for a scheduled job, parent and parentQueue for a flow child,
// lastError for a dead job), and on request the payload's bytes exactly. Reads only (EVAL_RO),
// and jobState's answer is unchanged.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { addFlow, enqueue, enqueueGrouped, jobDetail, jobState, jobStateScript, mintId, schedule } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { key } from './support/library-control.js';
import { connectedTo, glideTargets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';

describe.each(glideTargets())('jobDetail: $name', (target) => {
  const held = connectedTo(target);
  let admin: Admin;
  let conn: Connection;
  beforeAll(() => void ({ conn, admin } = held));

  it('each field only where the row has it; jobState answers as before', async () => {
    const q = freshQueue('detail');
    const other = freshQueue('detail-x');
    const [flat, laned, later, dead] = [mintId(), mintId(), mintId(), mintId()];
    await enqueue(conn, q, flat, 'f');
    await enqueueGrouped(conn, q, A, laned, 'l');
    await schedule(conn, q, later, 's', { at: 3_903_090_455_551, group: A });
    await admin.call('HSET', key(q, `job:${dead}`), 'state', 'dead', 'attempts', '3', 'payload', 'd', 'last_error', 'boom: it failed', 'group', A);
    await admin.call('ZADD', key(q, 'dead'), '0', dead);
    const same = await addFlow(conn, q, { parent: { payload: 'P' }, children: [{ payload: 'c' }] });
    const cross = await addFlow(conn, other, { parent: { payload: 'P' }, children: [{ payload: 'x', queue: q }] });
    const before = await snapshot(admin, q, other);
    expect(await jobDetail(conn, q, flat)).toEqual({ state: 'pending', attempts: 0 });
    expect(await jobDetail(conn, q, laned)).toEqual({ state: 'pending', attempts: 0, group: A });
    expect(await jobDetail(conn, q, later)).toEqual({ state: 'scheduled', attempts: 0, group: A, runAt: 3_903_090_455_551 });
    expect(await jobDetail(conn, q, dead)).toEqual({ state: 'dead', attempts: 3, group: A, lastError: 'boom: it failed' });
    expect(await jobDetail(conn, q, same.parent.id)).toEqual({ state: 'awaiting_children', attempts: 0 });
    expect(await jobDetail(conn, q, same.children[0]!.id)).toEqual({ state: 'pending', attempts: 0, parent: same.parent.id });
    expect(await jobDetail(conn, q, cross.children[0]!.id)).toEqual({ state: 'pending', attempts: 0, parent: cross.parent.id, parentQueue: other });
    expect(await jobDetail(conn, q, mintId())).toBeNull();
    expect(await jobDetail(conn, q, mintId(), { payload: true })).toBeNull();
    for (const id of [flat, laned, later, dead]) expect(Object.keys((await jobState(conn, q, id))!)).toEqual(['state', 'attempts']);
    expect(await snapshot(admin, q, other)).toEqual(before);
    // a last error stays on a row retried back to pending: shown only for a dead job
    await admin.call('HSET', key(q, `job:${flat}`), 'last_error', 'earlier');
    expect(await jobDetail(conn, q, flat)).toEqual({ state: 'pending', attempts: 0 });
    await admin.call('HDEL', key(q, `job:${flat}`), 'last_error');
  });

  it("the payload's bytes exactly, on request: every byte value, empty, 1 MiB of random bytes", async () => {
    const q = freshQueue('detail-bytes');
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    const big = new Uint8Array(randomBytes(1024 * 1024));
    for (const payload of [every, new Uint8Array(0), big, Buffer.from('héllo ☃')]) {
      const id = mintId();
      await enqueue(conn, q, id, payload);
      const detail = await jobDetail(conn, q, id, { payload: true });
      expect(detail?.payload).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(detail!.payload!).equals(Buffer.from(payload))).toBe(true);
      expect((await jobDetail(conn, q, id))?.payload).toBeUndefined();
    }
  });

  it('reads only (EVAL_RO runs it); any third mode or extra argument is refused EMQLAYOUT', async () => {
    const q = freshQueue('detail-ro');
    const id = mintId();
    await enqueueGrouped(conn, q, A, id, 'p');
    const keys = [key(q, `job:${id}`), ...['pending', 'active', 'schedule', 'dead'].map((s) => key(q, s))];
    const reply = (await admin.call('EVAL_RO', jobStateScript.text, '5', ...keys, id, 'payload')) as Buffer[];
    expect(reply.map(String)).toEqual(['pending', '0', 'group', A, 'payload', 'p']);
    for (const args of [
      [id, 'all'],
      [id, ''],
      [id, 'detail', 'payload'],
      [id, 'DETAIL'],
    ]) {
      const outcome = await conn.run({ op: 'eval', script: jobStateScript.text, keys, args });
      expect(!outcome.ok && outcome.error, args.join(' ')).toMatch(/^EMQLAYOUT /);
    }
  });
});
