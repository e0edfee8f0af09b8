// Bare `workerd serve` for http-enqueue.ts: one Worker (an ES module bundle) on a loopback
// port, text bindings, and a network service allowing public, private and local addresses
// as its globalOutbound (workerd's default "internet" service refuses private IPs, which
// the gateway and the tiny upstream are). Each workerd runs in its own process group and
// is killed with it; any still running when this process exits is SIGKILLed.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { killGroup } from './children.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // from dist/bench/
const STARTUP_MS = 15_000;
const GRACE_MS = 3_000;

export const WORKERD = join(ROOT, 'node_modules', '.bin', 'workerd');
export const COMPATIBILITY_DATE = '2026-05-03';

export interface WorkerdSpec {
  label: string;
  /** The bundle: an ES module with a default export holding fetch. */
  bundle: string;
  bindings: Record<string, string>;
  /** Scratch directory; the config and a copy of the bundle go in <dir>/<label>/. */
  dir: string;
}

export interface WorkerdChild {
  label: string;
  url: string;
  pid: number;
  stderr(): string;
  stop(): Promise<number | null>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});

/** SIGTERM to every workerd still running (SIGKILL after a grace period), exits awaited. */
export async function stopAllWorkerd(): Promise<void> {
  await Promise.all([...live].map(async (child) => {
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), GRACE_MS);
    await exited;
    clearTimeout(timer);
  }));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.setTimeout(500, () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

const capnpString = (s: string) => JSON.stringify(s); // capnp text accepts JSON's escapes

export function capnpConfig(port: number, bindings: Record<string, string>): string {
  const list = Object.entries(bindings).map(([name, text]) => `    (name = ${capnpString(name)}, text = ${capnpString(text)}),`);
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .bench),
    (name = "net", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const bench :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  bindings = [
${list.join('\n')}
  ],
  globalOutbound = "net",
);
`;
}

/** Starts `workerd serve` on a free port and waits until it accepts connections. */
export async function startWorkerd(spec: WorkerdSpec): Promise<WorkerdChild> {
  const dir = join(spec.dir, spec.label.replace(/[^a-z0-9-]+/gi, '-'));
  mkdirSync(dir, { recursive: true });
  copyFileSync(spec.bundle, join(dir, 'worker.js'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, 'config.capnp'), capnpConfig(port, spec.bindings));
    const child = spawn(WORKERD, ['serve', join(dir, 'config.capnp')], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, cwd: dir });
    live.add(child);
    let err = '';
    const keep = (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        live.delete(child);
        resolve(code);
      }),
    );
    child.once('error', (e) => (err += `spawn: ${e.message}`));
    const deadline = Date.now() + STARTUP_MS;
    let ready = false;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (await canConnect(port)) {
        ready = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!ready) {
      killGroup(child, 'SIGKILL');
      await exited;
      if (attempt < 2 && /Address already in use|EADDRINUSE/i.test(err)) continue;
      throw new Error(`workerd (${spec.label}) did not start: ${err.trim().slice(-1000)}`);
    }
    let stopping: Promise<number | null> | undefined;
    return {
      label: spec.label,
      url: `http://127.0.0.1:${port}`,
      pid: child.pid!,
      stderr: () => err,
      stop: () =>
        (stopping ??= (async () => {
          killGroup(child, 'SIGTERM');
          const timer = setTimeout(() => killGroup(child, 'SIGKILL'), GRACE_MS);
          const code = await exited;
          clearTimeout(timer);
          return code;
        })()),
    };
  }
}

/**
 * Bundles a compiled Worker entry (dist/bench/workers/*.js, which imports hono) into one ES
 * module with esbuild, the bundler wrangler uses, with the conditions wrangler sets; minified
 * as wrangler.toml asks for the producer.
 */
export async function bundleWorker(entry: string, out: string): Promise<void> {
  const esbuild = join(ROOT, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild)) throw new Error(`no esbuild at ${esbuild} (it comes with wrangler)`);
  await promisify(execFile)(esbuild, [
    entry, '--bundle', '--format=esm', '--platform=browser', '--conditions=workerd,worker,browser',
    '--target=es2022', '--minify', `--outfile=${out}`, '--log-level=warning',
  ], { timeout: 60_000 });
}
