// The package as a user gets it: `npm pack`, the tarball installed into a fresh project in a
// temp dir (test/package/ is that project's code), and used from there: a Worker under
// `wrangler dev` (workerd) enqueueing through the gateway; the producer app mounted in the
// user's own Hono app behind the user's own auth; the typed client against `emq producer`; the
// REST connection from Node, through undici (the package's "node" entry).
// The gateway and the producer are the tarball's own `emq` command. Every enqueue is read
// back from Valkey.
//
// Installing: the tarball is unpacked into node_modules/echomq-edge, as npm does, and each
// dependency it declares is linked to this checkout's installed copy (checked to be the
// declared version). No registry: `npm install --offline` needs package metadata that
// `npm ci` never caches, and with links the package can resolve nothing it does not declare.
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { offlineEnv } from '../scripts/offline-env.js';
import { repoRoot } from '../scripts/repo-root.js';
import { jobKey, pendingKey } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const root = repoRoot();
const run = promisify(execFile);

interface Manifest {
  name: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
}

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string }[];
}

/** The package's files a set of entry files reach through their relative imports. */
function reached(dir: string, entries: string[]): Set<string> {
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)) {
      const target = normalize(join(dirname(file), m[1]!));
      // a declaration file names its sibling module; its types are in the .d.ts beside it
      walk(file.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target);
    }
  };
  for (const e of entries) walk(normalize(e));
  return seen;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A process of the scratch project that prints its URL first, on stdout. */
