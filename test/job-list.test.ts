// listJobs pages a queue's jobs as the library browses them, over glide and over REST through
// the gateway (a producer token: @job-list is a read script), on every test server: pending
// newest first (ZRANGE + - BYLEX REV), a group's lane the same, scheduled soonest first with
// ties by id, dead newest first with the row's last error; collecting every page yields every
// job exactly once, even when jobs leave the set between pages; bad arguments send nothing.
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  InvalidIdError,
  WrongTypeError,
  enqueue,
  enqueueGrouped,
  jobListScript,
  listJobs,
  mintId,
  schedule,
  type JobListOptions,
  type JobRow,
} from '../shared/index.js';
import { runScript } from '../shared/dispatch.js';
import { freshQueue, snapshot } from './support/admin.js';
import { connectedTo, targets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';
const HOUR = 3_600_000;

/** n ids, minted in order (so each is above the one before). */
const ids = (n: number) => Array.from({ length: n }, () => mintId());

describe.each(targets())('listJobs: $name', (target) => {
  const t = connectedTo(target);

  /** Every page of a listing, followed by its cursor; `between` runs after each page. */
  async function all(q: string, options: JobListOptions, between?: () => Promise<void>): Promise<JobRow[]> {
    const out: JobRow[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listJobs(t.conn, q, { ...options, ...(cursor !== undefined && { cursor }) });
      expect(page.jobs.length).toBeLessThanOrEqual(options.limit ?? 50);
      out.push(...page.jobs);
      cursor = page.cursor;
      if (between) await between();
      expect(++pages).toBeLessThan(1_000);
    } while (cursor !== undefined);
    return out;
  }

  it('pending: newest first, as ZRANGE + - BYLEX REV; attempts and payload length, never the payload', async () => {
    const q = freshQueue('jl-pending');
    const made = ids(7);
    for (const [i, id] of made.entries()) expect(await enqueue(t.conn, q, id, 'x'.repeat(i))).toBe('enqueued');
    const browse = ((await t.admin.call('ZRANGE', `emq:{${q}}:pending`, '+', '-', 'BYLEX', 'REV')) as Buffer[]).map(String);
    expect(browse).toEqual([...made].reverse());
    const first = await listJobs(t.conn, q, { limit: 3 });
    expect(first.jobs).toEqual(browse.slice(0, 3).map((id) => ({ id, state: 'pending', attempts: 0, bytes: made.indexOf(id) })));
    expect(first.cursor).toBe(browse[2]);
    for (const limit of [1, 2, 7, 100]) expect((await all(q, { limit })).map((j) => j.id)).toEqual(browse);
    // the last page says no more follow: 7 in pages of 7 is one page, no cursor
    expect((await listJobs(t.conn, q, { limit: 7 })).cursor).toBeUndefined();
    expect(await listJobs(t.conn, freshQueue('jl-none'))).toEqual({ jobs: [] });
  });

  it("a group's lane, newest first, each job naming its group; the flat pending is another listing", async () => {
    const q = freshQueue('jl-lane');
    const laned = ids(4);
    for (const id of laned) expect(await enqueueGrouped(t.conn, q, A, id, 'lane')).toBe('enqueued');
    const flat = mintId();
    await enqueue(t.conn, q, flat, 'flat');
    expect(await all(q, { group: A, limit: 3 })).toEqual([...laned].reverse().map((id) => ({ id, state: 'pending', attempts: 0, group: A, bytes: 4 })));
    expect((await all(q, {})).map((j) => j.id)).toEqual([flat]);
  });

  it('scheduled: soonest first, ties by id, every job once across pages, even as jobs leave between pages', async () => {
    const q = freshQueue('jl-sched');
    const at = Date.now() + HOUR;
    const made = ids(12);
    // three due times, four jobs each, sent out of order: ties are common (a batch shares its time)
    const due = (i: number) => at + (2 - (i % 3)) * 1_000;
    for (const [i, id] of made.entries()) expect(await schedule(t.conn, q, id, 'later', { at: due(i) })).toBe('scheduled');
    const want = [...made].sort((x, y) => due(made.indexOf(x)) - due(made.indexOf(y)) || (x < y ? -1 : 1));
    const rows = await all(q, { state: 'scheduled', limit: 5 });
    expect(rows).toEqual(want.map((id) => ({ id, state: 'scheduled', attempts: 0, runAt: due(made.indexOf(id)), bytes: 5 })));
    for (const limit of [1, 3, 4]) expect((await all(q, { state: 'scheduled', limit })).map((j) => j.id)).toEqual(want);
    // the job at each page's edge (the cursor's) leaves before the next page: nothing is skipped or repeated
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listJobs(t.conn, q, { state: 'scheduled', limit: 2, ...(cursor !== undefined && { cursor }) });
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.cursor;
      const edge = page.jobs.at(-1);
      if (edge) await t.admin.call('ZREM', `emq:{${q}}:schedule`, edge.id);
    } while (cursor !== undefined);
    expect(seen).toEqual(want);
  });

  it('dead: newest first (the library scores them 0), with the last error; rows without one, or none at all', async () => {
    const q = freshQueue('jl-dead');
    const made = ids(5);
    for (const [i, id] of made.entries()) {
      const fields = ['state', 'dead', 'attempts', String(i + 1), 'payload', 'p'.repeat(10 + i)];
      if (i !== 1) fields.push('last_error', `boom ${i}`);
      if (i !== 3) await t.admin.call('HSET', `emq:{${q}}:job:${id}`, ...fields);
      await t.admin.call('ZADD', `emq:{${q}}:dead`, '0', id);
    }
    const rows = await all(q, { state: 'dead', limit: 2 });
    expect(rows).toEqual(
      [...made].reverse().map((id) => {
        const i = made.indexOf(id);
        if (i === 3) return { id, state: 'dead', attempts: 0, bytes: 0 };
        return { id, state: 'dead', attempts: i + 1, ...(i !== 1 && { lastError: `boom ${i}` }), bytes: 10 + i };
      }),
    );
  });

  it('refusals send nothing: a bad state, cursor or limit is InvalidArgumentError (a bad group InvalidIdError); a set of another type is WRONGTYPE', async () => {
    const q = freshQueue('jl-bad');
    await enqueue(t.conn, q, mintId(), 'x');
    const before = await snapshot(t.admin, q);
    for (const options of [
      { state: 'active' },
      { limit: 0 },
      { limit: 101 },
      { limit: 1.5 },
      { cursor: 'nope' },
      { state: 'scheduled', cursor: mintId() },
      { state: 'pending', cursor: `5:${mintId()}` },
      { state: 'scheduled', group: A },
    ] as JobListOptions[]) {
      await expect(listJobs(t.conn, q, options), JSON.stringify(options)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(listJobs(t.conn, q, { group: 'lane-a' })).rejects.toBeInstanceOf(InvalidIdError);
    expect(await snapshot(t.admin, q)).toEqual(before);
    // the script's own gates, past the client's: another queue's key, a cursor of the wrong form
    const refused = async (keys: string[], args: string[]) => {
      const outcome = await runScript(t.conn, jobListScript, keys, args);
      expect(outcome.ok).toBe(false);
      return outcome.ok ? '' : outcome.error;
    };
    expect(await refused([`emq:{${q}}:active`], ['', '5'])).toMatch(/^EMQLAYOUT KEYS: exactly one of/);
    expect(await refused([`emq:{${q}}:g:lane-a:pending`], ['', '5'])).toMatch(/^EMQLAYOUT/);
    expect(await refused([`emq:{${q}}:schedule`], [mintId(), '5'])).toMatch(/^EMQLAYOUT ARGV\[1\]/);
    expect(await refused([`emq:{${q}}:pending`], ['', '101'])).toMatch(/^EMQLAYOUT ARGV\[2\]/);
    expect(await snapshot(t.admin, q)).toEqual(before);
    const odd = freshQueue('jl-type');
    await t.admin.call('SET', `emq:{${odd}}:dead`, 'x');
    await expect(listJobs(t.conn, odd, { state: 'dead' })).rejects.toBeInstanceOf(WrongTypeError);
    const row = mintId();
    await t.admin.call('ZADD', `emq:{${odd}}:pending`, '0', row);
    await t.admin.call('SET', `emq:{${odd}}:job:${row}`, 'x');
    await expect(listJobs(t.conn, odd)).rejects.toBeInstanceOf(WrongTypeError);
  });
});
