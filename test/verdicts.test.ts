// The verdict label (shared/observe.ts verdictOf) of every reply each script gives, as an
// observer sees it: each script run for real against each server through dispatch, the label
// recorded from the observer's call. Labels feed metrics and log lines, where `unexpected`
// pages an operator: no reply a script's header lists may be labelled so.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection, Outcome } from '../shared/connection.js';
import { runScript } from '../shared/dispatch.js';
import { mintId } from '../shared/ids.js';
import { groupKeys, queueInfoKeys } from '../shared/keyspace.js';
import { scoped, verdictOf, type VerdictLabel } from '../shared/observe.js';
import {
  enqueueOnceScript,
  enqueueScript,
  flowChildScript,
  flowParentScript,
  flowScript,
  genqueueOnceScript,
  genqueueScript,
  groupReadScript,
  groupSetScript,
  jobPromoteScript,
  jobRemoveScript,
  jobRescheduleScript,
  jobStateScript,
  queueInfoScript,
  queuePauseScript,
  repeatCancelScript,
  repeatMoveScript,
  repeatPageScript,
  repeatReadScript,
  repeatRegisterScript,
  scheduleOnceScript,
  scheduleScript,
  type Script,
} from '../shared/scripts.js';
import { freshQueue } from './support/admin.js';
import { connectedTo, targets } from './support/targets.js';

/** Every label a reply of our scripts can get, error replies and replies no script gives aside. */
const LABELS: VerdictLabel[] = [
  'enqueued',
  'scheduled',
  'duplicate',
  'taken',
  'found',
  'missing',
  'held',
  'resumed',
  'clear',
  'there',
  'removed',
  'promoted',
  'rescheduled',
  'set',
  'declined',
  'keys',
  'registered',
  'exists',
  'cancelled',
  'absent',
  'refused',
];

