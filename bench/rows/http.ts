// HTTP, 64 keep-alive connections posting one ~100-byte JSON job (http-gen.ts): the gateway
// alone, path-style EVALSHA @enqueue with a fresh id per request, and webdis (the peer: the
// same command, path-style, the job as the PUT body, HTTP Basic auth) in front of the same
// Valkey; the producer Worker bundle under bare `workerd serve` → gateway → Valkey; the
// floors of each runtime: a no-op Hono Worker, a Worker making one fetch to a no-op upstream,
// the same no-op app on Node; Hono on Node + BullMQ, the peer; `emq producer` on Node.
// workerd runs bare: one Worker (an ES module bundle) on a loopback port, text bindings, and a
// network service allowing public, private and local addresses as its globalOutbound
// (workerd's default "internet" service refuses private IPs, which the gateway and the tiny
// upstream are).
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { repoRoot } from '../../scripts/repo-root.js';
import { ensureTool, freePort } from '../../scripts/valkey.js';
import { jobKey, pendingKey } from '../../shared/keyspace.js';
import { enqueueScript } from '../../shared/scripts.js';
import { IN_FLIGHT, MEASURE_MS, WARM_MS, fillCpu, logFile, payloadOf, type Bench } from '../common.js';
import { pickTool, runLoad, type LoadSpec } from '../http-gen.js';
import { cpuWindow, spawnServing, type Child, type Proc } from '../procs.js';
import { fmtInt, type Row } from '../report.js';
import { BULL_PREFIX } from './peer.js';
import { startBenchGateway } from './rest.js';

const QUEUE = 'bench';
const BODY = JSON.stringify(payloadOf(0));
/** After the load stops, the requests wrk abandoned mid-flight still finish on the server. */
const SETTLE_MS = 300;
const COMPATIBILITY_DATE = '2026-05-03';
const ROOT = repoRoot();
const BUNDLE = join(ROOT, 'dist', 'worker', 'default', 'worker.js');
const WORKERD = join(ROOT, 'node_modules', '.bin', 'workerd');
const HERE = fileURLToPath(new URL('..', import.meta.url)); // dist/bench/
const SERVERS = join(HERE, 'servers.js');

export const HTTP_ROWS = ['gateway', 'webdis', 'worker', 'noop-worker', 'fetch-worker', 'noop-node', 'hono-bullmq', 'producer'];

/** Where the load generator puts each request's fresh job id (http-gen.ts). */
const ID_SLOT = 'EMQIDSLOT';

/**
 * The path of a path-style EVALSHA @enqueue into QUEUE, as connectRest sends it (every
 * argument percent-encoded, the command lowercase), the id left to the load generator.
 */
function enqueuePath(): string {
  const sample = 'JOB00000000000';
  const args = ['evalsha', enqueueScript.sha1, '2', jobKey(QUEUE, sample).replace(sample, ID_SLOT), pendingKey(QUEUE), ID_SLOT];
  return `/${args.map(encodeURIComponent).join('/')}`;
}

