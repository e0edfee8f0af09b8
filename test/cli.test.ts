// The emq command, run as a real process (built by `npm test`'s pretest step).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decodeId, mintId } from '../shared/index.js';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { libraryConsumer } from './support/consumer.js';

describe('emq', () => {
  const url = inject('servers')[0]!.url;
  let admin: Admin;
  beforeAll(async () => {
    if (!existsSync(fileURLToPath(new URL('../dist/cli/emq.js', import.meta.url)))) {
      throw new Error('dist/ is missing: run `npm test` (its pretest builds) or `npm run build`');
    }
    admin = await connectAdmin(url);
  });
  afterAll(() => admin?.close());

  it('emq id prints a fresh branded id on EMQ_NODE_ID, later ids sorting after earlier ones', async () => {
    const before = Date.now();
    const a = await emq(['id'], '', { EMQ_NODE_ID: '42' });
    const b = await emq(['id'], '', { EMQ_NODE_ID: '42' });
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^JOB[0-9A-Za-z]{11}\n$/);
    const d = decodeId(a.stdout.trim());
    expect(d.node).toBe(42);
    expect(d.unixMs).toBeGreaterThanOrEqual(before);
    expect(a.stdout < b.stdout).toBe(true);
  });

  it('emq id draws its node id from EMQ_NODE_IDS', async () => {
    const nodes = new Set<number>();
    for (let i = 0; i < 6; i++) nodes.add(decodeId((await emq(['id'], '', { EMQ_NODE_IDS: '600-601' })).stdout.trim()).node);
    for (const n of nodes) expect([600, 601]).toContain(n);
  });

  it('emq id --decode prints one JSON line for any namespace', async () => {
    const run = await emq(['id', '--decode', 'USR0KHTOWnGLuC']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('{"namespace":"USR","snowflake":"274557032793636864","unixMs":1769526697641,"node":0,"seq":0}\n');
    const job = JSON.parse((await emq(['id', '--decode', 'JOB0JZGkP8sr8B'])).stdout);
    expect(job).toEqual({
      namespace: 'JOB',
      snowflake: String((BigInt(Date.parse('2026-01-01T00:00:00Z') - 1704067200000) << 22n) | (4n << 12n) | 4095n),
      unixMs: Date.parse('2026-01-01T00:00:00Z'),
      node: 4,
      seq: 4095,
    });
  });

  it.each([
    [['id', '--decode', 'USRzzzzzzzzzzz'], /more than 63 bits/],
    [['id', '--decode', 'JOB01m8ktkzg6eaatm9sqpt0r51n2'], /29 characters long/],
    [['id', '--decode'], /argument missing/],
    [['id', 'extra'], /takes no arguments/],
  ])('emq %j exits 2 with a clear message', async (args, why) => {
    const run = await emq(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(why);
  });

  it.each([
    ['EMQ_NODE_ID', '1024'],
    ['EMQ_NODE_ID', 'x'],
    ['EMQ_NODE_IDS', '9-3'],
  ])('a bad %s stops it, naming the variable and not the value', async (name, value) => {
    const run = await emq(['id'], '', { [name]: value });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(name);
    expect(run.stderr).not.toContain(`"${value}"`);
  });

  it('enqueues stdin bytes, NUL bytes included, and prints one JSON line', async () => {
    const q = freshQueue();
    const payload = Buffer.from([0, 1, 0, 255, 0xc3, 0x28, 0]);
    const run = await emq(['enqueue', q, '--url', url], payload);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines).toHaveLength(2);
    const out = JSON.parse(lines[0]!);
    expect(Object.keys(out)).toEqual(['queue', 'id', 'verdict']);
    expect(out).toMatchObject({ queue: q, verdict: 'enqueued' });
    const stored = (await admin.call('HGET', `emq:{${q}}:job:${out.id}`, 'payload')) as Buffer;
    expect(Buffer.compare(stored, payload)).toBe(0);
  });

  it('--id makes a retry idempotent: the second run answers duplicate; VALKEY_URL works like --url', async () => {
    const q = freshQueue();
    const id = mintId();
    const first = await emq(['enqueue', q, '--id', id], 'one', { VALKEY_URL: url });
    const second = await emq(['enqueue', q, '--id', id], 'two', { VALKEY_URL: url });
    expect(JSON.parse(first.stdout)).toEqual({ queue: q, id, verdict: 'enqueued' });
    expect(JSON.parse(second.stdout)).toEqual({ queue: q, id, verdict: 'duplicate' });
    expect(second.code).toBe(0);
    expect(String(await admin.text('HGET', `emq:{${q}}:job:${id}`, 'payload'))).toBe('one');
  });

  // the server is named (through VALKEY_URL) in every case but one: refusals come first
  it.each([
    ['a bad queue', ['enqueue', 'no spaces'], /refused \(invalid_queue\): queue name "no spaces" contains U\+0020/],
    ['a bad id', ['enqueue', 'QUEUE', '--id', 'JOBnope'], /refused \(invalid_id\): job id "JOBnope" is 7 characters long/],
    ['an old-format id', ['enqueue', 'QUEUE', '--id', 'JOB01m8ktkzg6eaatm9sqpt0r51n2'], /refused \(invalid_id\)/],
    ['a malformed id of no kind', ['enqueue', 'QUEUE', '--id', 'task-1'], /refused \(invalid_id\)/],
    ['an id of another kind', ['enqueue', 'QUEUE', '--id', 'ORD0NgWEfAEJfs'], /refused \(kind\): job id "ORD0NgWEfAEJfs" is a well-formed id of namespace ORD/],
    ['the reserved queue emq', ['enqueue', 'emq'], /refused \(invalid_queue\): queue name "emq" is reserved/],
    ['no server named', ['enqueue', 'QUEUE'], /no server: pass --url or set VALKEY_URL/],
    ['an unknown option', ['enqueue', 'QUEUE', '--ids', 'x'], /Unknown option/],
    ['an unknown command', ['dequeue'], /unknown command "dequeue"/],
    ['--delay without a unit', ['enqueue', 'QUEUE', '--delay', '100'], /--delay: a delay needs a unit/],
    ['--delay negative', ['enqueue', 'QUEUE', '--delay=-1s'], /--delay: a delay cannot be negative/],
    ['--delay beyond ten years', ['enqueue', 'QUEUE', '--delay', '4000d'], /inMs must be a whole number of ms from 0/],
    ['--not-before not a time', ['enqueue', 'QUEUE', '--not-before', 'soon'], /--not-before: a time is RFC 3339/],
    ['--delay and --not-before', ['enqueue', 'QUEUE', '--delay', '1s', '--not-before', '0'], /--delay or --not-before, not both/],
    ['--group not a branded id', ['enqueue', 'QUEUE', '--group', 'tenant-a'], /refused \(invalid_id\): group "tenant-a"/],
  ])('refuses %s: exit 2, a clear message, nothing written', async (what, args, why) => {
    const q = freshQueue();
    const env = what === 'no server named' ? {} : { VALKEY_URL: url };
    const run = await emq(
      args.map((a) => (a === 'QUEUE' ? q : a)),
      'payload',
      env,
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(why);
    expect(await admin.footprint(q)).toEqual({});
  });

  it('--group, --delay and --not-before: a lane, the schedule (verdict scheduled), both; the library consumer serves them', async () => {
    const q = freshQueue('cliplace');
    const consumer = libraryConsumer(admin, q);
    const run = async (...args: string[]) => {
      const r = await emq(['enqueue', q, ...args], 'x', { VALKEY_URL: url });
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as { id: string; verdict: string };
    };
    const lane = await run('--group', 'PRT0KHTOWnGLuC');
    expect(lane.verdict).toBe('enqueued');
    expect(await consumer.gclaim()).toMatchObject({ id: lane.id, group: 'PRT0KHTOWnGLuC' });
    const delayed = await run('--delay', '100ms', '--group', 'USR0NgWEfAEJfs');
    const at = await run('--not-before', new Date(Date.now() + 100).toISOString(), '--id', mintId());
    expect([delayed.verdict, at.verdict]).toEqual(['scheduled', 'scheduled']);
    expect((await run('--delay', '1s', '--id', at.id)).verdict).toBe('duplicate');
    await new Promise((r) => setTimeout(r, 200));
    expect(await consumer.promote()).toBe(2);
    expect(await consumer.gclaim()).toMatchObject({ id: delayed.id, group: 'USR0NgWEfAEJfs' });
    expect((await consumer.claim())?.id).toBe(at.id);
  });

  it('a server that is not there: exit 1 with a connection message, promptly', { timeout: 20_000 }, async () => {
    const gone: RunningServer = await startServer();
    await gone.stop();
    const run = await emq(['enqueue', 'q', '--url', `redis://user:hunter2@127.0.0.1:${gone.port}`], 'x');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/connection failed: cannot connect to redis:\/\/user:\*\*\*@127\.0\.0\.1/);
    expect(run.stderr).not.toContain('hunter2');
  });
});