describe.each(targets().filter((t) => t.name.startsWith('glide')))('verdict labels: $name', (target) => {
  const held = connectedTo(target);
  let conn: Connection;
  beforeAll(() => void ({ conn } = held));

  const seen = new Set<VerdictLabel>();
  /** Runs the script through dispatch on a connection whose observer labels the outcome; answers the label (label:code for an error reply). */
  async function label(script: Script, keys: string[], args: string[]): Promise<string> {
    let got = '';
    const observed = scoped(conn, {
      observer: {
        script(s, outcome, _keys, args) {
          const { verdict, code } = verdictOf(s, outcome, args);
          seen.add(verdict);
          got = code ? `${verdict}:${code}` : verdict;
        },
      },
    });
    await runScript(observed, script, keys, args);
    return got;
  }

  it('@enqueue, @genqueue, @schedule: 1 and 0; a refusal names its code', async () => {
    const q = freshQueue('verdict');
    const b = `emq:{${q}}:`;
    const id = mintId();
    expect(await label(enqueueScript, [`${b}job:${id}`, `${b}pending`], [id, 'p'])).toBe('enqueued');
    expect(await label(enqueueScript, [`${b}job:${id}`, `${b}pending`], [id, 'p'])).toBe('duplicate');
    expect(await label(enqueueScript, [`${b}job:ABC0000000000A`, `${b}pending`], ['ABC0000000000A', 'p'])).toBe('refused:EMQKIND');
    const g = 'GRP0000000000A';
    const lane = (job: string) => [`${b}job:${job}`, `${b}g:${g}:pending`, ...['ring', 'paused', 'glimit', 'gactive', 'wake'].map((k) => b + k)];
    const gid = mintId();
    expect(await label(genqueueScript, lane(gid), [gid, g, 'p'])).toBe('enqueued');
    expect(await label(genqueueScript, lane(gid), [gid, g, 'p'])).toBe('duplicate');
    const sid = mintId();
    expect(await label(scheduleScript, [`${b}job:${sid}`, `${b}schedule`], [sid, 'in', '60000', 'p'])).toBe('scheduled');
    expect(await label(scheduleScript, [`${b}job:${sid}`, `${b}schedule`], [sid, 'in', '60000', 'p'])).toBe('duplicate');
    expect(await label(scheduleScript, [`${b}job:${mintId()}`, `${b}pending`], [mintId(), 'in', '0', 'p'])).toBe('refused:EMQLAYOUT');
  });

  it('the -once scripts: [1, id], [0, id] and [2, id] (a row there without the dedup key)', async () => {
    const q = freshQueue('verdict');
    const b = `emq:{${q}}:`;
    const g = 'GRP0000000000B';
    const shapes: Array<[Script, string, (id: string, dedup: string) => [string[], string[]]]> = [
      [
        enqueueOnceScript,
        'enqueued',
        (id, d) => [
          [`${b}job:${id}`, `${b}pending`, `${b}de:${d}`],
          [id, '0', '60', 'p'],
        ],
      ],
      [
        genqueueOnceScript,
        'enqueued',
        (id, d) => [
          [`${b}job:${id}`, `${b}g:${g}:pending`, ...['ring', 'paused', 'glimit', 'gactive', 'wake'].map((k) => b + k), `${b}de:${d}`],
          [id, '0', '60', g, 'p'],
        ],
      ],
      [
        scheduleOnceScript,
        'scheduled',
        (id, d) => [
          [`${b}job:${id}`, `${b}schedule`, `${b}de:${d}`],
          [id, '0', '60', 'in', '60000', 'p'],
        ],
      ],
    ];
    for (const [script, admitted, call] of shapes) {
      const id = mintId();
      expect(await label(script, ...call(id, `${script.name}-1`)), script.name).toBe(admitted);
      expect(await label(script, ...call(mintId(), `${script.name}-1`)), script.name).toBe('duplicate');
      expect(await label(script, ...call(id, `${script.name}-2`)), script.name).toBe('taken');
    }
  });

  it('@job-state: found and missing', async () => {
    const q = freshQueue('verdict');
    const b = `emq:{${q}}:`;
    const keys = (id: string) => [`${b}job:${id}`, ...['pending', 'active', 'schedule', 'dead'].map((s) => b + s)];
    const id = mintId();
    expect(await label(jobStateScript, keys(id), [id])).toBe('missing');
    await label(enqueueScript, [`${b}job:${id}`, `${b}pending`], [id, 'p']);
    expect(await label(jobStateScript, keys(id), [id])).toBe('found');
  });

  it('@flow: the number of children landed is enqueued, 0 duplicate', async () => {
    const q = freshQueue('verdict');
    const b = `emq:{${q}}:`;
    const [parent, c1, c2] = [mintId(), mintId(), mintId()];
    const keys = [`${b}job:${parent}`, `${b}job:${parent}:dependencies`, `${b}pending`, `${b}job:${c1}`, `${b}job:${c2}`];
    const args = [parent, '1', c1, 'fp', '1', c2, 'id', '1', 'PAB'];
    expect(await label(flowScript, keys, args)).toBe('enqueued');
    expect(await label(flowScript, keys, args)).toBe('duplicate');
  });

  it('@flow-parent: 1 held, [2, ...] resumed (an earlier send held it), 0 duplicate', async () => {
    const q = freshQueue('verdict');
    const b = `emq:{${q}}:job:`;
    const parent = mintId();
    const keys = [`${b}${parent}`, `${b}${parent}:dependencies`, `${b}${parent}:processed`];
    expect(await label(flowParentScript, keys, [parent, '2', 'P'])).toBe('held');
    expect(await label(flowParentScript, keys, [parent, '2', 'P'])).toBe('resumed');
    expect(await label(flowParentScript, keys, [parent, '2', 'another flow'])).toBe('duplicate');
  });

  it('@flow-child: 1 clear in check mode and enqueued in land mode, 0 there once it landed; a job in the way refused', async () => {
    const cq = freshQueue('verdict');
    const b = `emq:{${cq}}:`;
    const [parent, child] = [mintId(), mintId()];
    const keys = [`${b}job:${child}`, `${b}pending`, `${b}flow:outbox`];
    const args = [child, parent, 'parent-queue', 'fp'];
    expect(await label(flowChildScript, keys, [...args, 'check'])).toBe('clear');
    expect(await label(flowChildScript, keys, [...args, 'land', 'c'])).toBe('enqueued');
    expect(await label(flowChildScript, keys, [...args, 'land', 'c'])).toBe('there');
    expect(await label(flowChildScript, keys, [...args, 'check'])).toBe('there');
    expect(await label(flowChildScript, keys, [child, mintId(), 'parent-queue', 'fp', 'check'])).toBe('refused:EMQCONFLICT');
  });

  it('@job-remove, @job-promote, @job-reschedule: done, declined (nothing written), keys (sent again with the lane)', async () => {
    const q = freshQueue('verdict');
    const b = `emq:{${q}}:`;
    const g = 'GRP0000000000A';
    const [flat, laned] = [mintId(), mintId()];
    const row = (id: string) => `${b}job:${id}`;
    const removeKeys = (id: string, ...more: string[]) => [
      row(id),
      ...['pending', 'active', 'schedule', 'dead'].map((s) => b + s),
      ...[':logs', ':lock', ':dependencies'].map((s) => row(id) + s),
      `${b}de:`,
      `${b}ring`,
      ...more,
    ];
    const promoteKeys = (id: string, ...more: string[]) => [row(id), `${b}schedule`, `${b}pending`, ...more];
    const lane = [`${b}g:${g}:pending`, ...['ring', 'paused', 'glimit', 'gactive', 'wake'].map((s) => b + s)];
    await runScript(conn, scheduleScript, [row(flat), `${b}schedule`], [flat, 'in', '60000', 'p']);
    await runScript(conn, scheduleScript, [row(laned), `${b}schedule`], [laned, 'in', '60000', g, 'p']);
    expect(await label(jobRescheduleScript, [row(flat), `${b}schedule`], [flat, 'at', '5'])).toBe('rescheduled');
    expect(await label(jobRescheduleScript, [row(mintId()), `${b}schedule`], [flat, 'at', '5'])).toBe('refused:EMQLAYOUT');
    expect(await label(jobPromoteScript, promoteKeys(flat), [flat, ''])).toBe('promoted');
    expect(await label(jobPromoteScript, promoteKeys(flat), [flat, ''])).toBe('declined');
    expect(await label(jobRescheduleScript, [row(flat), `${b}schedule`], [flat, 'at', '5'])).toBe('declined');
    expect(await label(jobPromoteScript, promoteKeys(laned), [laned, ''])).toBe('keys');
    expect(await label(jobPromoteScript, promoteKeys(laned, ...lane), [laned, g])).toBe('promoted');
    expect(await label(jobRemoveScript, removeKeys(laned), [laned, '', '', ''])).toBe('keys');
    expect(await label(jobRemoveScript, removeKeys(laned, lane[0]!), [laned, '', g, ''])).toBe('removed');
    expect(await label(jobRemoveScript, removeKeys(laned), [laned, '', '', ''])).toBe('declined');
  });

  it('@queue-pause, @group-set: set; @group-read, @queue-info: found', async () => {
    const q = freshQueue('verdict');
    const g = 'GRP0000000000A';
    expect(await label(queuePauseScript, [`emq:{${q}}:meta`], ['pause'])).toBe('set');
    expect(await label(queuePauseScript, [`emq:{${q}}:meta`], ['halt'])).toBe('refused:EMQLAYOUT');
    expect(await label(groupSetScript, groupKeys(q, g), [g, '2', '', ''])).toBe('set');
    expect(await label(groupReadScript, groupKeys(q, g).slice(0, 6), [g])).toBe('found');
    expect(await label(queueInfoScript, queueInfoKeys(q), ['', '10'])).toBe('found');
  });

  it('the repeat scripts: registered and exists, cancelled and absent; found and missing', async () => {
    const q = freshQueue('verdict');
    const [set, rec] = [`emq:{${q}}:repeat`, `emq:{${q}}:repeat:r`];
    expect(await label(repeatReadScript, [set, rec], ['r', '1'])).toBe('missing');
    expect(await label(repeatMoveScript, [set, rec], ['r', 'pause', '5'])).toBe('missing');
    expect(await label(repeatRegisterScript, [set, rec], ['r', '1000', 't', '5'])).toBe('registered');
    expect(await label(repeatRegisterScript, [set, rec], ['r', '1000', 't', '5'])).toBe('exists');
    expect(await label(repeatReadScript, [set, rec], ['r', '0'])).toBe('found');
    expect(await label(repeatMoveScript, [set, rec], ['r', 'pause', '5'])).toBe('found');
    expect(await label(repeatPageScript, [set], ['0', '10'])).toBe('found');
    expect(await label(repeatMoveScript, [set, rec], ['r', 'halt', '5'])).toBe('refused:EMQLAYOUT');
    expect(await label(repeatCancelScript, [set, rec], ['r'])).toBe('cancelled');
    expect(await label(repeatCancelScript, [set, rec], ['r'])).toBe('absent');
  });

  it('every label a reply can get was got from a real reply above', () => {
    expect([...seen].sort()).toEqual([...LABELS].sort());
  });
});