export async function httpRows(bench: Bench): Promise<void> {
  const { server, tmp, valkey } = bench;
  const tool = pickTool();
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const emqTokens = JSON.stringify([{ token, queues: ['*'], rawPrefixes: true }]);
  const bin = join(ROOT, 'bin', 'emq.js');

  if (!HTTP_ROWS.some((k) => bench.runs(k)) || bench.aborting()) return;
  if (!existsSync(BUNDLE)) throw new Error(`no Worker bundle at ${BUNDLE}: run npm run build first`);
  bench.header.push(
    `HTTP load: ${tool === 'wrk' ? `wrk -t2 -c${IN_FLIGHT} (a Lua script counts statuses)` : `node:http in 2 worker_threads, ${IN_FLIGHT} keep-alive connections`}; ` +
      `POST /v1/queues/${QUEUE}/jobs, ${Buffer.byteLength(BODY)}-byte JSON body, Bearer token`,
    `${workerdVersion()} (bare \`workerd serve\`, compatibilityDate ${COMPATIBILITY_DATE}); producer bundle dist/worker/default/worker.js, ${(statSync(BUNDLE).size / 1024).toFixed(1)} KiB`,
  );
  const noopBundle = join(tmp, 'noop-worker.js');
  const fetchBundle = join(tmp, 'fetch-worker.js');
  if (bench.runs('noop-worker')) await bundleWorker(join(HERE, 'workers', 'noop-worker.js'), noopBundle);
  if (bench.runs('fetch-worker')) await bundleWorker(join(HERE, 'workers', 'fetch-worker.js'), fetchBundle);

  /** The producer's request (POST /v1/queues/bench/jobs), or `shape` (the gateway's and webdis's path-style EVALSHA). */
  const spec = (url: string, ms: number, idTag: string, shape?: Partial<LoadSpec>): LoadSpec => ({
    url: `${url}/v1/queues/${QUEUE}/jobs`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: BODY,
    connections: IN_FLIGHT,
    expectStatus: 201,
    ms,
    ...shape,
    ...(shape?.url ? { url: `${url}${shape.url}`, idTag } : {}),
  });
  /** Warm-up, then the measured window with every process's CPU sampled around it; the oks (201s), warm-up included. */
  const http = async (r: Row, url: string, procs: Proc[], withValkey: boolean, shape?: Partial<LoadSpec>): Promise<number> => {
    const warm = await runLoad(tool, spec(url, WARM_MS, '1', shape), tmp);
    if (warm.ok === 0) throw new Error(`warm-up: no ok in ${warm.requests} answers (${warm.errors.join(', ')}; first: ${warm.firstError})`);
    const all = withValkey ? [...procs, ...valkey] : procs;
    const { value: load, cpu } = await cpuWindow(all, () => runLoad(tool, spec(url, MEASURE_MS, '2', shape), tmp));
    r.opsPerSec = load.ok / load.seconds;
    if (load.p50Ms !== undefined) r.p50Ms = load.p50Ms;
    if (load.p99Ms !== undefined) r.p99Ms = load.p99Ms;
    fillCpu(r, cpu, withValkey ? valkey : [], { label: tool === 'wrk' ? 'wrk' : 'node:http', cores: load.cores }, tool === 'wrk' ? (load.cores ?? 0) : 0);
    const errors = [...warm.errors, ...load.errors];
    if (errors.length > 0) r.problems.push(`answers other than ok: ${errors.join(', ')} (first: ${load.firstError ?? warm.firstError})`);
    return warm.ok + load.ok;
  };
  /** The jobs the row's 201s should have left in Valkey, against what is there. */
  const check = async (r: Row, created: number, what: string, count: () => Promise<number>) => {
    await new Promise((res) => setTimeout(res, SETTLE_MS));
    const held = await count();
    // wrk abandons up to one request per connection when each run's time is up; the server
    // still finishes them, so Valkey may hold up to 2 x 64 more than wrk counted
    const slack = tool === 'wrk' ? 2 * IN_FLIGHT : 0;
    if (held >= created && held - created <= slack) {
      r.notes.push(
        `checked: ${what} holds ${fmtInt(held)} jobs; oks counted ${fmtInt(created)} (warm-up included)${held > created ? `, ${held - created} answered after wrk stopped` : ''}`,
      );
    } else {
      r.problems.push(`${what} holds ${fmtInt(held)}, ${fmtInt(created)} answered ok`);
    }
  };
  const pending = () => server.pending(QUEUE);
  const serving = async (r: Row, cleanup: Array<() => Promise<void>>, label: string, args: string[], env: Record<string, string> = {}) => {
    const child = await spawnServing(label, args, { env, stdoutFile: logFile(tmp, label) });
    cleanup.push(bench.stopAtEnd(r, child));
    return child;
  };
  const workerd = async (r: Row, cleanup: Array<() => Promise<void>>, label: string, bundle: string, bindings: Record<string, string>) => {
    const wd = await startWorkerd(label, bundle, tmp, bindings);
    cleanup.push(bench.stopAtEnd(r, wd, false));
    return wd;
  };

  /** webdis (the distribution's package, installed when missing) in front of the bench's Valkey: EVALSHA only, behind HTTP Basic auth. */
  const startWebdis = async (r: Row, cleanup: Array<() => Promise<void>>) => {
    const binary = ensureTool('webdis');
    if (!binary) throw new Error('no webdis, and it cannot be installed here (Debian and Ubuntu have it: apt-get install webdis)');
    const { host, port: redisPort, db, password } = server.endpoint;
    if (password !== undefined) throw new Error('the webdis row needs a Valkey without a password');
    const dir = join(tmp, 'webdis');
    mkdirSync(dir, { recursive: true });
    const secret = randomBytes(16).toString('hex');
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      // the package's own settings (/etc/webdis/webdis.json: 2 threads), in the foreground, logging errors only
      const config = {
        redis_host: host,
        redis_port: redisPort,
        http_host: '127.0.0.1',
        http_port: port,
        threads: 2,
        daemonize: false,
        database: db,
        acl: [{ disabled: ['*'] }, { http_basic_auth: `emq:${secret}`, enabled: ['EVALSHA'] }],
        verbosity: 0,
        logfile: join(dir, 'webdis.log'),
      };
      writeFileSync(join(dir, 'webdis.json'), JSON.stringify(config));
      try {
        const child = await spawnServing('webdis', [join(dir, 'webdis.json')], { command: binary, cwd: dir, ready: () => canConnect(port) });
        cleanup.push(bench.stopAtEnd(r, child, false));
        return { ...child, url: `http://127.0.0.1:${port}`, basic: Buffer.from(`emq:${secret}`).toString('base64'), about: `${webdisVersion()}, 2 threads` };
      } catch (err) {
        if (attempt < 2 && /Address already in use|EADDRINUSE/i.test((err as Error).message)) continue;
        throw err;
      }
    }
  };

  // the same path-style EVALSHA @enqueue, a fresh id per request, the job as the body: the
  // gateway (POST, Bearer producer token) against webdis (PUT, HTTP Basic auth)
  const evalsha = { url: enqueuePath(), idSlot: ID_SLOT, expectStatus: 200 };
  await bench.row('gateway', async (r, cleanup) => {
    const gw = await startBenchGateway(bench, r, cleanup);
    const shape = { ...evalsha, method: 'POST' as const, headers: { Authorization: `Bearer ${gw.producer}` }, expectBody: '{"result":1}' };
    const created = await http(r, gw.url, [{ label: 'gateway', pid: gw.pid }], true, shape);
    await check(r, created, 'the pending set', pending);
    r.notes.push(`POST ${enqueuePath().replaceAll(ID_SLOT, '<id>')} with the job as the body; ok = 200 {"result":1}`);
  });
  await bench.row('webdis', async (r, cleanup) => {
    const wd = await startWebdis(r, cleanup);
    const shape = { ...evalsha, method: 'PUT' as const, headers: { Authorization: `Basic ${wd.basic}` }, expectBody: '{"evalsha":1}' };
    const created = await http(r, wd.url, [{ label: 'webdis', pid: wd.pid }], true, shape);
    await check(r, created, 'the pending set', pending);
    r.notes.push(`PUT ${enqueuePath().replaceAll(ID_SLOT, '<id>')} with the job as the body; ok = 200 {"evalsha":1}; ${wd.about}`);
  });

  await bench.row('worker', async (r, cleanup) => {
    const gw = await startBenchGateway(bench, r, cleanup);
    const bindings = { EMQ_REST_URL: gw.url, EMQ_REST_TOKEN: gw.producer, EMQ_TOKENS: emqTokens, EMQ_MAX_PAYLOAD_BYTES: '1048576' };
    const wd = await workerd(r, cleanup, 'producer', BUNDLE, bindings);
    const created = await http(
      r,
      wd.url,
      [
        { label: 'workerd', pid: wd.pid },
        { label: 'gateway', pid: gw.pid },
      ],
      true,
    );
    await check(r, created, 'the pending set', pending);
  });
  await bench.row('noop-worker', async (r, cleanup) => {
    const wd = await workerd(r, cleanup, 'noop', noopBundle, {});
    await http(r, wd.url, [{ label: 'workerd', pid: wd.pid }], false);
  });
  await bench.row('fetch-worker', async (r, cleanup) => {
    const tiny = await serving(r, cleanup, 'tiny upstream', [SERVERS, 'tiny']);
    const wd = await workerd(r, cleanup, 'fetch', fetchBundle, { UPSTREAM_URL: `${tiny.url}/`, UPSTREAM_TOKEN: token });
    await http(
      r,
      wd.url,
      [
        { label: 'workerd', pid: wd.pid },
        { label: 'upstream', pid: tiny.pid },
      ],
      false,
    );
  });
  await bench.row('noop-node', async (r, cleanup) => {
    const noop = await serving(r, cleanup, 'no-op Hono (Node)', [SERVERS, 'noop']);
    await http(r, noop.url, [{ label: 'node', pid: noop.pid }], false);
  });
  await bench.row('hono-bullmq', async (r, cleanup) => {
    const bull = await serving(r, cleanup, 'Hono+BullMQ', [SERVERS, 'bullmq'], { VALKEY_URL: server.url, BENCH_TOKEN: token });
    const created = await http(r, bull.url, [{ label: 'node', pid: bull.pid }], true);
    await check(r, created, 'the BullMQ wait list', async () => Number(await server.call('LLEN', `${BULL_PREFIX}:${QUEUE}:wait`)));
  });
  await bench.row('producer', async (r, cleanup) => {
    const env = { VALKEY_URL: server.url, PORT: '0', HOST: '127.0.0.1', EMQ_TOKENS: emqTokens };
    const producer = await serving(r, cleanup, 'emq producer', [bin, 'producer'], env);
    const created = await http(r, producer.url, [{ label: 'node', pid: producer.pid }], true);
    await check(r, created, 'the pending set', pending);
  });
}

