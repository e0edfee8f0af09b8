// Bare `workerd serve` of one Worker bundle on a loopback port, text bindings, its outbound
// allowed to local addresses (the default refuses the gateway's); and the bundling of workers/*.ts.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../scripts/repo-root.js';
import { type Child, onFreePort, outputOf, spawnServing } from './procs.js';

export const COMPATIBILITY_DATE = '2026-05-03';
const ROOT = repoRoot();
const WORKERD = join(ROOT, 'node_modules', '.bin', 'workerd');

export const workerdVersion = () => outputOf(WORKERD, ['--version']) ?? 'workerd ?';

function capnpConfig(port: number, bindings: Record<string, string>): string {
  const list = Object.entries(bindings).map(([name, text]) => `    (name = ${JSON.stringify(name)}, text = ${JSON.stringify(text)}),`); // capnp text accepts JSON's escapes
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

/** `workerd serve` of `bundle` on a free port (config, a copy of the bundle and its stdout in <scratch>/<label>/), once it accepts connections. */
export async function startWorkerd(label: string, bundle: string, scratch: string, bindings: Record<string, string>): Promise<Child> {
  const dir = join(scratch, label.replace(/[^a-z0-9-]+/gi, '-'));
  mkdirSync(dir, { recursive: true });
  copyFileSync(bundle, join(dir, 'worker.js'));
  return onFreePort((port) => {
    writeFileSync(join(dir, 'config.capnp'), capnpConfig(port, bindings));
    return spawnServing(`workerd (${label})`, ['serve', join(dir, 'config.capnp')], { command: WORKERD, cwd: dir, port, stdoutFile: join(dir, 'stdout.log') });
  });
}

/**
 * Bundles a compiled Worker entry (dist/bench/workers/*.js, which imports hono) into one ES
 * module with esbuild, the bundler wrangler uses, with the conditions wrangler sets; minified
 * as wrangler.toml asks for the producer.
 */
export async function bundleWorker(entry: string, out: string): Promise<void> {
  const esbuild = join(ROOT, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild)) throw new Error(`no esbuild at ${esbuild} (it comes with wrangler)`);
  const args = ['--bundle', '--format=esm', '--platform=browser', '--conditions=workerd,worker,browser', '--target=es2022', '--minify'];
  await promisify(execFile)(esbuild, [entry, ...args, `--outfile=${out}`, '--log-level=warning'], { timeout: 60_000 });
}
