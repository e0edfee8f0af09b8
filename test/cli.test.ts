// The emq command, run as a real process (built by `npm test`'s pretest step).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decodeId, mintId } from '../shared/index.js';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';

const bin = fileURLToPath(new URL('../bin/emq.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function emq(args: string[], input: Uint8Array | string = '', env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, VALKEY_URL: undefined, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

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

  it('emq id prints a fresh, valid id', async () => {
    const a = await emq(['id']);
    const b = await emq(['id']);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^JOB[0-7][0-9a-hjkmnp-tv-z]{25}\n$/);
    expect(decodeId(a.stdout.trim()).version).toBe(7);
    expect(a.stdout < b.stdout).toBe(true);
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
    ['a bad id', ['enqueue', 'QUEUE', '--id', 'JOBnope'], /refused \(invalid_id\)/],
    ['an id of another kind', ['enqueue', 'QUEUE', '--id', 'task-1'], /refused \(kind\): job id "task-1" must be JOB-namespaced/],
    ['no server named', ['enqueue', 'QUEUE'], /no server: pass --url or set VALKEY_URL/],
    ['an unknown option', ['enqueue', 'QUEUE', '--ids', 'x'], /Unknown option/],
    ['an unknown command', ['dequeue'], /unknown command "dequeue"/],
  ])('refuses %s: exit 2, a clear message, nothing written', async (what, args, why) => {
    const q = freshQueue();
    const env = what === 'no server named' ? {} : { VALKEY_URL: url };
    const run = await emq(args.map((a) => (a === 'QUEUE' ? q : a)), 'payload', env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(why);
    expect(await admin.footprint(q)).toEqual({});
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