/** The package's version (webdis prints none of its own). */
function webdisVersion(): string {
  try {
    const format = '$' + '{Version}'; // dpkg-query's field, not a template placeholder
    return `webdis ${execFileSync('dpkg-query', ['-W', '-f', format, 'webdis'], { encoding: 'utf8', timeout: 10_000 }).trim()}`;
  } catch {
    return 'webdis ?';
  }
}

function workerdVersion(): string {
  try {
    return execFileSync(WORKERD, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return 'workerd ?';
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => (sock.destroy(), resolve(ok));
    sock.setTimeout(500, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

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

/** `workerd serve` of `bundle` on a free port (config and a copy of the bundle in <dir>/<label>/), once it accepts connections. */
async function startWorkerd(label: string, bundle: string, scratch: string, bindings: Record<string, string>): Promise<Child> {
  const dir = join(scratch, label.replace(/[^a-z0-9-]+/gi, '-'));
  mkdirSync(dir, { recursive: true });
  copyFileSync(bundle, join(dir, 'worker.js'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, 'config.capnp'), capnpConfig(port, bindings));
    try {
      const wd = await spawnServing(`workerd (${label})`, ['serve', join(dir, 'config.capnp')], {
        command: WORKERD,
        cwd: dir,
        ready: () => canConnect(port),
        stdoutFile: join(dir, 'stdout.log'),
      });
      return { ...wd, url: `http://127.0.0.1:${port}` };
    } catch (err) {
      if (attempt < 2 && /Address already in use|EADDRINUSE/i.test((err as Error).message)) continue;
      throw err;
    }
  }
}

/**
 * Bundles a compiled Worker entry (dist/bench/workers/*.js, which imports hono) into one ES
 * module with esbuild, the bundler wrangler uses, with the conditions wrangler sets; minified
 * as wrangler.toml asks for the producer.
 */
async function bundleWorker(entry: string, out: string): Promise<void> {
  const esbuild = join(ROOT, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild)) throw new Error(`no esbuild at ${esbuild} (it comes with wrangler)`);
  const args = [
    entry,
    '--bundle',
    '--format=esm',
    '--platform=browser',
    '--conditions=workerd,worker,browser',
    '--target=es2022',
    '--minify',
    `--outfile=${out}`,
    '--log-level=warning',
  ];
  await promisify(execFile)(esbuild, args, { timeout: 60_000 });
}
