// HTTP, 64 keep-alive connections (http-gen.ts): the gateway, path-style EVALSHA @enqueue with a
// fresh id per request, against webdis (the same command as a PUT); the producer Worker under
// bare `workerd serve` → gateway; the floors (a no-op Hono Worker, a Worker making one fetch,
// the no-op app on Node); Hono + BullMQ on Node, the peer; `emq producer` on Node.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../../scripts/repo-root.js';
import { ensureTool } from '../../scripts/valkey.js';
import type { ValkeyEndpoint } from '../../shared/connections/valkey-url.js';
import { jobKey, pendingKey } from '../../shared/keyspace.js';
import { enqueueScript } from '../../shared/scripts.js';
import { IN_FLIGHT, MEASURE_MS, WARM_MS, fillCpu, logFile, payloadOf, type Bench } from '../common.js';
import { runLoad, wrkPath, type LoadSpec } from '../http-gen.js';
import { HTTP_ROWS } from '../plan.js';
import { cpuWindow, onFreePort, outputOf, spawnServing, type Child, type Proc } from '../procs.js';
import { fmtInt, type Row } from '../report.js';
import { COMPATIBILITY_DATE, bundleWorker, startWorkerd, workerdVersion } from '../workerd.js';
import { BULL_PREFIX } from './peer.js';
import { startBenchGateway } from './rest.js';

const QUEUE = 'bench';
const BODY = JSON.stringify(payloadOf(0));
const SETTLE_MS = 300; // for the requests wrk abandoned mid-flight to finish
const ROOT = repoRoot();
const BUNDLE = join(ROOT, 'dist', 'worker', 'default', 'worker.js');
const HERE = fileURLToPath(new URL('..', import.meta.url)); // dist/bench/
const SERVERS = join(HERE, 'servers.js');
const ID_SLOT = 'EMQIDSLOT'; // each request's fresh job id goes here (http-gen.ts)
/** A path-style EVALSHA @enqueue into QUEUE, as connectRest sends it. */
const ENQUEUE_PATH = `/${['evalsha', enqueueScript.sha1, '2', jobKey(QUEUE, 'JOB00000000000').replace('JOB00000000000', ID_SLOT), pendingKey(QUEUE), ID_SLOT].map(encodeURIComponent).join('/')}`;

const proc = (label: string, child: Pick<Child, 'pid'>): Proc => ({ label, pid: child.pid });

