// The fuzz of every endpoint (fast-check), against the real parts: the producer Worker in
// workerd (wrangler's unstable_startWorker, over real HTTP), the real gateway process, and a
// real valkey-server private to the test file, which the outage file stops and restarts on
// the same port mid-way.
//
// One test file a surface (producer, gateway, admin, outage), each in its own module scope
// (vitest runs the node project's files one at a time, each with its own module instances):
// every file calls startParts() in its beforeAll and stopParts() in its afterAll, so each has
// its own Valkey, gateway and Worker, model and tallies. What is shared is code: the knobs and
// the configuration below, the model (model.ts), the oracle (oracle.ts), the arbitraries
// (arbitraries.ts, producer-*.ts by endpoint, gateway-cases.ts).
//
// FUZZ_RUNS scales every phase (default 60, about 2,000 cases over the four files, 390 of them
// the control phase's; `npm run fuzz` runs 400, about 13,500); FUZZ_SEED replays a run.
import { expect } from 'vitest';
import '../workers/offline-env.js';
import { startServer, type RunningServer } from '../../scripts/valkey.js';
import { enqueueScript } from '../../shared/scripts.js';
import { connectAdmin, type Admin } from '../support/admin.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway.js';
import { model } from './model.js';

// ---------------------------------------------------------------- knobs

export const RUNS = Math.max(1, Math.floor(Number(process.env.FUZZ_RUNS || 60)));
export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** A test's time budget: 100 ms a case (each is a few ms here), and room to shrink a counterexample. */
export const budget = (cases: number, extra = 0) => 60_000 + extra + cases * 100;
export const params = (numRuns: number) => ({ numRuns: Math.max(1, Math.round(numRuns)), ...(SEED === undefined ? {} : { seed: SEED }) });

export const MAX_PAYLOAD = 64 * 1024; // EMQ_MAX_PAYLOAD_BYTES
export const MAX_BATCH = 256 * 1024; // EMQ_MAX_BATCH_BYTES
export const MAX_ITEMS = 1_000; // the producer's fixed batch limit
export const MAX_DELAY = '30d'; // EMQ_MAX_DELAY (not the default 365d: the fuzz proves it is read)
export const MAX_DELAY_MS = 30 * 86_400_000;
/** EMQ_QUEUE_GROUPS: a queue's default lane, exact or by prefix (the exact entry wins). */
export const QUEUE_GROUPS = { 'fz-a.lane': 'DEF0KHTOWnGLuC', 'fz-a.l*': 'PFX0KHTOWnGLuC' } as const;
export const GW_MAX_BODY = 4 * 1024 * 1024; // EMQ_GATEWAY_MAX_BODY
const GW_PRODUCER_MAX_BODY = 2 * 1024 * 1024; // EMQ_GATEWAY_PRODUCER_MAX_BODY's default
/** The body cap a scope's requests meet. */
export const gwCap = (scope: 'admin' | 'producer') => (scope === 'producer' ? Math.min(GW_PRODUCER_MAX_BODY, GW_MAX_BODY) : GW_MAX_BODY);
export const GW_MAX_PIPELINE = 1_000; // EMQ_GATEWAY_MAX_PIPELINE (a full batch is one pipeline)

