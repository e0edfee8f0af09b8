// `npm start` from the repository, as a person runs it: it comes up, a job can be enqueued
// over HTTP, and SIGTERM (or Ctrl-C) stops all of it: no process it started is left.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { freshQueue } from './support/admin.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every live process below `pid` (from /proc), with its command line. */
function descendants(pid: number): Map<number, string> {
  const parent = new Map<number, number>();
  const cmd = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      cmd.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim());
    } catch {
      // gone meanwhile
    }
  }
  const out = new Map<number, string>();
  const walk = (p: number) => {
    for (const [child, par] of parent) if (par === p && !out.has(child)) out.set(child, cmd.get(child) ?? ''), walk(child);
  };
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

it('npm start serves the producer, enqueues over HTTP, puts no secret on a command line (finding 13, security review), and SIGTERM leaves no process behind', {
  timeout: 120_000,
}, async () => {
  const port = await freePort();
  const token = 'npm-start-test-token-0123456789';
  const cronQ = freshQueue('start-cron');
  const child = spawn('npm', ['start'], {
    cwd: root,
    // EMQ_MAX_PAYLOAD_BYTES must reach the Worker as a var, like every EMQ_* variable
    // EMQ_SOURCES holds a secret: like every variable it must reach the Worker, never a command line
    env: {
      ...process.env,
      PORT: String(port),
      EMQ_DEV_TOKEN: token,
      EMQ_CONSOLE_PORT: '0',
      VALKEY_URL: '',
      EMQ_MAX_PAYLOAD_BYTES: '64',
      EMQ_SOURCES: JSON.stringify({ gh: { kind: 'github', secrets: ['npm-start-hook-secret-0123'], queue: 'hooks' } }),
      EMQ_CRONS: JSON.stringify([{ name: 'tick', cron: '* * * * *', queue: cronQ, payload: 'tick' }]),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    for (const deadline = Date.now() + 90_000; !out.includes('Ctrl-C stops everything'); ) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(out).toContain(`Producer: http://127.0.0.1:${port}`);
    expect(out).toContain(token);
    // the console beside it, over the Worker: it answers its sign-in page
    const consoleUrl = /Console:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(consoleUrl).toBeDefined();
    expect((await fetch(`${consoleUrl}/signin`)).status).toBe(200);

    const q = freshQueue('start');
    const res = await fetch(`http://127.0.0.1:${port}/v1/queues/${q}/jobs`, { method: 'POST', body: 'hello', headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const read = await fetch(`http://127.0.0.1:${port}/v1/queues/${q}/jobs/${id}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(await read.json()).toMatchObject({ id, state: 'pending', attempts: 0 });

    // what the admission issues added, through the Worker and the gateway npm start runs
    const auth = { Authorization: `Bearer ${token}` };
    const stateOf = async (queue: string, job: string) =>
      ((await (await fetch(`http://127.0.0.1:${port}/v1/queues/${queue}/jobs/${job}`, { headers: auth })).json()) as { state?: string }).state;
    const later = await fetch(`http://127.0.0.1:${port}/v1/queues/${q}/jobs`, { method: 'POST', body: 'l', headers: { ...auth, 'Emq-Delay': '1h' } });
    const lane = await fetch(`http://127.0.0.1:${port}/v1/queues/${q}/jobs`, {
      method: 'POST',
      body: 'g',
      headers: { ...auth, 'Emq-Group': 'PRT0KHTOWnGLuC' },
    });
    const flow = await fetch(`http://127.0.0.1:${port}/v1/queues/${q}/flows`, {
      method: 'POST',
      body: JSON.stringify({ parent: { payload: 'P' }, children: [{ payload: 'a' }, { payloadBase64: '/w==', queue: `${q}-b` }] }),
      headers: auth,
    });
    expect([later.status, lane.status, flow.status]).toEqual([201, 201, 201]);
    const flowed = (await flow.json()) as { parent: { id: string }; children: Array<{ queue: string; id: string }> };
    expect(await stateOf(q, ((await later.json()) as { id: string }).id)).toBe('scheduled');
    expect(await stateOf(q, ((await lane.json()) as { id: string }).id)).toBe('pending');
    expect(await stateOf(q, flowed.parent.id)).toBe('awaiting_children');
    expect(await stateOf(`${q}-b`, flowed.children[1]!.id)).toBe('pending');

    const big = await fetch(`http://127.0.0.1:${port}/v1/queues/${q}/jobs`, {
      method: 'POST',
      body: 'x'.repeat(65),
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(big.status).toBe(413);

    // wrangler dev --test-scheduled: /__scheduled fires the Worker's cron schedules, once a minute
    const fireUrl = `http://127.0.0.1:${port}/__scheduled?cron=*+*+*+*+*`;
    expect(out).toContain(`curl '${fireUrl}'`);
    const minute = Math.floor(Date.now() / 60_000);
    expect((await fetch(fireUrl)).status).toBe(200);
    expect((await fetch(fireUrl)).status).toBe(200);
    const sameMinute = Math.floor(Date.now() / 60_000) === minute;
    const counts = (await (await fetch(`http://127.0.0.1:${port}/v1/queues/${cronQ}`, { headers: auth })).json()) as { counts: { pending: number } };
    expect(counts.counts.pending).toBe(sameMinute ? 1 : 2);

    const started = descendants(child.pid!);
    const names = [...started.values()].join('\n');
    expect(names).toMatch(/valkey-server|redis-server/);
    expect(names).toMatch(/workerd/);
    expect(names).toMatch(/wrangler/);
    // finding 13 (security review): no secret on any command line ps can show
    expect(names).not.toContain('npm-start-hook-secret');
    expect(names).not.toContain(token);
    expect(names).not.toMatch(/--var/);

    // as a supervisor would: SIGTERM to npm alone (npm does not pass it on to the script)
    child.kill('SIGTERM');
    await exited;
    for (const deadline = Date.now() + 10_000; [...started.keys()].some(alive) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const left = [...started].filter(([pid]) => alive(pid)).map(([pid, cmd]) => `${pid} ${cmd}`);
    expect(left).toEqual([]);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
