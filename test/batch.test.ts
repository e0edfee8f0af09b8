// admitMany through each connection against each real server: a batch mixing flat, lane and
// scheduled jobs goes as one pipeline (two right after a script flush), each job lands where
// its own options say, refusals before sending write nothing, and a failure names its job.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../shared/connection.js';
import { type AdmitInput, BatchError, WrongTypeError, admitMany, enqueueGroupedMany, mintId, scheduleMany } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { counting } from './support/counting.js';
import { connectedTo, targets } from './support/targets.js';

const A = 'PRT0KHTOWnGLuC';
const B = 'ACC0000000000b';

describe.each(targets())('admitMany: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  const fields = (q: string, id: string) => admin.row(q, id);
  const members = (key: string) => admin.zmembers(key);
  const score = async (q: string, id: string) => Number(String(await admin.text('ZSCORE', `emq:{${q}}:schedule`, id)));

  it('a mix of flat, lane, scheduled and grouped scheduled jobs, given and minted ids, repeats: one pipeline, each in its place', async () => {
    const q = freshQueue('mix');
    const kinds: Array<(i: number) => Omit<AdmitInput, 'payload'>> = [
      () => ({}),
      () => ({ group: A }),
      (i) => ({ group: B, at: 1000 + i }),
      () => ({ inMs: 60_000 }),
      () => ({ group: B }),
      (i) => ({ at: 2000 + i }),
    ];
    const jobs: AdmitInput[] = Array.from({ length: 240 }, (_, i) => ({
      ...(i % 7 === 0 ? {} : { id: mintId() }),
      payload: `p${i}`,
      ...kinds[i % kinds.length]!(i),
    }));
    // repeats of earlier given ids, each with another kind: duplicate, nothing written
    for (const k of [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13]) jobs.push({ id: jobs[k]!.id!, payload: 'again', ...kinds[(k + 1) % kinds.length]!(k) });
    // each script cached once (a server that never ran one answers NOSCRIPT first)
    await admitMany(conn, freshQueue('warm'), [{ payload: 'w' }, { payload: 'w', group: A }, { payload: 'w', at: 1 }]);
    const seam = counting(conn);
    const results = await admitMany(seam, q, jobs);
    expect(seam.counts).toEqual({ run: 0, pipeline: 1 });

    const flat = new Set(await members(`emq:{${q}}:pending`));
    const laneA = new Set(await members(`emq:{${q}}:g:${A}:pending`));
    const laneB = new Set(await members(`emq:{${q}}:g:${B}:pending`));
    const later = new Set(await members(`emq:{${q}}:schedule`));
    for (const [i, job] of jobs.entries()) {
      const { id, verdict } = results[i]!;
      if (job.id !== undefined) expect(id).toBe(job.id);
      if (i >= 240) {
        expect(verdict).toBe('duplicate');
        continue;
      }
      const scheduled = job.at !== undefined || job.inMs !== undefined;
      expect(verdict).toBe(scheduled ? 'scheduled' : 'enqueued');
      const where = scheduled ? later : job.group === A ? laneA : job.group === B ? laneB : flat;
      expect(where.has(id), `job ${i} in its set`).toBe(true);
      const row = await fields(q, id);
      expect(row).toEqual({
        state: scheduled ? 'scheduled' : 'pending',
        attempts: '0',
        payload: `p${i}`,
        ...(job.group ? { group: job.group } : {}),
      });
      if (job.at !== undefined) expect(await score(q, id)).toBe(job.at);
    }
    expect(flat.size + laneA.size + laneB.size + later.size).toBe(240);
    // the ring holds each lane once, a wake per admission that ringed it
    expect(((await admin.call('LRANGE', `emq:{${q}}:ring`, '0', '-1')) as Buffer[]).map(String).sort()).toEqual([A, B].sort());
  });

  it('right after a script flush: two pipelines, the first call of each script as EVAL, and every job lands', async () => {
    const q = freshQueue('mix');
    await admin.call('SCRIPT', 'FLUSH');
    const seam = counting(conn);
    const jobs: AdmitInput[] = [
      { payload: 'flat' },
      { payload: 'lane', group: A },
      { payload: new Uint8Array([0xff, 0x00]), at: 7 },
      { payload: 'flat2' },
      { payload: 'lane2', group: B },
      { payload: 'later2', inMs: 5, group: A },
    ];
    const results = await admitMany(seam, q, jobs);
    expect(seam.counts).toEqual({ run: 0, pipeline: 2 });
    expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled', 'enqueued', 'enqueued', 'scheduled']);
    expect((await admin.hgetall(`emq:{${q}}:job:${results[2]!.id}`)).payload).toEqual(Buffer.from([0xff, 0x00]));
    expect(await members(`emq:{${q}}:pending`)).toEqual([results[0]!.id, results[3]!.id].sort());
  });

  it('right after a script flush, one id scheduled, then flat, then in a lane: the first lands and the others are duplicates, in order (a NOSCRIPT once let the flat copy land first); one pipeline', async () => {
    const q = freshQueue('ord');
    const id = mintId();
    await admin.call('SCRIPT', 'FLUSH');
    // the flat script cached, the others not: the case the fuzz found
    await admitMany(conn, freshQueue('ord'), [{ payload: 'warm' }]);
    const seam = counting(conn);
    const results = await admitMany(seam, q, [
      { id, payload: 'first', group: A, inMs: 60_000 },
      { id, payload: 'second' },
      { id, payload: 'third', group: B },
    ]);
    expect(results.map((r) => r.verdict)).toEqual(['scheduled', 'duplicate', 'duplicate']);
    expect(seam.counts).toEqual({ run: 0, pipeline: 1 });
    expect(String((await admin.hgetall(`emq:{${q}}:job:${id}`)).payload)).toBe('first');
    expect(await members(`emq:{${q}}:pending`)).toEqual([]);
  });

  it('a minted id another minter had taken is minted again, whatever its kind', async () => {
    const q = freshQueue('mix');
    const taken = [mintId(), mintId(), mintId()];
    for (const id of taken) await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
    const queue = [...taken];
    const mint = () => queue.shift() ?? mintId();
    const results = await admitMany(conn, q, [{ payload: 'f' }, { payload: 'l', group: A }, { payload: 's', at: 9 }], mint);
    expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled']);
    for (const [i, r] of results.entries()) expect(taken).not.toContain(r.id), expect((await fields(q, r.id)).payload).toBe(['f', 'l', 's'][i]);
    for (const id of taken) expect((await fields(q, id)).payload).toBe('theirs');
  });

  it('refused whole before sending, naming the job: nothing written', async () => {
    const q = freshQueue('mix');
    const good: AdmitInput[] = [{ payload: 'f' }, { payload: 'l', group: A }, { payload: 's', inMs: 1 }];
    const bad: Array<[AdmitInput, RegExp]> = [
      [{ payload: 'x', group: 'nope' }, /^job 3: group/],
      [{ payload: 'x', inMs: -1 }, /^job 3: inMs/],
      [{ payload: 'x', at: 1, inMs: 1 }, /^job 3: a scheduled job needs exactly one/],
      [{ payload: 'x', at: 1, group: 'PRT' }, /^job 3: group/],
      [{ id: 'JOBnope', payload: 'x' }, /^job 3: /],
      [{ id: 'ACC0000000000b', payload: 'x', group: A }, /^job 3: /],
      [{ payload: '\ud800', at: 1 }, /^job 3: payload/],
    ];
    for (const [job, message] of bad) await expect(admitMany(conn, q, [...good, job])).rejects.toThrow(message);
    // the one-kind batches refuse a job of another kind rather than send it flat
    await expect(enqueueGroupedMany(conn, q, [{ payload: 'l', group: A }, { payload: 'x' } as never])).rejects.toThrow(/^job 1: group/);
    await expect(
      scheduleMany(conn, q, [
        { payload: 's', at: 1 },
        { payload: 'x', group: A },
      ]),
    ).rejects.toThrow(/^job 1: a scheduled job needs/);
    expect(await admin.footprint(q)).toEqual({});
    expect(await admitMany(conn, q, [])).toEqual([]);
  });

  it('a job the server refuses fails alone: BatchError has every job, the others landed', async () => {
    const q = freshQueue('mix');
    await admin.call('SET', `emq:{${q}}:g:${B}:pending`, 'not a zset');
    const before = await snapshot(admin, q);
    const err = (await admitMany(conn, q, [{ payload: 'f' }, { payload: 'lb', group: B }, { payload: 's', at: 3 }]).catch(
      (e: unknown) => e,
    )) as BatchError<string>;
    expect(err).toBeInstanceOf(BatchError);
    const [flat, lane, later] = err.results;
    expect(flat).toMatchObject({ verdict: 'enqueued' });
    expect((lane as { error: unknown }).error).toBeInstanceOf(WrongTypeError);
    expect(later).toMatchObject({ verdict: 'scheduled' });
    const after = await snapshot(admin, q);
    expect(after[`emq:{${q}}:g:${B}:pending`]).toEqual(before[`emq:{${q}}:g:${B}:pending`]);
    expect(after[`emq:{${q}}:job:${lane!.id}`]).toBeUndefined();
  });
});
