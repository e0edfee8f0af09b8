// The library's repeatables registered, read, paused, resumed, run now and cancelled through
// shared/schedules.ts, then fired by the library's own Pump (test/support/library-repeat.ts:
// its scripts and its order of steps): two sweeps one period apart make two flat jobs with
// distinct, increasing JOB ids, each carrying the template byte for byte; a paused one fires
// nothing; a resumed one fires at its next period; run-now fires on the next sweep; a
// cancelled one is gone (Repeat.count 0). The register and cancel scripts are the library's
// texts (SHA-1 equal), and every refusal writes nothing. Against each server, over glide and
// over REST through a real gateway with a control token.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { layoutOf } from '../functions/gateway/script-calls.js';
import {
  InvalidArgumentError,
  InvalidPayloadError,
  InvalidQueueError,
  PAUSED_SCORE,
  WrongTypeError,
  allScripts,
  cancelSchedule,
  controlScripts,
  listSchedules,
  pauseSchedule,
  readSchedule,
  registerSchedule,
  repeatCancelScript,
  repeatMoveScript,
  repeatPageScript,
  repeatReadScript,
  repeatRegisterScript,
  resumeSchedule,
  runScheduleNow,
} from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { LIBRARY_CANCEL, LIBRARY_REGISTER, libraryRepeat } from './support/library-repeat.js';
import { connectedTo, controlTargets } from './support/targets.js';

// Until functions/gateway/script-calls.ts lays out the new scripts the gateway refuses to
// start (every script needs a layout): the REST half runs once it does.
const gatewayLaysOut = allScripts.every((s) => {
  try {
    return layoutOf(s) !== undefined;
  } catch {
    return false;
  }
});

const targets = controlTargets().map((t) => ({ ...t, rest: t.name.startsWith('rest') }));

const E = 60_000; // a period: one minute
const T = 1_800_000_000_000; // the Pump host's clock at the start of each test (2027-01-15)
/** Every byte value, twice, and an empty line: a template compared byte for byte. */
const TEMPLATE = new Uint8Array([...Array.from({ length: 256 }, (_, i) => i), ...Array.from({ length: 256 }, (_, i) => 255 - i), 10, 10]);

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex');

describe('the register and cancel scripts are the library’s', () => {
  it('byte for byte, so their SHA-1 is the library’s; both are control scripts, the reads are not', () => {
    expect(repeatRegisterScript.text).toBe(LIBRARY_REGISTER);
    expect(repeatCancelScript.text).toBe(LIBRARY_CANCEL);
    expect(repeatRegisterScript.sha1).toBe(sha1(LIBRARY_REGISTER));
    expect(repeatCancelScript.sha1).toBe(sha1(LIBRARY_CANCEL));
    expect(controlScripts).toEqual(expect.arrayContaining([repeatRegisterScript, repeatCancelScript, repeatMoveScript]));
    expect(controlScripts).not.toContain(repeatReadScript);
    expect(controlScripts).not.toContain(repeatPageScript);
  });
});