describe('replies no script gives, and error replies', () => {
  const ok = (value: unknown): Outcome => ({ ok: true, value: value as never });
  it('are unexpected, whichever the script; error replies are error with their code', () => {
    const cases: Array<[Script, unknown]> = [
      [enqueueScript, 2],
      [scheduleScript, [1, 'JOB0000000000A']],
      [enqueueOnceScript, 1],
      [jobStateScript, 1],
      [flowScript, 1001],
      [flowScript, -1],
      [flowScript, 'x'],
      [flowParentScript, 3],
      [flowParentScript, [1]],
      [flowChildScript, 2],
      [flowChildScript, null],
      [jobRemoveScript, 1],
      [jobRemoveScript, [3, 'x']],
      [jobPromoteScript, 'promoted'],
      [jobRescheduleScript, [2, 'x']],
      [repeatRegisterScript, 2],
      [repeatCancelScript, [1]],
      [repeatReadScript, 1],
      [repeatMoveScript, 'x'],
      [repeatPageScript, null],
      [{ name: 'another', sha1: '', text: '' }, 1],
    ];
    for (const [script, value] of cases) expect(verdictOf(script, ok(value)), `${script.name} ${JSON.stringify(value)}`).toEqual({ verdict: 'unexpected' });
    expect(verdictOf(flowScript, ok(1000n))).toEqual({ verdict: 'enqueued' });
    expect(verdictOf(flowScript, { ok: false, error: 'NOSCRIPT No matching script' })).toEqual({ verdict: 'error', code: 'NOSCRIPT' });
    expect(verdictOf(flowChildScript, { ok: false, error: 'SOMETHING else' })).toEqual({ verdict: 'error', code: 'OTHER' });
  });
});
