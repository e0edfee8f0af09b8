// The HTTP load generator of the HTTP rows: one fixed POST or PUT (same headers and body every
// time), `connections` keep-alive connections in a closed loop for `ms`.
//   wrk  (preferred: on PATH, or installed from the distribution's packages): C, 2 threads;
//        a Lua script counts the answers by status and prints the latency percentiles; its
//        CPU is read from the reaping shell's cutime/cstime, so it is exact.
//   node (fallback, or BENCH_LOAD=node): node:http in 2 worker_threads, each with its own
//        keep-alive Agent and half the connections; its CPU is this process's.
// Only `expectStatus` counts as ok (and, given `expectBody`, only with that exact body);
// anything else is counted by status and the first kept. Given `idSlot`, every occurrence of
// it in the URL is replaced by a fresh job id per request (JOB0 + `idTag` + the thread's
// digit + a counter in base62): each request enqueues a new job, as the HTTP producers do.
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ensureTool, which } from '../scripts/valkey.js';
import { quantile } from './common.js';
import { runTool } from './procs.js';

export interface LoadSpec {
  url: string;
  /** Default POST. */
  method?: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
  connections: number;
  ms: number;
  expectStatus: number;
  /** The exact body an ok answer carries, when the status alone does not tell (a duplicate is 200 too). */
  expectBody?: string;
  /** A token in `url` that each request replaces with a fresh job id; `idTag` (one base62 character) keeps runs apart. */
  idSlot?: string;
  idTag?: string;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The n-th id of a thread: JOB0, the run's tag, the thread's digit, n in 8 base62 digits (a valid branded id). */
function idOf(tag: string, thread: number, n: number): string {
  let digits = '';
  for (let i = 0, x = n; i < 8; i++, x = Math.floor(x / 62)) digits = ALPHABET[x % 62]! + digits;
  return `JOB0${tag}${ALPHABET[thread]}${digits}`;
}

export interface LoadResult {
  seconds: number;
  /** Answers received (any status). */
  requests: number;
  /** Answers with expectStatus. */
  ok: number;
  /** "status 500 x3", "timeout x1"... */
  errors: string[];
  firstError?: string | undefined;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
  /** Cores the generator used over `seconds` (all its threads); undefined when unknown. */
  cores: number | undefined;
}

const THREADS = 2;

/** The generator to use: BENCH_LOAD=node|wrk, else wrk when installed (or installable: scripts/valkey.ts ensureTool). */
export function pickTool(): 'wrk' | 'node' {
  const asked = process.env.BENCH_LOAD;
  return asked === 'node' || asked === 'wrk' ? asked : ensureTool('wrk') ? 'wrk' : 'node';
}

/** Runs the generator `tool`; `dir` is a scratch directory (wrk's Lua script). */
export function runLoad(tool: 'wrk' | 'node', spec: LoadSpec, dir: string): Promise<LoadResult> {
  return tool === 'wrk' ? wrkLoad(spec, dir) : nodeLoad(spec);
}

// ---- wrk ------------------------------------------------------------------------------

const luaString = (s: string) => `"${[...Buffer.from(s)].map((b) => `\\${b}`).join('')}"`;

function wrkScript(spec: LoadSpec): string {
  // with an id slot: request() builds each request's path (the same ids idOf() makes)
  const fresh = spec.idSlot
    ? `
local alphabet = ${luaString(ALPHABET)}
local template = ${luaString(new URL(spec.url).pathname)}
local n = 0
function request()
  local x, digits = n, ""
  for i = 1, 8 do
    local d = x % 62
    digits = string.sub(alphabet, d + 1, d + 1) .. digits
    x = math.floor(x / 62)
  end
  n = n + 1
  local id = prefix .. digits
  return wrk.format(nil, (string.gsub(template, ${luaString(spec.idSlot.replace(/[^A-Za-z0-9]/g, '%$&'))}, id)))
end`
    : '';
  const expect = spec.expectBody === undefined ? '' : ` and body == ${luaString(spec.expectBody)}`;
  return `
wrk.method = "${spec.method ?? 'POST'}"
wrk.body = ${luaString(spec.body)}
${Object.entries(spec.headers)
  .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
  .join('\n')}
local threads = {}
function setup(thread)
  thread:set("prefix", "JOB0" .. ${luaString(spec.idTag ?? '0')} .. string.sub(${luaString(ALPHABET)}, #threads + 1, #threads + 1))
  table.insert(threads, thread)
end
function init(args) ok = 0; bad = {}; first = "" end${fresh}
function response(status, headers, body)
  if status == ${spec.expectStatus}${expect} then ok = ok + 1 else
    bad[status] = (bad[status] or 0) + 1
    if first == "" then first = status .. " " .. string.sub(body or "", 1, 200) end
  end
end
function done(summary, latency, requests)
  local ok, bad, first = 0, {}, ""
  for _, t in ipairs(threads) do
    ok = ok + t:get("ok")
    for s, n in pairs(t:get("bad")) do bad[s] = (bad[s] or 0) + n end
    if first == "" then first = t:get("first") end
  end
  io.write(string.format("\\nBENCH requests %.0f\\n", summary.requests))
  io.write(string.format("BENCH duration_us %.0f\\n", summary.duration))
  io.write(string.format("BENCH ok %.0f\\n", ok))
  for s, n in pairs(bad) do io.write(string.format("BENCH status_%d %.0f\\n", s, n)) end
  for _, k in ipairs({"connect", "read", "write", "timeout"}) do
    io.write(string.format("BENCH err_%s %.0f\\n", k, summary.errors[k]))
  end
  io.write(string.format("BENCH p50_us %.0f\\n", latency:percentile(50)))
  io.write(string.format("BENCH p99_us %.0f\\n", latency:percentile(99)))
  io.write("BENCH first " .. string.gsub(first, "[\\r\\n]", " ") .. "\\n")
end
`;
}

async function wrkLoad(spec: LoadSpec, dir: string): Promise<LoadResult> {
  const script = join(dir, `load-${process.pid}.lua`);
  writeFileSync(script, wrkScript(spec));
  const seconds = Math.max(1, Math.round(spec.ms / 1000));
  const args = ['-t', String(THREADS), '-c', String(spec.connections), '-d', `${seconds}s`, '--timeout', '5s', '-s', script, spec.url];
  const run = await runTool('wrk', which('wrk') ?? 'wrk', args, spec.ms + 15_000);
  if (run.code !== 0) throw new Error(`wrk exited ${run.code}: ${run.stderr.trim() || run.stdout.trim()}`);
  const values = new Map<string, string>();
  for (const m of run.stdout.matchAll(/^BENCH (\S+) ?(.*)$/gm)) values.set(m[1]!, m[2]!);
  const num = (k: string) => Number(values.get(k) ?? NaN);
  const secs = num('duration_us') / 1e6;
  const errors: string[] = [];
  for (const [k, v] of values) {
    if (k.startsWith('status_')) errors.push(`status ${k.slice(7)} x${v}`);
    if (k.startsWith('err_') && Number(v) > 0) errors.push(`${k.slice(4)} x${v}`);
  }
  return {
    seconds: secs,
    requests: num('requests'),
    ok: num('ok'),
    errors,
    firstError: values.get('first')?.trim() || undefined,
    p50Ms: num('p50_us') / 1000,
    p99Ms: num('p99_us') / 1000,
    cores: run.cpuSeconds !== undefined ? run.cpuSeconds / secs : undefined,
  };
}

// ---- node:http in worker_threads ------------------------------------------------------

interface ThreadTally {
  requests: number;
  ok: number;
  statuses: Record<string, number>;
  firstError?: string;
  latencies: Float64Array;
}

/** One thread's share (thread number `thread`): `connections` loops on one keep-alive Agent, from 'go' for `ms`. */
async function threadMain(spec: LoadSpec, thread: number): Promise<void> {
  const target = new URL(spec.url);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections, maxFreeSockets: spec.connections });
  const body = Buffer.from(spec.body);
  const headers = { ...spec.headers, 'Content-Length': String(body.length) };
  const tally: Omit<ThreadTally, 'latencies'> = { requests: 0, ok: 0, statuses: {} };
  let lat = new Float64Array(1 << 16);
  let n = 0;
  const note = (key: string, why: string) => {
    tally.statuses[key] = (tally.statuses[key] ?? 0) + 1;
    tally.firstError ??= why;
  };
  let sent = 0;
  const pathOf = (): string => (spec.idSlot ? target.pathname.replaceAll(spec.idSlot, idOf(spec.idTag ?? '0', thread, sent++)) : target.pathname);
  const method = spec.method ?? 'POST';
  const once = () =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = request({ agent, host: target.hostname, port: Number(target.port), method, path: pathOf(), headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          tally.requests++;
          if (n === lat.length) {
            const bigger = new Float64Array(lat.length * 2);
            bigger.set(lat);
            lat = bigger;
          }
          lat[n++] = performance.now() - t;
          if (res.statusCode === spec.expectStatus && (spec.expectBody === undefined || text === spec.expectBody)) tally.ok++;
          else note(`status ${res.statusCode}`, `${res.statusCode} ${text.slice(0, 200)}`);
          resolve();
        });
        res.on('error', (e) => (note('read', e.message), resolve()));
      });
      req.on('error', (e) => (note('connect', e.message), resolve()));
      req.end(body);
    });
  await new Promise<void>((resolve) => parentPort!.once('message', () => resolve()));
  const end = performance.now() + spec.ms;
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < end) await once();
    }),
  );
  agent.destroy();
  const latencies = lat.slice(0, n);
  parentPort!.postMessage({ ...tally, latencies } satisfies ThreadTally, [latencies.buffer]);
}