export const ALL = 'fuzz-all-token-0123456789abcdef';
export const SOME = 'fuzz-some-token-0123456789abcdef';
/** Tokens with and without `control` (EMQ_TOKENS' `can`; default enqueue and read): the control fuzz's. */
export const CTL = 'fuzz-ctl-token-0123456789abcdef';
export const CTL_SOME = 'fuzz-ctl-some-token-0123456789abcdef';
export const ENQ = 'fuzz-enq-token-0123456789abcdef';
const TOKENS = [
  { token: ALL, queues: ['*'], rawPrefixes: true },
  { token: SOME, queues: ['fz-a.*', 'fz-b'] },
  { token: CTL, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
  { token: CTL_SOME, queues: ['fz-a.*', 'fz-b'], can: ['read', 'control'] },
  { token: ENQ, queues: ['*'], rawPrefixes: true, can: ['enqueue'] },
];
export type Who = 'all' | 'some' | 'ctl' | 'ctlsome' | 'enq';
export type Capability = 'enqueue' | 'read' | 'control';
/** What each token may do (as TOKENS says). */
export const CAN: Record<Who, readonly Capability[]> = {
  all: ['enqueue', 'read'],
  some: ['enqueue', 'read'],
  ctl: ['enqueue', 'read', 'control'],
  ctlsome: ['read', 'control'],
  enq: ['enqueue'],
};
export const TOKEN_OF: Record<Who, string> = { all: ALL, some: SOME, ctl: CTL, ctlsome: CTL_SOME, enq: ENQ };

/** A queue whose pending key is a string: every enqueue to it is refused (409), writing nothing. */
export const WT = 'fz-wt';
export const GQ_WT = 'gq-wt';

export const STD_OLD = Buffer.from('fuzz-standard-old-secret-bytes');
export const STD_NEW = Buffer.from('fuzz-standard-new-secret-bytes');
export const SOURCES = {
  gh: { kind: 'github', secrets: ['gh-old-secret-0123456789', 'gh-new-secret-0123456789'], queue: 'fz-hooks' },
  st: { kind: 'stripe', secrets: ['whsec_st_old-0123456789', 'whsec_st_new-0123456789'], queue: 'fz-hooks', toleranceSeconds: 300 },
  sw: { kind: 'standard', secrets: [`whsec_${STD_OLD.toString('base64')}`, `whsec_${STD_NEW.toString('base64')}`], queue: 'fz-hooks' },
  hx: {
    kind: 'hmac',
    secrets: ['hx-secret-0123456789'],
    queue: 'fz-hooks',
    signatureHeader: 'X-Sig',
    encoding: 'hex',
    signaturePrefix: 'sha256=',
    idHeader: 'X-Delivery',
    eventHeader: 'X-Event',
  },
  hb: {
    kind: 'hmac',
    secrets: ['hb-secret-1-0123456789', 'hb-secret-2-0123456789'],
    queue: 'fz-hooks2',
    signatureHeader: 'X-Sig-B64',
    encoding: 'base64',
    idHeader: 'X-Id',
  },
  wt: { kind: 'github', secrets: ['wt-secret-0123456789'], queue: WT },
} as const;
export type SourceName = keyof typeof SOURCES;
export const SOURCE_NAMES = Object.keys(SOURCES) as SourceName[];
export const TOLERANCE = 300;

// ---------------------------------------------------------------- the parts under test

// Live bindings: the other modules read these as they are now; only this module sets them.
let server: RunningServer;
let valkeyPort: number;
export let admin: Admin;
export let gw: GatewayProcess;
type Worker = Awaited<ReturnType<typeof import('wrangler').unstable_startWorker>>;
let worker: Worker | undefined;
export let producerUrl: string;
/** The same Worker over the gateway's control token (the control and schedule routes need one): startControlWorker. */
let controlWorker: Worker | undefined;
export let controlUrl: string;
let valkeyDown = false;
/** The server's command table (COMMAND LIST), ASCII upper-cased: an admin command not in it is refused (400) unsent. */
export let known = new Set<string>();

const startValkey = (port?: number) => startServer(port === undefined ? {} : { port });

/** The producer Worker in workerd over the gateway, with `restToken` as its EMQ_REST_TOKEN. */
async function startWorker(restToken: string): Promise<Worker> {
  const { unstable_startWorker } = await import('wrangler');
  const started = await unstable_startWorker({
    config: 'wrangler.toml',
    bindings: {
      EMQ_REST_URL: { type: 'plain_text', value: gw.url },
      EMQ_REST_TOKEN: { type: 'secret_text', value: restToken },
      EMQ_TOKENS: { type: 'secret_text', value: JSON.stringify(TOKENS) },
      EMQ_SOURCES: { type: 'secret_text', value: JSON.stringify(SOURCES) },
      EMQ_MAX_PAYLOAD_BYTES: { type: 'plain_text', value: String(MAX_PAYLOAD) },
      EMQ_MAX_BATCH_BYTES: { type: 'plain_text', value: String(MAX_BATCH) },
      EMQ_REST_TIMEOUT_MS: { type: 'plain_text', value: '4000' },
      EMQ_MAX_DELAY: { type: 'plain_text', value: MAX_DELAY },
      EMQ_QUEUE_GROUPS: { type: 'plain_text', value: JSON.stringify(QUEUE_GROUPS) },
    },
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: false, watch: false, logLevel: 'warn' },
  });
  await started.ready;
  return started;
}

/** A second Worker, over the gateway's control token, in front of the same Valkey: the control fuzz's (stopParts stops it). */
export async function startControlWorker() {
  controlWorker = await startWorker(gw.control);
  controlUrl = (await controlWorker.url).origin;
}

// ---------------------------------------------------------------- the seed

export async function seed() {
  await admin.call('SET', `emq:{${WT}}:pending`, 'not a sorted set');
  await admin.call('SET', `emq:{${GQ_WT}}:pending`, 'not a sorted set');
  await admin.call('HSET', 'fuzz:seed:hash', 'a', '1');
  await admin.call('RPUSH', 'fuzz:seed:list', 'x', 'y');
  // a script the server knows, so an EVALSHA of it by a producer token would really run if let through
  await admin.call('SCRIPT', 'LOAD', "redis.call('SET', 'pwned', '1') return 1");
}

// ---------------------------------------------------------------- the keyspace, to see any write

