// The producer Worker under bare `workerd serve`: the compiled entry (dist/functions/producer/
// worker.js, built by `npm test`'s pretest step) bundled with esbuild as wrangler bundles it,
// served on a free loopback port with text bindings, its console.log lines (the request log)
// read from its stdout.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/valkey.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const COMPATIBILITY_DATE = '2026-05-03'; // wrangler.toml's

export interface WorkerdProcess {
  url: string;
  /** Every line it wrote to stdout so far. */
  lines(): string[];
  stop(): Promise<void>;
}

const config = (port: number, bindings: Record<string, string>) => `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .producer), (name = "net", network = (allow = ["public", "private", "local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const producer :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  bindings = [
${Object.entries(bindings)
  .map(([name, text]) => `    (name = ${JSON.stringify(name)}, text = ${JSON.stringify(text)}),`)
  .join('\n')}
  ],
  globalOutbound = "net",
);
`;

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => (sock.destroy(), resolve(ok));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });

export async function startWorkerd(bindings: Record<string, string>): Promise<WorkerdProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'emq-workerd-'));
  const bundle = join(dir, 'worker.js');
  const args = ['--bundle', '--format=esm', '--platform=browser', '--conditions=workerd,worker,browser', '--target=es2022', '--log-level=warning'];
  await promisify(execFile)(bin('esbuild'), [join(root, 'dist', 'functions', 'producer', 'worker.js'), ...args, `--outfile=${bundle}`], { timeout: 60_000 });
  const port = await freePort();
  writeFileSync(join(dir, 'config.capnp'), config(port, bindings));
  const child: ChildProcess = spawn(bin('workerd'), ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; !(await accepts(port)); i++) {
    if (child.exitCode !== null || i > 200) throw new Error(`workerd did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    lines: () => out.split('\n').filter(Boolean),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