function urlOf(child: ChildProcess, what: string): Promise<string> {
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed no URL in 30 s:\n${out.slice(-2000)}`)), 30_000);
    child.stdout!.on('data', () => {
      const m = /^(http:\/\/\S+)\n/.exec(out);
      if (m) clearTimeout(timer), resolve(m[1]!);
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`${what} exited with ${code}:\n${out.slice(-2000)}`))));
  });
}

describe('the package, packed and installed into a fresh project', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let dir: string;
  let scratch: string;
  let installed: string;
  let manifest: Manifest;
  let packed: Packed;
  let emq: string;
  let admin: Admin;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emq-package-'));
    // dist/ is built by npm test's pretest (npm run build:node); packing without scripts keeps
    // this test from rewriting dist/ under other tests' feet
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'], // npm's notices on stderr: kept out of the test's output
    });
    packed = (JSON.parse(out) as Packed[])[0]!;

    scratch = join(dir, 'user');
    cpSync(join(root, 'test', 'package'), scratch, { recursive: true });
    installed = join(scratch, 'node_modules', 'echomq-edge');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', installed, '--strip-components=1']);
    manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Manifest;
    const link = (name: string) => {
      const to = join(scratch, 'node_modules', name);
      mkdirSync(dirname(to), { recursive: true });
      symlinkSync(realpathSync(join(root, 'node_modules', name)), to, 'dir');
      return JSON.parse(readFileSync(join(to, 'package.json'), 'utf8')).version as string;
    };
    // what the package declares (hoisted, as npm places them: the user's code imports hono from
    // there too), and the user's own: @hono/node-server to serve their app on Node (the
    // package's own servers are node:http), and Node's types
    for (const [name, spec] of Object.entries(manifest.dependencies)) expect(link(name), name).toBe(spec);
    expect(manifest.dependencies['@hono/node-server']).toBeUndefined();
    link('@hono/node-server');
    link('@types/node');
    emq = join(installed, manifest.bin.emq!);

    // the user's code, typechecked against the package's .d.ts (skipLibCheck off) and built
    try {
      execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: scratch, encoding: 'utf8' });
    } catch (err) {
      throw new Error(`tsc in the scratch project:\n${(err as { stdout?: string }).stdout ?? ''}`);
    }

    admin = await connectAdmin(valkeyUrl);
    gateway = await startGatewayProcess(valkeyUrl, {}, emq);
  });

  afterAll(async () => {
    admin?.close();
    if (gateway) expect(await gateway.stop()).toBe(0);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs only what its exports and its bin reach: no sources, maps, tests or stale output; each .d.ts beside its .js', () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(packed.entryCount).toBe(files.length);
    const targets = Object.values(manifest.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)));
    const runtime = reached(
      installed,
      [...targets.filter((t) => t.endsWith('.js')), ...Object.values(manifest.bin)].map((t) => t.replace(/^\.\//, '')),
    );
    const types = reached(
      installed,
      targets.filter((t) => t.endsWith('.d.ts')).map((t) => t.replace(/^\.\//, '')),
    );
    for (const f of [...runtime, ...types]) expect(files, `${f} is imported but not packed`).toContain(f);
    // every module is run by an entry point, or is the module of types an entry point names
    // (a types-only module compiles to an empty one)
    const modules = new Set([...runtime, ...[...types].map((t) => t.replace(/\.d\.ts$/, '.js'))]);
    expect(files.filter((f) => f.endsWith('.js'))).toEqual([...modules].sort());
    for (const f of files.filter((f) => f.endsWith('.d.ts'))) expect(files, `${f} without its module`).toContain(f.replace(/\.d\.ts$/, '.js'));
    expect(files.filter((f) => !f.endsWith('.js') && !f.endsWith('.d.ts'))).toEqual(['README.md', 'package.json']);
    console.log(
      `[package] ${packed.filename}: ${files.length} files, ${(packed.size / 1024).toFixed(1)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(1)} KiB unpacked`,
    );
  });

  it('a Worker in workerd (wrangler dev) imports the package and enqueues through the gateway', { timeout: 90_000 }, async () => {
    const port = await freePort();
    // the gateway's token goes through .dev.vars, never a command line
    writeFileSync(join(scratch, '.dev.vars'), `EMQ_REST_URL=${gateway.url}\nEMQ_REST_TOKEN=${gateway.producer}\n`, { mode: 0o600 });
    const xdg = join(scratch, '.xdg');
    mkdirSync(xdg);
    const wrangler = spawn(
      join(root, 'node_modules', '.bin', 'wrangler'),
      ['dev', '--ip', '127.0.0.1', '--port', String(port), '--show-interactive-dev-session=false', '--log-level', 'warn'],
      {
        cwd: scratch,
        detached: true, // its own process group (setsid): stopping it reaches workerd too
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...offlineEnv(), XDG_CONFIG_HOME: xdg },
      },
    );
    let output = '';
    wrangler.stdout!.on('data', (d) => (output += d));
    wrangler.stderr!.on('data', (d) => (output += d));
    const exited = new Promise((r) => wrangler.once('exit', r));
    try {
      const url = `http://127.0.0.1:${port}`;
      const up = () =>
        fetch(url)
          .then((r) => r.ok)
          .catch(() => false);
      for (const deadline = Date.now() + 60_000; ; ) {
        if (wrangler.exitCode !== null) throw new Error(`wrangler dev exited (${wrangler.exitCode}):\n${output.slice(-2000)}`);
        if (await up()) break;
        if (Date.now() > deadline) throw new Error(`wrangler dev did not answer on ${url} within 60 s:\n${output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const q = freshQueue('pkg-worker');
      const payload = new Uint8Array([0xff, 0x00, 0x80, 0x41]);
      const res = await fetch(`${url}/${q}`, { method: 'POST', body: payload });
      expect(res.status, output.slice(-2000)).toBe(200);
      const { id, verdict } = (await res.json()) as { id: string; verdict: string };
      expect(verdict).toBe('enqueued');
      expect(await admin.call('HGET', jobKey(q, id), 'payload')).toEqual(Buffer.from(payload));
      expect(await admin.call('ZSCORE', pendingKey(q), id)).not.toBeNull();
    } finally {
      try {
        process.kill(-wrangler.pid!, 'SIGTERM');
      } catch {}
      const force = setTimeout(() => {
        try {
          process.kill(-wrangler.pid!, 'SIGKILL');
        } catch {}
      }, 5_000);
      await exited;
      clearTimeout(force);
      try {
        process.kill(-wrangler.pid!, 'SIGKILL'); // workerd, if wrangler left it behind
      } catch {}
    }
  });

  it('a Worker that imports the Node-only glide connection does not bundle, even with nodejs_compat', () => {
    const xdg = join(scratch, '.xdg-glide');
    mkdirSync(xdg);
    const bundle = spawnSync(
      join(root, 'node_modules', '.bin', 'wrangler'),
      ['deploy', '--dry-run', '--config', 'wrangler.glide.toml', '--outdir', join(dir, 'glide-bundle')],
      { cwd: scratch, encoding: 'utf8', env: { ...process.env, ...offlineEnv(), XDG_CONFIG_HOME: xdg }, timeout: 60_000 },
    );
    expect(bundle.status, bundle.stdout + bundle.stderr).not.toBe(0);
    // refused at the export map, for want of the node condition: not some later bundling error
    expect(bundle.stdout + bundle.stderr).toMatch(/enabling the "node" condition/);
  });

  it("the producer app mounted under the user's prefix, behind the user's own auth", async () => {
    const key = 'tenant-a-key-0123456789';
    const child = spawn(process.execPath, [join(scratch, 'dist', 'mounted.js')], {
      cwd: scratch,
      env: { ...process.env, VALKEY_URL: valkeyUrl, TENANT_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const base = `${await urlOf(child, 'the mounted app')}/api/emq`;
      const q = freshQueue('tenant-a.pkg');
      const post = (queue: string, headers: Record<string, string>) =>
        fetch(`${base}/v1/queues/${queue}/jobs`, { method: 'POST', body: new Uint8Array([0x00, 0xfe]), headers });

      // the user's auth answers first, in its own words; nothing is written
      const refused = await post(q, { 'X-Tenant-Key': 'wrong' });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'not signed in' });
      expect(await admin.footprint(q)).toEqual({});

      // past it, no bearer token is asked for: the caller is the one the user's auth set
      const res = await post(q, { 'X-Tenant-Key': key });
      expect(res.status).toBe(201);
      const { id, verdict } = (await res.json()) as { id: string; verdict: string };
      expect(verdict).toBe('enqueued');
      expect(await admin.call('HGET', jobKey(q, id), 'payload')).toEqual(Buffer.from([0x00, 0xfe]));
      // Location is under the user's prefix, and answers
      const location = res.headers.get('Location')!;
      expect(location).toBe(`/api/emq/v1/queues/${q}/jobs/${id}`);
      const read = await fetch(new URL(location, base), { headers: { 'X-Tenant-Key': key } });
      expect(await read.json()).toEqual({ id, queue: q, state: 'pending', attempts: 0 });

      // the caller's queues still hold: another tenant's queue is 403, nothing written
      const other = freshQueue('tenant-b.pkg');
      const forbidden = await post(other, { 'X-Tenant-Key': key });
      expect(forbidden.status).toBe(403);
      expect(((await forbidden.json()) as { code: string }).code).toBe('forbidden_queue');
      expect(await admin.footprint(other)).toEqual({});
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    }
  });

  it('on Node, the REST connection from the package enqueues through the gateway without fetch (undici)', async () => {
    const q = freshQueue('pkg-rest-node');
    const { stdout } = await run(process.execPath, [join(scratch, 'dist', 'rest-node.js')], {
      cwd: scratch,
      env: { ...process.env, EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer, QUEUE: q },
    });
    const { id, verdict } = JSON.parse(stdout) as { id: string; verdict: string };
    expect(verdict).toBe('enqueued');
    expect(await admin.call('HGET', jobKey(q, id), 'payload')).toEqual(Buffer.from([0x00, 0xfe]));
  });

  it('the typed client, from a Node script, against the packed `emq producer`', async () => {
    const token = 'package-client-token-0123456789';
    const producer: ProducerProcess = await startProducerProcess(
      { VALKEY_URL: valkeyUrl, EMQ_TOKENS: JSON.stringify([{ token, queues: ['*'], rawPrefixes: true }]) },
      emq,
    );
    try {
      const q = freshQueue('pkg-client');
      const { stdout } = await run(process.execPath, [join(scratch, 'dist', 'client.js')], {
        cwd: scratch,
        env: { ...process.env, PRODUCER_URL: producer.url, PRODUCER_TOKEN: token, QUEUE: q },
      });
      const { job, status, batch } = JSON.parse(stdout) as {
        job: { id: string; queue: string; verdict: string };
        status: unknown;
        batch: { id: string; verdict: string }[];
      };
      expect(job).toEqual({ id: job.id, queue: q, verdict: 'enqueued' });
      expect(status).toEqual({ id: job.id, queue: q, state: 'pending', attempts: 0 });
      expect(batch.map((r) => r.verdict)).toEqual(['enqueued', 'scheduled']);
      expect(await admin.call('HGET', jobKey(q, job.id), 'payload')).toEqual(Buffer.from([0x00, 0xff, 0x7b]));
      expect(await admin.call('HGET', jobKey(q, batch[1]!.id), 'payload')).toEqual(Buffer.from('later'));
    } finally {
      expect(await producer.stop()).toBe(0);
    }
  });
});