export async function httpRows(bench: Bench): Promise<void> {
  const { server, tmp, valkey } = bench;
  if (!HTTP_ROWS.some((k) => bench.runs(k)) || bench.aborting()) return;
  if (!existsSync(BUNDLE)) throw new Error(`no Worker bundle at ${BUNDLE}: run npm run build first`);
  wrkPath(); // installed now when missing, before a row starts its servers
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const emqTokens = JSON.stringify([{ token, queues: ['*'], rawPrefixes: true }]);
  bench.header.push(
    `HTTP load: wrk -t2 -c${IN_FLIGHT} (a Lua script counts statuses); ` +
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
    const warm = await runLoad(spec(url, WARM_MS, '1', shape), tmp);
    if (warm.ok === 0) throw new Error(`warm-up: no ok in ${warm.requests} answers (${warm.errors.join(', ')}; first: ${warm.firstError})`);
    const all = withValkey ? [...procs, ...valkey] : procs;
    const { value: load, cpu } = await cpuWindow(all, () => runLoad(spec(url, MEASURE_MS, '2', shape), tmp));
    r.opsPerSec = load.ok / load.seconds;
    if (load.p50Ms !== undefined) r.p50Ms = load.p50Ms;
    if (load.p99Ms !== undefined) r.p99Ms = load.p99Ms;
    fillCpu(r, cpu, withValkey ? valkey : [], { label: 'wrk', cores: load.cores }, load.cores ?? 0);
    const errors = [...warm.errors, ...load.errors];
    if (errors.length > 0) r.problems.push(`answers other than ok: ${errors.join(', ')} (first: ${load.firstError ?? warm.firstError})`);
    return warm.ok + load.ok;
  };
  /** The jobs the row's 201s should have left in Valkey, against what is there. */
  const check = async (r: Row, created: number, what: string, count: () => Promise<number> = () => server.pending(QUEUE)) => {
    await new Promise((res) => setTimeout(res, SETTLE_MS));
    const held = await count();
    // wrk abandons up to a request per connection at the end of each run, which the server finishes
    if (held >= created && held - created <= 2 * IN_FLIGHT) {
      r.notes.push(
        `checked: ${what} holds ${fmtInt(held)} jobs; oks counted ${fmtInt(created)} (warm-up included)${held > created ? `, ${held - created} answered after wrk stopped` : ''}`,
      );
    } else {
      r.problems.push(`${what} holds ${fmtInt(held)}, ${fmtInt(created)} answered ok`);
    }
  };
  /** A Node server of ours for the row, logging to a file, stopped (its exit checked) at the end. */
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

  // the same path-style EVALSHA @enqueue, a fresh id per request, the job as the body: the
  // gateway (POST, Bearer producer token) against webdis (PUT, HTTP Basic auth)
  const evalsha = { url: ENQUEUE_PATH, idSlot: ID_SLOT, expectStatus: 200 };
  const shown = ENQUEUE_PATH.replaceAll(ID_SLOT, '<id>');
  await bench.row('gateway', async (r, cleanup) => {
    const gw = await startBenchGateway(bench, r, cleanup);
    const shape = { ...evalsha, method: 'POST' as const, headers: { Authorization: `Bearer ${gw.producer}` }, expectBody: '{"result":1}' };
    await check(r, await http(r, gw.url, [proc('gateway', gw)], true, shape), 'the pending set');
    r.notes.push(`POST ${shown} with the job as the body; ok = 200 {"result":1}`);
  });
  await bench.row('webdis', async (r, cleanup) => {
    const wd = await startWebdis(server.endpoint, tmp);
    cleanup.push(bench.stopAtEnd(r, wd, false));
    const shape = { ...evalsha, method: 'PUT' as const, headers: { Authorization: `Basic ${wd.basic}` }, expectBody: '{"evalsha":1}' };
    await check(r, await http(r, wd.url, [proc('webdis', wd)], true, shape), 'the pending set');
    r.notes.push(`PUT ${shown} with the job as the body; ok = 200 {"evalsha":1}; ${wd.about}`);
  });

  await bench.row('worker', async (r, cleanup) => {
    const gw = await startBenchGateway(bench, r, cleanup);
    const bindings = { EMQ_REST_URL: gw.url, EMQ_REST_TOKEN: gw.producer, EMQ_TOKENS: emqTokens, EMQ_MAX_PAYLOAD_BYTES: '1048576' };
    const wd = await workerd(r, cleanup, 'producer', BUNDLE, bindings);
    await check(r, await http(r, wd.url, [proc('workerd', wd), proc('gateway', gw)], true), 'the pending set');
  });
  await bench.row('noop-worker', async (r, cleanup) => {
    const wd = await workerd(r, cleanup, 'noop', noopBundle, {});
    await http(r, wd.url, [proc('workerd', wd)], false);
  });
  await bench.row('fetch-worker', async (r, cleanup) => {
    const tiny = await serving(r, cleanup, 'tiny upstream', [SERVERS, 'tiny']);
    const wd = await workerd(r, cleanup, 'fetch', fetchBundle, { UPSTREAM_URL: `${tiny.url}/`, UPSTREAM_TOKEN: token });
    await http(r, wd.url, [proc('workerd', wd), proc('upstream', tiny)], false);
  });
  await bench.row('noop-node', async (r, cleanup) => {
    const noop = await serving(r, cleanup, 'no-op Hono (Node)', [SERVERS, 'noop']);
    await http(r, noop.url, [proc('node', noop)], false);
  });
  await bench.row('hono-bullmq', async (r, cleanup) => {
    const bull = await serving(r, cleanup, 'Hono+BullMQ', [SERVERS, 'bullmq'], { VALKEY_URL: server.url, BENCH_TOKEN: token });
    const created = await http(r, bull.url, [proc('node', bull)], true);
    await check(r, created, 'the BullMQ wait list', async () => Number(await server.call('LLEN', `${BULL_PREFIX}:${QUEUE}:wait`)));
  });
  await bench.row('producer', async (r, cleanup) => {
    const env = { VALKEY_URL: server.url, PORT: '0', HOST: '127.0.0.1', EMQ_TOKENS: emqTokens };
    const producer = await serving(r, cleanup, 'emq producer', [join(ROOT, 'bin', 'emq.js'), 'producer'], env);
    await check(r, await http(r, producer.url, [proc('node', producer)], true), 'the pending set');
  });
}

/** webdis, the gateway's HTTP peer (the distribution's package, 2 threads): EVALSHA only, behind HTTP Basic auth. */
type Webdis = Child & { basic: string; about: string }; // basic: the Authorization: Basic credentials

async function startWebdis({ host, port: redisPort, db }: ValkeyEndpoint, scratch: string): Promise<Webdis> {
  const binary = ensureTool('webdis');
  if (!binary) throw new Error('no webdis, and it cannot be installed here (Debian and Ubuntu have it: apt-get install webdis)');
  const dir = join(scratch, 'webdis');
  mkdirSync(dir, { recursive: true });
  const secret = randomBytes(16).toString('hex');
  const acl = [{ disabled: ['*'] }, { http_basic_auth: `emq:${secret}`, enabled: ['EVALSHA'] }];
  const child = await onFreePort((port) => {
    const config = { redis_host: host, redis_port: redisPort, http_host: '127.0.0.1', http_port: port, threads: 2, daemonize: false, database: db, acl };
    writeFileSync(join(dir, 'webdis.json'), JSON.stringify({ ...config, verbosity: 0, logfile: join(dir, 'webdis.log') }));
    return spawnServing('webdis', [join(dir, 'webdis.json')], { command: binary, cwd: dir, port, stdoutFile: join(dir, 'stdout.log') });
  });
  // dpkg-query's field, not a template placeholder (webdis prints no version of its own)
  const version = outputOf('dpkg-query', ['-W', '-f', '$' + '{Version}', 'webdis']) ?? '?';
  return { ...child, basic: Buffer.from(`emq:${secret}`).toString('base64'), about: `webdis ${version}, 2 threads` };
}
