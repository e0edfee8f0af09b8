// `npm start`: everything a producer needs, locally, until Ctrl-C or SIGTERM:
//   a private Valkey (or VALKEY_URL's), the REST gateway in front of it, and the producer
//   Worker under `wrangler dev` on 127.0.0.1:$PORT (default 8787), with a dev token
//   ($EMQ_DEV_TOKEN, or a fresh one) allowed every queue. Every other EMQ_* variable
//   reaches the Worker as a var. On a signal it stops all of it, workerd included.
//   wrangler dev runs with --test-scheduled: GET /__scheduled?cron=<expression> fires the
//   Worker's `scheduled` handler, so EMQ_CRONS' schedules can be fired by hand.
//   The console (functions/console/) on 127.0.0.1:$EMQ_CONSOLE_PORT (default 8786), over the Worker.
// The whole configuration (dev-config.ts) is checked before anything starts.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectGlide } from '../shared/connections/glide.js';
import { redactUrl } from '../shared/connections/valkey-url.js';
import { enqueueScript } from '../shared/scripts.js';
import { command } from '../functions/gateway/glide-commands.js';
import { startGateway, type RunningGateway } from '../functions/gateway/server.js';
import { startConsole, type RunningConsole } from '../functions/console/node.js';
import { startServer, type RunningServer } from './valkey.js';
import { offlineEnv } from './offline-env.js';
import { devConfigFrom, type DevConfig } from './dev-config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let config: DevConfig;
try {
  config = devConfigFrom(process.env);
} catch (err) {
  process.stderr.write(`npm start: ${(err as Error).message}\n`);
  process.exit(1);
}
const { port, devToken, valkeyUrl: external } = config;

let server: RunningServer | undefined;
let gateway: RunningGateway | undefined;
let consoleServer: RunningConsole | undefined;
let worker: ChildProcess | undefined;
let secretsFile: string | undefined;
let stopping: Promise<void> | undefined;

function log(line: string) {
  process.stdout.write(`${line}\n`);
}

/** Stops what was started, newest first; the Worker's whole process group (wrangler and workerd). */
function stop(why: string): Promise<void> {
  stopping ??= (async () => {
    log(`${why}: stopping`);
    if (worker?.pid && worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((r) => worker!.once('exit', r));
      try {
        process.kill(-worker.pid, 'SIGTERM');
      } catch {}
      const force = setTimeout(() => {
        try {
          process.kill(-worker!.pid!, 'SIGKILL');
        } catch {}
      }, 5_000);
      await exited;
      clearTimeout(force);
      try {
        process.kill(-worker.pid, 'SIGKILL'); // workerd, if wrangler left it behind
      } catch {}
    }
    await consoleServer?.stop();
    if (secretsFile) rmSync(secretsFile, { force: true });
    await gateway?.stop();
    await server?.stop();
  })();
  return stopping;
}

process.on('SIGINT', () => void stop('SIGINT').then(() => process.exit(0)));
process.on('SIGTERM', () => void stop('SIGTERM').then(() => process.exit(0)));
// npm does not pass SIGTERM on to the script it runs: when npm goes, this process is
// re-parented, and that is the cue to stop everything rather than run on as an orphan.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop('parent process gone').then(() => process.exit(0));
}, 250).unref();

/** A value as dotenv reads it back unchanged: quoted with a quote it does not hold. */
function dotenvQuoted(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`${name} holds a line break; an env file cannot carry it`);
  for (const q of ["'", '`']) if (!value.includes(q)) return `${q}${value}${q}`;
  throw new Error(`${name} holds both ' and \`; an env file cannot carry it`);
}

async function startWorker(restUrl: string): Promise<string> {
  const offline = offlineEnv();
  mkdirSync(offline.XDG_CONFIG_HOME!, { recursive: true });
  // every variable, secret or not (EMQ_SOURCES, EMQ_REST_TOKEN_<REGION>… hold secrets too),
  // goes through a private env file, never the command line, where ps would show it
  const all = config.workerVars(restUrl);
  secretsFile = join(root, '.cache', `dev-${process.pid}.env`);
  writeFileSync(
    secretsFile,
    `${Object.entries(all)
      .map(([k, v]) => `${k}=${dotenvQuoted(k, v)}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
  const args = [
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--test-scheduled',
    '--show-interactive-dev-session=false',
    '--log-level',
    'warn',
    '--env-file',
    secretsFile,
  ];
  worker = spawn(join(root, 'node_modules', '.bin', 'wrangler'), args, {
    cwd: root,
    detached: true, // its own process group, so stopping reaches workerd too
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...offline },
  });
  let output = '';
  worker.stdout!.on('data', (d) => (output += d));
  worker.stderr!.on('data', (d) => (output += d));
  worker.once('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`wrangler dev exited (${code}):\n${output.slice(-2000)}\n`);
      void stop('wrangler dev exited').then(() => process.exit(1));
    }
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return url;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`wrangler dev did not answer on ${url} within 60 s:\n${output.slice(-2000)}`);
}

try {
  if (!external) server = await startServer();
  const valkeyUrl = external || server!.url;
  gateway = await startGateway({ ...config.gatewayEnv, VALKEY_URL: valkeyUrl });
  // so raw EVALSHA examples work at once (producers fall back to EVAL by themselves)
  const loader = await connectGlide(valkeyUrl);
  await command(loader.wire, ['SCRIPT', 'LOAD', enqueueScript.text]);
  await loader.close();
  const url = await startWorker(gateway.url);
  consoleServer = await startConsole({ ...process.env, EMQ_CONSOLE_PRODUCER_URL: url });
  log(
    [
      `Producer: ${url}  (the Worker, under wrangler dev)`,
      `Console:  ${consoleServer.url}  (sign in with the token)`,
      `Token:    ${devToken}${config.devTokenGiven ? ' (EMQ_DEV_TOKEN)' : ''}  (every queue)`,
      `Gateway:  ${gateway.url}`,
      `Valkey:   ${redactUrl(valkeyUrl)}${server ? ` (${server.name}, private, unpersisted)` : ' (VALKEY_URL)'}`,
      '',
      'Try it:',
      `  curl -H 'Authorization: Bearer ${devToken}' --data-binary 'hello' ${url}/v1/queues/demo/jobs`,
      ...config.crons.map(
        (cron) => `  curl '${url}/__scheduled?cron=${encodeURIComponent(cron).replace(/%20/g, '+')}'   # fires EMQ_CRONS' schedules on ${cron}`,
      ),
      '',
      'Ctrl-C stops everything this started.',
    ].join('\n'),
  );
} catch (err) {
  process.stderr.write(`npm start: ${(err as Error).message}\n`);
  await stop('failed to start');
  process.exit(1);
}
