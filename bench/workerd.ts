// Bare `workerd serve`: one Worker (an ES module bundle) on a loopback port, text bindings,
// and a network service allowing public, private and local addresses as its globalOutbound
// (workerd's default "internet" service refuses private IPs, which the gateway and the tiny
// upstream are). Started and stopped through children.ts like every other process.
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnWaiting, type Child } from './children.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // from dist/bench/

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

export function workerdVersion(): string {
  try {
    return execFileSync(WORKERD, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return 'workerd ?';
  }
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
export async function startWorkerd(spec: WorkerdSpec): Promise<Child> {
  const dir = join(spec.dir, spec.label.replace(/[^a-z0-9-]+/gi, '-'));
  mkdirSync(dir, { recursive: true });
  copyFileSync(spec.bundle, join(dir, 'worker.js'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, 'config.capnp'), capnpConfig(port, spec.bindings));
    const started = await spawnWaiting(`workerd (${spec.label})`, WORKERD, ['serve', join(dir, 'config.capnp')], {
      cwd: dir,
      ready: () => canConnect(port),
    });
    if (started.ready) return { ...started.tracked, url: `http://127.0.0.1:${port}` };
    const why = started.tracked.output();
    if (attempt < 2 && /Address already in use|EADDRINUSE/i.test(why)) continue;
    throw new Error(`workerd (${spec.label}) did not start: ${why.trim().slice(-1000)}`);
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
