// `emq job`, `emq queue`, `emq group` and `emq schedule` (cli/control.ts), run as real processes
// against a real Valkey: each prints one JSON line; a verb's refusal is exit 2 and writes
// nothing; bad input is exit 2 before anything connects.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { libraryConsumer } from './support/consumer.js';
import { libraryRepeat } from './support/library-repeat.js';

const GROUP = 'PRT0KHTOWnGLuC';

describe('emq job, queue, group and schedule', () => {
  const url = inject('servers')[0]!.url;
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(url);
  });
  afterAll(() => admin?.close());

  const run = async (args: string[], input = '') => {
    const done = await emq([...args, '--url', url], input);
    return { code: done.code, out: done.stdout ? (JSON.parse(done.stdout) as Record<string, unknown>) : undefined, err: done.stderr };
  };

  it('job show, reschedule, promote and rm; a refusal is exit 2 and writes nothing', async () => {
    const q = freshQueue('cli-job');
    const id = mintId();
    expect((await emq(['enqueue', q, '--id', id, '--delay', '1h', '--group', GROUP, '--url', url], 'later')).code).toBe(0);
    expect((await run(['job', 'show', q, id, '--payload'])).out).toMatchObject({
      id,
      state: 'scheduled',
      group: GROUP,
      payloadBase64: Buffer.from('later').toString('base64'),
    });
    const at = Date.now() + 7_200_000;
    expect((await run(['job', 'reschedule', q, id, '--not-before', String(at)])).out).toEqual({ id, queue: q, verdict: 'rescheduled', runAt: at });
    expect((await run(['job', 'promote', q, id])).out).toEqual({ id, queue: q, verdict: 'promoted' });
    const before = await snapshot(admin, q);
    const again = await run(['job', 'promote', q, id]);
    expect([again.code, again.err]).toEqual([2, expect.stringContaining('refused (not_scheduled)')]);
    expect(await snapshot(admin, q)).toEqual(before);
    expect((await run(['job', 'rm', q, id])).out).toEqual({ id, queue: q, verdict: 'removed', state: 'pending' });
    expect((await run(['job', 'show', q, id])).code).toBe(2);
    expect(await libraryConsumer(admin, q).gclaim()).toBeNull();
  });

  it('queue stats, pause and resume; group set and show', async () => {
    const q = freshQueue('cli-queue');
    expect((await emq(['enqueue', q, '--group', GROUP, '--url', url], 'a')).code).toBe(0);
    expect((await run(['queue', 'pause', q])).out).toEqual({ queue: q, paused: true });
    expect(await libraryConsumer(admin, q).gclaim()).toBeNull();
    expect((await run(['queue', 'stats', q])).out).toMatchObject({ queue: q, paused: true, counts: { pending: 0 }, groups: [{ group: GROUP, pending: 1 }] });
    expect((await run(['queue', 'resume', q])).out).toEqual({ queue: q, paused: false });
    expect((await run(['group', 'set', q, GROUP, '--limit', '3', '--pause'])).out).toMatchObject({ group: GROUP, limit: 3, paused: true, ringed: false });
    expect((await run(['group', 'show', q, GROUP])).out).toMatchObject({ limit: 3, paused: true });
    expect((await run(['group', 'set', q, GROUP, '--resume'])).out).toMatchObject({ paused: false, ringed: true });
  });

  it('schedule put (stdin the template), ls, show, pause, run-now, rm; the library Pump fires it', async () => {
    const q = freshQueue('cli-sch');
    const put = await run(['schedule', 'put', q, 'nightly', '--every', '1h'], 'tpl');
    expect(put.out).toEqual({ queue: q, name: 'nightly', verdict: 'registered' });
    expect((await run(['schedule', 'ls', q])).out).toMatchObject({ queue: q, schedules: [{ name: 'nightly', everyMs: 3_600_000 }] });
    expect((await run(['schedule', 'pause', q, 'nightly'])).out).toMatchObject({ paused: true });
    expect((await run(['schedule', 'run-now', q, 'nightly'])).out).toMatchObject({ paused: false });
    const fired = await libraryRepeat(admin, q).sweep(Date.now());
    expect(fired).toHaveLength(1);
    expect((await admin.row(q, fired[0]!.id)).payload).toBe('tpl');
    expect((await run(['schedule', 'rm', q, 'nightly'])).out).toEqual({ queue: q, name: 'nightly', verdict: 'cancelled' });
    expect((await run(['schedule', 'show', q, 'nightly'])).code).toBe(2);
  });

  it.each([
    [['job', 'rm', 'q'], /takes a queue and an id/],
    [['job', 'rm', 'q', 'JOB-nope'], /branded/],
    [['group', 'set', 'q', GROUP], /takes --limit, --weight, --pause or --resume/],
    [['group', 'set', 'q', GROUP, '--limit', '0'], /--limit must be a whole number/],
    [['schedule', 'put', 'q', 'n'], /--every/],
    [['schedule', 'put', 'q', 'a:b', '--every', '1h'], /name is 1 to 255/],
    [['queue', 'explode', 'q'], /unknown command/],
  ])('refuses %j with exit 2 before connecting', async (args, why) => {
    const done = await emq(args, '', { VALKEY_URL: 'redis://127.0.0.1:1' });
    expect(done.code).toBe(2);
    expect(done.stderr).toMatch(why);
  });
});