describe.each(targets)('schedules: $name', (target) => {
  const held = target.rest && !gatewayLaysOut ? undefined : connectedTo(target);
  const run = held ? it : it.skip;

  /** A fresh queue, and the library's view of it. */
  const fresh = (label: string) => {
    const q = freshQueue(label);
    return { q, library: libraryRepeat(held!.admin, q) };
  };
  const scoreOf = async (q: string, name: string) => Number(String(await held!.admin.call('ZSCORE', `emq:{${q}}:repeat`, name)));

  run('the library’s Pump fires a registration once a period: flat jobs, fresh increasing JOB ids, the template byte for byte', async () => {
    const { conn, admin } = held!;
    const { q, library } = fresh('rep-fire');
    expect(await registerSchedule(conn, q, 'nightly.report', { everyMs: E, template: TEMPLATE, now: T })).toBe('registered');
    expect(await admin.hgetall(`emq:{${q}}:repeat:nightly.report`)).toEqual({ every_ms: Buffer.from(String(E)), template: Buffer.from(TEMPLATE) });
    expect(await scoreOf(q, 'nightly.report')).toBe(T);
    expect(await readSchedule(conn, q, 'nightly.report')).toEqual({ name: 'nightly.report', everyMs: E, nextRunAt: T, paused: false, template: TEMPLATE });

    const first = await library.sweep(T);
    expect(await library.sweep(T + E - 1)).toEqual([]); // advanced to now + every: not due before
    const second = await library.sweep(T + E);
    expect([first.length, second.length]).toEqual([1, 1]);
    const ids = [first[0]!.id, second[0]!.id];
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[0]! < ids[1]!).toBe(true); // mint order is byte order
    for (const id of ids) {
      expect(id).toMatch(/^JOB[0-9A-Za-z]{11}$/);
      const row = await admin.hgetall(`emq:{${q}}:job:${id}`);
      expect(row).toEqual({ state: Buffer.from('pending'), attempts: Buffer.from('0'), payload: Buffer.from(TEMPLATE) });
    }
    expect(await admin.zmembers(`emq:{${q}}:pending`)).toEqual(ids);
    expect(Number(await admin.call('ZSCORE', `emq:{${q}}:pending`, ids[0]!))).toBe(0);
    expect(await scoreOf(q, 'nightly.report')).toBe(T + 2 * E);
  });

  run('register answers exists for the same period and template, conflict for others, and neither writes', async () => {
    const { conn, admin } = held!;
    const { q, library } = fresh('rep-exists');
    expect(await registerSchedule(conn, q, 'a', { everyMs: E, template: 'hello', firstInMs: 5_000, now: T })).toBe('registered');
    expect(await scoreOf(q, 'a')).toBe(T + 5_000);
    const before = await snapshot(admin, q);
    expect(await registerSchedule(conn, q, 'a', { everyMs: E, template: new TextEncoder().encode('hello'), now: T + 1 })).toBe('exists');
    expect(await registerSchedule(conn, q, 'a', { everyMs: E + 1, template: 'hello', now: T })).toBe('conflict');
    expect(await registerSchedule(conn, q, 'a', { everyMs: E, template: 'hello!', now: T })).toBe('conflict');
    expect(await registerSchedule(conn, q, 'a', { everyMs: E, template: '', now: T })).toBe('conflict');
    await pauseSchedule(conn, q, 'a', T);
    const paused = await snapshot(admin, q);
    expect(await registerSchedule(conn, q, 'a', { everyMs: E, template: 'hello', now: T })).toBe('exists'); // a pause is no difference
    expect(await snapshot(admin, q)).toEqual(paused);
    expect(before).not.toEqual(paused);
    // one the library registered compares the same way
    expect(await library.register('lib', 1_000, 'x', 0, T)).toBe('registered');
    expect(await registerSchedule(conn, q, 'lib', { everyMs: 1_000, template: 'x', now: T })).toBe('exists');
    expect(await registerSchedule(conn, q, 'lib', { everyMs: 1_000, template: 'y', now: T })).toBe('conflict');
  });

  run('a paused registration fires nothing; resumed, it fires at its next period', async () => {
    const { conn } = held!;
    const { q, library } = fresh('rep-pause');
    await registerSchedule(conn, q, 'p', { everyMs: E, template: TEMPLATE, firstInMs: E, now: T });
    const paused = await pauseSchedule(conn, q, 'p', T + 1);
    expect(paused).toEqual({ name: 'p', everyMs: E, nextRunAt: null, paused: true });
    expect(await scoreOf(q, 'p')).toBe(PAUSED_SCORE + T + E);
    expect(await pauseSchedule(conn, q, 'p', T + 2)).toEqual(paused); // paused twice: as it was
    for (const now of [T + E, T + 10 * E, T + 1000 * E]) expect(await library.sweep(now)).toEqual([]);
    expect((await listSchedules(conn, q)).schedules).toEqual([paused]);

    // resumed after the next run it had passed: the next run of its period's grid
    const resumed = await resumeSchedule(conn, q, 'p', T + E + 5);
    expect(resumed).toEqual({ name: 'p', everyMs: E, nextRunAt: T + 2 * E, paused: false });
    expect(await resumeSchedule(conn, q, 'p', T + E + 6)).toEqual(resumed); // not paused: left as it is
    expect(await library.sweep(T + 2 * E - 1)).toEqual([]);
    expect((await library.sweep(T + 2 * E)).map((f) => f.name)).toEqual(['p']);

    // paused and resumed before its next run: that run, unchanged
    await pauseSchedule(conn, q, 'p', T + 2 * E + 1);
    expect(await resumeSchedule(conn, q, 'p', T + 2 * E + 2)).toMatchObject({ nextRunAt: T + 3 * E, paused: false });
    // resumed exactly on a run of its grid: that run, due now
    await pauseSchedule(conn, q, 'p', T + 2 * E + 3);
    expect(await resumeSchedule(conn, q, 'p', T + 5 * E)).toMatchObject({ nextRunAt: T + 5 * E });
    expect((await library.sweep(T + 5 * E)).map((f) => f.name)).toEqual(['p']);
  });

  run('resume lands on the period grid: the next run it had when ahead, else the first grid run at or after now (property)', async () => {
    const { conn } = held!;
    const { q, library } = fresh('rep-grid');
    const input = fc.record({ every: fc.integer({ min: 1, max: 10 * 365 * 86_400_000 }), first: fc.nat(10 * E), pausedFor: fc.nat(4 * 10 ** 11) });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(input, async ({ every, first, pausedFor }) => {
        const name = `g${n++}`;
        await registerSchedule(conn, q, name, { everyMs: every, template: 'g', firstInMs: first, now: T });
        await pauseSchedule(conn, q, name, T);
        const now = T + pausedFor;
        const next = (await resumeSchedule(conn, q, name, now))!.nextRunAt!;
        const s = T + first;
        if (s >= now) expect(next).toBe(s);
        else {
          expect((next - s) % every).toBe(0);
          expect(next).toBeGreaterThanOrEqual(now);
          expect(next - now).toBeLessThan(every);
        }
        // the library's Pump finds it due exactly then
        expect(await library.due(1_000, next - 1)).toEqual([]);
        expect((await library.due(1_000, next)).map(([due]) => due)).toEqual([name]);
        await cancelSchedule(conn, q, name);
      }),
      { numRuns: 40 },
    );
  });

  run('run-now fires on the next sweep, paused or not; the Pump then keeps its period from there', async () => {
    const { conn } = held!;
    const { q, library } = fresh('rep-now');
    await registerSchedule(conn, q, 'n', { everyMs: E, template: 'x', firstInMs: 10 * E, now: T });
    expect(await library.sweep(T + 100)).toEqual([]);
    expect(await runScheduleNow(conn, q, 'n', T + 100)).toEqual({ name: 'n', everyMs: E, nextRunAt: T + 100, paused: false });
    expect((await library.sweep(T + 100)).map((f) => f.name)).toEqual(['n']);
    expect(await scoreOf(q, 'n')).toBe(T + 100 + E);

    await pauseSchedule(conn, q, 'n', T + 200);
    expect(await library.sweep(T + 100 + E)).toEqual([]);
    expect(await runScheduleNow(conn, q, 'n', T + 300 + E)).toMatchObject({ nextRunAt: T + 300 + E, paused: false });
    expect((await library.sweep(T + 300 + E)).map((f) => f.name)).toEqual(['n']);
    expect(await readSchedule(conn, q, 'n')).toMatchObject({ nextRunAt: T + 300 + 2 * E, paused: false });
  });

  run('a cancelled registration is gone: Repeat.count 0, nothing fires; cancelled again, absent', async () => {
    const { conn, admin } = held!;
    const { q, library } = fresh('rep-cancel');
    await registerSchedule(conn, q, 'c', { everyMs: E, template: 'x', now: T });
    await registerSchedule(conn, q, 'd', { everyMs: E, template: 'y', now: T });
    await pauseSchedule(conn, q, 'd', T);
    expect(await library.count()).toBe(2);
    expect(await cancelSchedule(conn, q, 'c')).toBe('cancelled');
    expect(await cancelSchedule(conn, q, 'd')).toBe('cancelled'); // paused ones too
    expect(await library.count()).toBe(0);
    expect(await admin.footprint(q)).toEqual({});
    expect(await library.sweep(T + 100 * E)).toEqual([]);
    expect(await cancelSchedule(conn, q, 'c')).toBe('absent');
    expect(await readSchedule(conn, q, 'c')).toBeNull();
    for (const move of [pauseSchedule, resumeSchedule, runScheduleNow]) expect(await move(conn, q, 'c', T)).toBeNull();
    expect(await admin.footprint(q)).toEqual({});
  });

  run('listSchedules walks every registration by cursor, each page sorted by name, without templates', async () => {
    const { conn } = held!;
    const { q } = fresh('rep-list');
    expect(await listSchedules(conn, q)).toEqual({ schedules: [] });
    const names = Array.from({ length: 150 }, (_, i) => `job-${String(i).padStart(3, '0')}`); // past the compact encoding
    for (const [i, name] of names.entries()) await registerSchedule(conn, q, name, { everyMs: E + i, template: TEMPLATE, firstInMs: i, now: T });
    await pauseSchedule(conn, q, 'job-007', T);
    const seen = new Map<string, unknown>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listSchedules(conn, q, { cursor, count: 20 });
      const pageNames = page.schedules.map((s) => s.name);
      expect(pageNames).toEqual([...pageNames].sort());
      for (const s of page.schedules) seen.set(s.name, s);
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined && pages < 1000);
    expect(pages).toBeGreaterThan(1);
    expect([...seen.keys()].sort()).toEqual(names);
    expect(seen.get('job-003')).toEqual({ name: 'job-003', everyMs: E + 3, nextRunAt: T + 3, paused: false });
    expect(seen.get('job-007')).toEqual({ name: 'job-007', everyMs: E + 7, nextRunAt: null, paused: true });
  });

  run('every refusal writes nothing: queue, name, period, first run, template, cursor and count, wrong types', async () => {
    const { conn, admin } = held!;
    const { q } = fresh('rep-refuse');
    await registerSchedule(conn, q, 'kept', { everyMs: E, template: 'x', now: T });
    await admin.call('SET', `emq:{${q}}:repeat:str`, 'not a hash');
    const before = await snapshot(admin, q);
    const ok = { everyMs: E, template: 'x', now: T };
    const refusals: Array<[() => Promise<unknown>, unknown]> = [
      [() => registerSchedule(conn, 'a queue', 'n', ok), InvalidQueueError],
      [() => registerSchedule(conn, 'emq', 'n', ok), InvalidQueueError],
      ...['', 'a b', 'a:b', 'a{b}', 'é', 'x'.repeat(256), '\n'].map((name): [() => Promise<unknown>, unknown] => [
        () => registerSchedule(conn, q, name, ok),
        InvalidArgumentError,
      ]),
      ...[0, -1, 1.5, Number.NaN, 10 * 365.25 * 86_400_000 + 1].map((everyMs): [() => Promise<unknown>, unknown] => [
        () => registerSchedule(conn, q, 'n', { ...ok, everyMs }),
        InvalidArgumentError,
      ]),
      [() => registerSchedule(conn, q, 'n', { ...ok, everyMs: 2 * E, maxDelayMs: E }), InvalidArgumentError],
      [() => registerSchedule(conn, q, 'n', { ...ok, firstInMs: -1 }), InvalidArgumentError],
      [() => registerSchedule(conn, q, 'n', { ...ok, firstInMs: E + 1, maxDelayMs: E }), InvalidArgumentError],
      [() => registerSchedule(conn, q, 'n', { ...ok, now: -5 }), InvalidArgumentError],
      [() => registerSchedule(conn, q, 'n', { ...ok, template: '\ud800' }), InvalidPayloadError],
      [() => registerSchedule(conn, q, 'n', { ...ok, template: 5 as unknown as string }), InvalidPayloadError],
      [() => registerSchedule(conn, q, 'n', { ...ok, template: 'abcd', maxPayloadBytes: 3 }), InvalidPayloadError],
      [() => registerSchedule(conn, q, 'str', ok), WrongTypeError],
      [() => cancelSchedule(conn, q, 'str'), WrongTypeError],
      [() => cancelSchedule(conn, q, 'a:b'), InvalidArgumentError],
      [() => readSchedule(conn, q, 'str'), WrongTypeError],
      [() => pauseSchedule(conn, q, 'str', T), WrongTypeError],
      [() => pauseSchedule(conn, q, 'kept', -1), InvalidArgumentError],
      [() => runScheduleNow(conn, q, '', T), InvalidArgumentError],
      [() => listSchedules(conn, q, { cursor: 'abc' }), InvalidArgumentError],
      [() => listSchedules(conn, q, { cursor: '1'.repeat(21) }), InvalidArgumentError],
      // past ZSCAN's 64-bit cursor (the control fuzz's find: the server's error, not a refusal)
      [() => listSchedules(conn, q, { cursor: '18446744073709551616' }), InvalidArgumentError],
      [() => listSchedules(conn, q, { count: 0 }), InvalidArgumentError],
      [() => listSchedules(conn, q, { count: 1001 }), InvalidArgumentError],
      [() => listSchedules(conn, 'a/b'), InvalidQueueError],
    ];
    for (const [call, error] of refusals) await expect(call()).rejects.toThrow(error as typeof Error);
    expect(await snapshot(admin, q)).toEqual(before);

    // the registry of another type: every verb refuses before writing
    const { q: other } = fresh('rep-refuse-set');
    await admin.call('SET', `emq:{${other}}:repeat`, 'x');
    const set = await snapshot(admin, other);
    for (const call of [
      () => registerSchedule(conn, other, 'n', ok),
      () => cancelSchedule(conn, other, 'n'),
      () => readSchedule(conn, other, 'n'),
      () => listSchedules(conn, other),
      () => pauseSchedule(conn, other, 'n', T),
      () => resumeSchedule(conn, other, 'n', T),
      () => runScheduleNow(conn, other, 'n', T),
    ])
      await expect(call()).rejects.toThrow(WrongTypeError);
    expect(await snapshot(admin, other)).toEqual(set);
  });

  run('the scripts’ own gates refuse what the functions never send, writing nothing', async () => {
    const { admin } = held!;
    const { q } = fresh('rep-gates');
    const reg = `emq:{${q}}:repeat`;
    const rec = (n: string) => `${reg}:${n}`;
    await admin.call('HSET', rec('odd'), 'every_ms', 'abc', 'template', 'x');
    await admin.call('ZADD', reg, String(PAUSED_SCORE + T), 'odd');
    await admin.call('HSET', rec('frac'), 'every_ms', '1000', 'template', 'x');
    await admin.call('ZADD', reg, '1.5', 'frac');
    const before = await snapshot(admin, q);
    const evalOf = (text: string, keys: string[], args: string[]) => admin.call('EVAL', text, String(keys.length), ...keys, ...args);
    const move = repeatMoveScript.text;
    for (const [text, keys, args, error] of [
      [move, [reg, rec('odd')], ['odd', 'halt', String(T)], /EMQLAYOUT:? ARGV\[2\] must be pause, resume or run-now/],
      [move, [reg, rec('odd')], ['odd', 'pause', '01'], /EMQLAYOUT:? ARGV\[3\]/],
      [move, [reg, rec('odd')], ['odd', 'pause', '3903090455552'], /EMQLAYOUT:? ARGV\[3\]/],
      [move, [reg, rec('odd')], ['odd', 'resume', String(T)], /EMQLAYOUT:? the every_ms of .* is abc/],
      [move, [reg, rec('frac')], ['frac', 'pause', String(T)], /EMQLAYOUT:? the score of frac .* is 1\.5/],
      [move, [reg, rec('other')], ['odd', 'pause', String(T)], /EMQLAYOUT:? expected keys/],
      [move, [reg, rec('odd')], ['odd', 'pause'], /EMQLAYOUT:? expected keys/],
      [move, [`emq:{emq}:repeat`, 'emq:{emq}:repeat:odd'], ['odd', 'pause', String(T)], /EMQLAYOUT:? expected keys/],
      [repeatReadScript.text, [reg, rec('odd')], ['odd', '2'], /EMQLAYOUT:? ARGV\[2\] must be 1/],
      [repeatReadScript.text, [reg, rec('a:b')], ['a:b', '0'], /EMQLAYOUT:? expected keys/],
      [repeatPageScript.text, [reg], ['-1', '10'], /EMQLAYOUT:? expected 2 arguments/],
      [repeatPageScript.text, [reg], ['0', '0'], /EMQLAYOUT:? expected 2 arguments/],
      [repeatPageScript.text, [reg], ['18446744073709551616', '10'], /EMQLAYOUT:? expected 2 arguments/],
      [repeatPageScript.text, [reg], ['99999999999999999999', '10'], /EMQLAYOUT:? expected 2 arguments/],
      [repeatPageScript.text, [reg, reg], ['0', '10'], /EMQLAYOUT:? KEYS/],
    ] as Array<[string, string[], string[], RegExp]>) {
      await expect(evalOf(text, keys, args), `${args.join(' ')}`).rejects.toThrow(error);
    }
    expect(await snapshot(admin, q)).toEqual(before);
    // pausing a paused one with an unreadable period writes nothing; pausing is fine without reading it
    expect(await evalOf(move, [reg, rec('odd')], ['odd', 'pause', String(T)])).toEqual([Buffer.from('abc'), Buffer.from(String(PAUSED_SCORE + T))]);
    expect(await snapshot(admin, q)).toEqual(before);
  });
});
