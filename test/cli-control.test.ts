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

  it('queue list walks every page (each queue made found, its counts), queue jobs pages a state; bad input is exit 2', async () => {
    const stem = freshQueue('cli-list');
    const made = [`${stem}.a`, `${stem}.b`];
    for (const q of made) expect((await emq(['enqueue', q, '--url', url], 'x')).code).toBe(0);
    expect((await emq(['enqueue', made[0]!, '--delay', '1h', '--url', url], 'later')).code).toBe(0);
    const seen: Array<{ name: string; counts: Record<string, number>; paused: boolean }> = [];
    let cursor: string | null = null;
    do {
      const page = await run(['queue', 'list', '--count', '5000', ...(cursor === null ? [] : ['--cursor', cursor])]);
      expect(page.code).toBe(0);
      seen.push(...(page.out!.queues as typeof seen));
      cursor = page.out!.cursor as string | null;
    } while (cursor !== null);
    // SCAN may name a queue again on a later page (docs/api.md): one entry per name
    const byName = new Map(seen.filter((q) => made.includes(q.name)).map((q) => [q.name, q]));
    expect([...byName.values()].sort((x, y) => (x.name < y.name ? -1 : 1))).toEqual([
      { name: made[0], counts: { pending: 1, active: 0, scheduled: 1, dead: 0, completed: 0, failed: 0 }, paused: false },
      { name: made[1], counts: { pending: 1, active: 0, scheduled: 0, dead: 0, completed: 0, failed: 0 }, paused: false },
    ]);
    const ids = [mintId(), mintId()];
    for (const id of ids) expect((await emq(['enqueue', made[1]!, '--id', id, '--group', GROUP, '--url', url], 'lane')).code).toBe(0);
    const first = await run(['queue', 'jobs', made[1]!, '--group', GROUP, '--limit', '1']);
    expect(first.out).toEqual({
      queue: made[1],
      state: 'pending',
      jobs: [{ id: ids[1], state: 'pending', attempts: 0, group: GROUP, bytes: 4 }],
      cursor: ids[1],
    });
    const next = await run(['queue', 'jobs', made[1]!, '--group', GROUP, '--limit', '1', '--cursor', ids[1]!]);
    expect(next.out).toMatchObject({ jobs: [{ id: ids[0] }], cursor: null });
    expect((await run(['queue', 'jobs', made[0]!, '--state', 'scheduled'])).out).toMatchObject({ state: 'scheduled', jobs: [{ bytes: 5 }] });
    for (const bad of [
      ['queue', 'jobs', made[0]!, '--state', 'active'],
      ['queue', 'jobs', made[0]!, '--limit', '101'],
      ['queue', 'jobs', made[0]!, '--cursor', 'nope'],
      ['queue', 'list', '--cursor', 'nope'],
      ['queue', 'list', made[0]!],
    ]) {
      expect((await run(bad)).code, bad.join(' ')).toBe(2);
    }
  });
});