async function nodeLoad(spec: LoadSpec): Promise<LoadResult> {
  const per = Array.from({ length: THREADS }, (_, i) => Math.floor(spec.connections / THREADS) + (i < spec.connections % THREADS ? 1 : 0));
  const workers = per.map((connections, thread) => new Worker(new URL(import.meta.url), { workerData: { httpGen: { ...spec, connections }, thread } }));
  const next = <T>(w: Worker, event: 'online' | 'message') => new Promise<T>((resolve, reject) => (w.once(event, resolve), w.once('error', reject)));
  try {
    await Promise.all(workers.map((w) => next(w, 'online')));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const tallies = workers.map((w) => next<ThreadTally>(w, 'message'));
    for (const w of workers) w.postMessage('go');
    const all = await Promise.all(tallies);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const lat = all.flatMap((t) => [...t.latencies]).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const t of all) for (const [k, v] of Object.entries(t.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    return {
      seconds,
      requests: all.reduce((s, t) => s + t.requests, 0),
      ok: all.reduce((s, t) => s + t.ok, 0),
      errors: Object.entries(statuses).map(([k, v]) => `${k} x${v}`),
      firstError: all.find((t) => t.firstError)?.firstError,
      p50Ms: quantile(lat, 0.5),
      p99Ms: quantile(lat, 0.99),
      cores: (cpu.user + cpu.system) / 1e6 / seconds,
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

if (!isMainThread && (workerData as { httpGen?: LoadSpec } | undefined)?.httpGen) {
  const { httpGen, thread } = workerData as { httpGen: LoadSpec; thread: number };
  await threadMain(httpGen, thread);
}
