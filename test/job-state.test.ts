// @job-state through each connection against each real server: a job's state as the EchoMQ
// library reads it (Metrics.get_job_state's @state_lookup): by which set holds the id,
// pending, active, schedule, dead in that order, else a flow parent by its row's state
// field; attempts from the row. Reads only.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Outcome } from '../shared/connection.js';
import { InvalidIdError, KindError, ProtocolError, WrongTypeError, enqueue, enqueueGrouped, jobState, jobStateScript, mintId } from '../shared/index.js';
import { freshQueue, snapshot, type Admin } from './support/admin.js';
import { refusalOf } from './support/gate.js';
import { connectedTo, targets } from './support/targets.js';

const SETS = ['pending', 'active', 'schedule', 'dead'] as const;
const keysOf = (q: string, id: string) => [`emq:{${q}}:job:${id}`, ...SETS.map((s) => `emq:{${q}}:${s}`)];

describe.each(targets())('@job-state: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  let admin: Admin;
  beforeAll(() => void ({ conn, admin } = held));

  const run = (keys: string[], args: string[]): Promise<Outcome> => conn.run({ op: 'eval', script: jobStateScript.text, keys, args });
  /** The script as EVAL_RO, which the server refuses to let write anything. */
  const readOnly = async (q: string, id: string) => admin.call('EVAL_RO', jobStateScript.text, '5', ...keysOf(q, id), id);

  it('an enqueued job is pending with 0 attempts; a claimed one (as @claim leaves it) active with its attempts', async () => {
    const q = freshQueue('state');
    const id = mintId();
    expect(await jobState(conn, q, id)).toBeNull();
    expect(await admin.footprint(q)).toEqual({});
    await enqueue(conn, q, id, 'x');
    expect(await jobState(conn, q, id)).toEqual({ state: 'pending', attempts: 0 });
    // @claim: ZPOPMIN pending, HINCRBY attempts, state active, ZADD active <deadline>
    await admin.call('ZREM', `emq:{${q}}:pending`, id);
    await admin.call('HINCRBY', `emq:{${q}}:job:${id}`, 'attempts', '1');
    await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'active');
    await admin.call('ZADD', `emq:{${q}}:active`, String(Date.now() + 30_000), id);
    await admin.call('SCRIPT', 'FLUSH');
    expect(await jobState(conn, q, id)).toEqual({ state: 'active', attempts: 1 });
  });

  it('each set by hand: pending, active, scheduled, dead; the attempts from the row', async () => {
    const q = freshQueue('state');
    const cases: Array<[(typeof SETS)[number], string, string]> = [
      ['pending', 'pending', '0'],
      ['active', 'active', '2'],
      ['schedule', 'scheduled', '5'],
      ['dead', 'dead', '25'],
    ];
    for (const [set, state, attempts] of cases) {
      const id = mintId();
      // the row's own state field says something else: the set decides
      await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'whatever', 'attempts', attempts, 'payload', 'p');
      await admin.call('ZADD', `emq:{${q}}:${set}`, '1700000000000', id);
      expect(await jobState(conn, q, id), set).toEqual({ state, attempts: Number(attempts) });
    }
  });

  it("a flow parent held out of every set is awaiting_children, by its row's state field", async () => {
    const q = freshQueue('state');
    const id = mintId();
    await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'awaiting_children', 'attempts', '0', 'payload', 'P');
    expect(await jobState(conn, q, id)).toEqual({ state: 'awaiting_children', attempts: 0 });
    // released by its last child: ZADD pending and state pending
    await admin.call('ZADD', `emq:{${q}}:pending`, '0', id);
    expect(await jobState(conn, q, id)).toEqual({ state: 'pending', attempts: 0 });
  });

  it('a job waiting in its lane is pending, by its row (state pending and a group); claimed, it is active', async () => {
    const q = freshQueue('state');
    const id = mintId();
    await enqueueGrouped(conn, q, 'PRT0KHTOWnGLuC', id, 'in the lane');
    expect(await jobState(conn, q, id)).toEqual({ state: 'pending', attempts: 0 });
    // the row alone, without a group, is no lane job: absent, as before
    const bare = mintId();
    await admin.call('HSET', `emq:{${q}}:job:${bare}`, 'state', 'pending', 'attempts', '0', 'payload', 'p');
    expect(await jobState(conn, q, bare)).toBeNull();
    await admin.call('ZADD', `emq:{${q}}:active`, '1', id);
    await admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'active', 'attempts', '1');
    expect(await jobState(conn, q, id)).toEqual({ state: 'active', attempts: 1 });
  });

  it("the sets are read in the library's order: pending, active, schedule, dead", async () => {
    const q = freshQueue('state');
    const id = mintId();
    const want = ['pending', 'active', 'scheduled', 'dead'];
    for (const set of SETS) await admin.call('ZADD', `emq:{${q}}:${set}`, '0', id);
    for (let i = 0; i < SETS.length; i++) {
      expect((await jobState(conn, q, id))?.state).toBe(want[i]);
      await admin.call('ZREM', `emq:{${q}}:${SETS[i]!}`, id);
    }
    expect(await jobState(conn, q, id)).toBeNull();
  });

  it('404 (null) when only a row in no set exists with any other state, or nothing at all', async () => {
    const q = freshQueue('state');
    for (const fields of [
      ['state', 'active', 'attempts', '3'],
      ['state', 'pending', 'attempts', '0'],
      ['state', 'scheduled'],
      ['attempts', '1'],
      ['payload', 'only'],
    ]) {
      const id = mintId();
      await admin.call('HSET', `emq:{${q}}:job:${id}`, ...fields);
      expect(await jobState(conn, q, id), fields.join(' ')).toBeNull();
    }
    expect(await jobState(conn, q, mintId())).toBeNull();
  });

  it('attempts: 0 when the row has none, or when there is no row but a set holds the id', async () => {
    const q = freshQueue('state');
    const noField = mintId();
    await admin.call('HSET', `emq:{${q}}:job:${noField}`, 'state', 'pending');
    await admin.call('ZADD', `emq:{${q}}:pending`, '0', noField);
    expect(await jobState(conn, q, noField)).toEqual({ state: 'pending', attempts: 0 });
    const noRow = mintId();
    await admin.call('ZADD', `emq:{${q}}:dead`, '0', noRow);
    expect(await jobState(conn, q, noRow)).toEqual({ state: 'dead', attempts: 0 });
  });

  it('never writes: every answer, also as EVAL_RO (which refuses any write), leaves the keyspace as it was', async () => {
    const q = freshQueue('state');
    const ids = Array.from({ length: 6 }, () => mintId());
    for (const [i, set] of SETS.entries()) await admin.call('ZADD', `emq:{${q}}:${set}`, '0', ids[i]!);
    await admin.call('HSET', `emq:{${q}}:job:${ids[4]!}`, 'state', 'awaiting_children', 'attempts', '0');
    const before = await snapshot(admin, q);
    for (const id of ids) {
      await jobState(conn, q, id);
      await readOnly(q, id);
    }
    await jobState(conn, freshQueue('state'), mintId());
    expect(await snapshot(admin, q)).toEqual(before);
  });

  it('host-side refusals send nothing: a malformed id, a foreign kind, a bad queue', async () => {
    const q = freshQueue('state');
    await expect(jobState(conn, q, 'JOB01m8ktkzg6eaatm9sqpt0r51n2')).rejects.toBeInstanceOf(InvalidIdError);
    await expect(jobState(conn, q, 'ORD0NgWEfAEJfs')).rejects.toBeInstanceOf(KindError);
    await expect(jobState(conn, 'bad:queue', mintId())).rejects.toThrow(/queue/);
  });

  it("the layout gate: this id's row and the four sets of one queue, and exactly one branded id; EMQLAYOUT", async () => {
    const q = freshQueue('state');
    const other = `${q}x`;
    const id = mintId();
    const [row, pending, active, schedule, dead] = keysOf(q, id) as [string, string, string, string, string];
    const cases: Array<[string[], string[]]> = [
      [[row, pending, active, schedule], [id]],
      [[row, pending, active, schedule, dead, dead], [id]],
      [[row], [id]],
      [[row, pending, active, schedule, dead], []],
      [
        [row, pending, active, schedule, dead],
        [id, id],
      ],
      [[row, pending, active, schedule, dead], [mintId()]],
      [[`emq:{${other}}:job:${id}`, pending, active, schedule, dead], [id]],
      [[row, `emq:{${other}}:pending`, active, schedule, dead], [id]],
      [[row, pending, `emq:{${other}}:active`, schedule, dead], [id]],
      [[row, pending, active, `emq:{${other}}:schedule`, dead], [id]],
      [[row, pending, active, schedule, `emq:{${other}}:dead`], [id]],
      [[row, pending, schedule, active, dead], [id]],
      [[row, active, pending, schedule, dead], [id]],
      [[row, pending, active, `emq:{${q}}:scheduled`, dead], [id]],
      [[`${row}:lock`, pending, active, schedule, dead], [`${id}:lock`]],
      [[`emq:{${q}}:job:JOB01m8ktkzg6eaatm9sqpt0r51n2`, pending, active, schedule, dead], ['JOB01m8ktkzg6eaatm9sqpt0r51n2']],
      [[`emq:{${q}}:job:JOBzzzzzzzzzzz`, pending, active, schedule, dead], ['JOBzzzzzzzzzzz']],
      [[`emq:{${q}}:job:`, pending, active, schedule, dead], ['']],
    ];
    const before = await snapshot(admin, q, other);
    for (const [keys, args] of cases) {
      const outcome = await run(keys, args);
      expect(outcome.ok, `${keys.join(' ')} | ${args.join(' ')}`).toBe(false);
      expect(!outcome.ok && outcome.error, `${keys.join(' ')} | ${args.join(' ')}`).toMatch(refusalOf(target, jobStateScript, keys, args, /^EMQLAYOUT/));
    }
    expect(await snapshot(admin, q, other)).toEqual(before);
  });

  it('type gates: a row that is not a hash, a set that is not a sorted set: WrongTypeError, bounded text, nothing written', async () => {
    const q = freshQueue('state');
    const id = mintId();
    for (const key of keysOf(q, id)) {
      await admin.call('SET', key, 'not the right type');
      const before = await snapshot(admin, q);
      const err = await jobState(conn, q, id).catch((e: unknown) => e);
      expect(err, key).toBeInstanceOf(WrongTypeError);
      expect((err as Error).message).toContain(key);
      expect(await snapshot(admin, q)).toEqual(before);
      await admin.call('DEL', key);
    }
    // a huge queue name is echoed cut short and printable
    const big = `b${'\xfe'.repeat(40_000)}`;
    const keys = keysOf(big, id);
    const outcome = await run([keys[0]!, keys[1]!, keys[2]!, keys[3]!, `emq:{${q}}:dead`], [id]);
    expect(!outcome.ok && outcome.error).toMatch(/^EMQLAYOUT [\x20-\x7e]*$/);
    expect(!outcome.ok && outcome.error.length).toBeLessThan(1_200);
  });
});

describe('jobState reads its replies strictly', () => {
  const answering = (outcome: Outcome): Connection => ({
    run: async () => outcome,
    pipeline: async (commands) => commands.map(() => outcome),
    close: async () => undefined,
  });

  it('anything but nil or [a known state, digits] is a ProtocolError', async () => {
    const id = mintId();
    for (const value of [
      1,
      'pending',
      [],
      ['pending'],
      ['pending', '0', 'x'],
      ['unknown', '0'],
      ['absent', '0'],
      ['completed', '1'],
      ['pending', 'x'],
      ['pending', '-1'],
      ['pending', 2],
    ]) {
      await expect(jobState(answering({ ok: true, value: value as never }), 'q', id), JSON.stringify(value)).rejects.toBeInstanceOf(ProtocolError);
    }
    expect(await jobState(answering({ ok: true, value: null }), 'q', id)).toBeNull();
    expect(await jobState(answering({ ok: true, value: [new TextEncoder().encode('awaiting_children'), '3'] }), 'q', id)).toEqual({
      state: 'awaiting_children',
      attempts: 3,
    });
  });
});