interface Snap {
  dirty: number;
  dbsize: number;
}
/** The keyspace after the last case (runUp compares the next case against it). */
export let last: Snap | undefined;

async function snap(): Promise<Snap> {
  const [info, dbsize] = await Promise.all([admin.text('INFO', 'persistence'), admin.call('DBSIZE')]);
  const dirty = /rdb_changes_since_last_save:(\d+)/.exec(String(info))?.[1];
  if (dirty === undefined) throw new Error(`no rdb_changes_since_last_save in INFO persistence: ${String(info)}`);
  return { dirty: Number(dirty), dbsize: Number(dbsize) };
}
export const same = (a: Snap, b: Snap) => a.dirty === b.dirty && a.dbsize === b.dbsize;
/** Take the keyspace's measure now: the next case compares against it. */
export async function resnap(): Promise<Snap> {
  return (last = await snap());
}

// ---------------------------------------------------------------- starting and stopping

/** A fresh Valkey (seeded), the gateway in front of it and the Worker in front of that; the keyspace detector proven. */
export async function startParts() {
  model.reset();
  server = await startValkey();
  valkeyPort = server.port;
  valkeyDown = false;
  admin = await connectAdmin(server.url);
  known = new Set(((await admin.call('COMMAND', 'LIST')) as Buffer[]).map((n) => n.toString('latin1').toUpperCase()));
  gw = await startGatewayProcess(server.url, {
    EMQ_GATEWAY_MAX_BODY: String(GW_MAX_BODY),
    EMQ_GATEWAY_MAX_PIPELINE: String(GW_MAX_PIPELINE),
    EMQ_GATEWAY_TIMEOUT_MS: '1000',
  });
  worker = await startWorker(gw.producer);
  producerUrl = (await worker.url).origin;
  await seed();
  // the detector detects: a write shows, and so does writing a value over itself; a read
  // and a script's refusal do not
  const a = await snap();
  await admin.call('SET', 'fuzz:probe', 'x');
  const b = await snap();
  await admin.call('SET', 'fuzz:probe', 'x');
  const c = await snap();
  await admin.call('GET', 'fuzz:probe');
  await admin.call('EVAL', enqueueScript.text, '2', 'emq:{q}:job:JOB1', 'emq:{q}:pending', 'JOB2', 'x').catch(() => undefined);
  const d = await snap();
  expect([same(a, b), same(b, c), same(c, d)]).toEqual([false, false, true]);
  last = d;
}

/** Everything startParts started, stopped; the gateway's exit code (0 when it shut down cleanly). */
export async function stopParts(): Promise<number | null | undefined> {
  await controlWorker?.dispose();
  await worker?.dispose();
  admin?.close();
  const code = await gw?.stop();
  await server?.stop();
  return code;
}

/** Valkey stopped: the gateway and the Worker stay up. */
export async function stopValkey() {
  await server.stop();
  valkeyDown = true;
}

/** Valkey started again on the same port (the gateway reconnects by itself): a new, empty server. */
export async function restartValkey() {
  server = await startValkey(valkeyPort);
  valkeyDown = false;
  admin.close();
  admin = await connectAdmin(server.url);
}

// ---------------------------------------------------------------- liveness

export async function alive(where: string) {
  expect(gw.child.exitCode, `${where}: the gateway exited: ${gw.stderr().slice(-2000)}`).toBeNull();
  expect(gw.child.signalCode, `${where}: the gateway was killed`).toBeNull();
  const gh = await fetch(`${gw.url}/healthz`);
  expect(gh.status, `${where}: gateway /healthz`).toBe(200);
  const wh = await fetch(`${producerUrl}/healthz`);
  expect(wh.status, `${where}: Worker /healthz`).toBe(200);
  if (!valkeyDown) {
    const ping = await fetch(`${gw.url}/`, { method: 'POST', body: '["PING"]', headers: { Authorization: `Bearer ${gw.producer}` } });
    expect(await ping.json(), `${where}: PING through the gateway`).toEqual({ result: 'PONG' });
    const ready = await fetch(`${producerUrl}/readyz`);
    expect(ready.status, `${where}: Worker /readyz`).toBe(200);
  }
}

/** Until the admin scope's own connection answers again (/readyz is the producers'). */
export async function adminBack(ms: number) {
  const deadline = Date.now() + ms;
  let status = 0;
  while (Date.now() < deadline) {
    status = await fetch(`${gw.url}/ping`, { headers: { Authorization: `Bearer ${gw.admin}` } }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the admin scope did not answer after ${ms} ms (last ${status})`);
}

export async function waitReady(url: string, ms: number) {
  const deadline = Date.now() + ms;
  let status = 0;
  while (Date.now() < deadline) {
    status = await fetch(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${ms} ms (last ${status})`);
}
