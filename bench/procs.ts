// The bench's processes and their CPU. Every process it starts is tracked here, so one set of
// rules stops them all: servers run detached, each leading its process group (SIGTERM to the
// group, SIGKILL after a grace period); tools (wrk, valkey-benchmark) run to completion under a
// shell that reports their CPU; processes started by scripts/ (Valkey, the gateway) are adopted
// by pid; stopAll() stops what still runs, and an 'exit' hook SIGKILLs anything left. CPU comes
// from /proc (Linux), per process and per thread: a Node server's JS runs on its main thread, a
// workerd isolate on one thread, glide's I/O on its own threads.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { urlLineOf } from '../scripts/url-line.js';
import { freePort } from '../scripts/valkey.js';

const STARTUP_MS = 15_000;
const GRACE_MS = 5_000;

/** A running process of ours, stoppable once (later calls share the first). */
export interface Tracked {
  label: string;
  pid: number;
  /** What it wrote to stderr so far, the last 8 KB. */
  output(): string;
  /** SIGTERM (to its group), SIGKILL after a grace period; the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
}

/** A server that printed its URL. */
export interface Child extends Tracked {
  url: string;
}

/** Running, with how to kill it at exit. */
const live = new Map<Tracked, { kill: () => void; byOwner?: boolean }>();
/** Every process started, running or not, for the account at the end. */
const history: Array<{ label: string; pid: number }> = [];

const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
const kill = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false; // already gone
  }
};

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined && !gone(child) && !kill(-child.pid, signal)) kill(child.pid, signal); // detached: it leads its own group
}

// the last resort: whatever way the bench leaves, no child outlives it
process.on('exit', () => {
  for (const { kill } of live.values()) kill();
});

/**
 * Takes in a process started by scripts/ (Valkey, the gateway): counted in the account,
 * SIGKILLed at exit unless stopped first, and stopped by stopAll() unless `byOwner` (the
 * Valkey servers: their owner stops them after everything in front of them). Returns its
 * stop, made once-only.
 */
export function adopt<R>(label: string, pid: number, stop: () => Promise<R>, byOwner = false): () => Promise<R> {
  history.push({ label, pid });
  let stopping: Promise<R> | undefined;
  const once = () => (stopping ??= stop().finally(() => live.delete(tracked)));
  const tracked: Tracked = { label, pid, output: () => '', stop: async () => (await once(), null) };
  live.set(tracked, { kill: () => kill(pid, 'SIGKILL'), byOwner });
  return once;
}

/** Spawns `command` detached, in its own process group, and tracks it until it exits. */
function track(
  label: string,
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; stdin?: boolean; stdoutFile?: string } = {},
) {
  const stdout = options.stdoutFile === undefined ? 'pipe' : openSync(options.stdoutFile, 'w');
  const child = spawn(command, args, {
    env: { ...process.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: [options.stdin ? 'pipe' : 'ignore', stdout, 'pipe'],
    detached: true,
  });
  if (typeof stdout === 'number') closeSync(stdout); // the child has its own copy
  let out = '';
  const keep = (d: Buffer) => void (out = (out + d.toString()).slice(-8192));
  child.stderr!.on('data', keep);
  child.stdin?.on('error', () => {}); // EPIPE if it dies first
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (e) => {
      keep(Buffer.from(`spawn ${command}: ${e.message}\n`));
      if (child.pid === undefined) resolve(null); // never started: no 'exit' will come
    });
    child.once('exit', (code) => resolve(code));
  });
  let stopping: Promise<number | null> | undefined;
  let termed = false; // a second SIGTERM would kill a draining server by the default action
  const tracked: Tracked = {
    label,
    pid: child.pid ?? -1,
    output: () => out,
    stop: () =>
      (stopping ??= (async () => {
        if (!termed) killGroup(child, 'SIGTERM');
        termed = true;
        const timer = setTimeout(() => killGroup(child, 'SIGKILL'), GRACE_MS);
        const code = await exited;
        clearTimeout(timer);
        return code;
      })()),
  };
  live.set(tracked, { kill: () => killGroup(child, 'SIGKILL') });
  void exited.then(() => live.delete(tracked));
  if (child.pid !== undefined) history.push({ label, pid: child.pid });
  return { child, tracked, exited };
}

/**
 * Starts a server, its stdout (the URL line, then its request logs) going to `stdoutFile` as a
 * service manager would keep it, not into a pipe the bench drains line by line (a pipe wakes
 * its reader on every line, which shows in the writer's CPU). Ready once the file's first line
 * is its URL; or, given `port` (workerd, webdis: they print none), once that port accepts a
 * connection. Stopped and thrown on failure to start in time.
 */
export async function spawnServing(
  label: string,
  args: string[],
  options: { stdoutFile: string; env?: Record<string, string>; command?: string; cwd?: string; port?: number },
): Promise<Child> {
  const { env, command = process.execPath, cwd, port, stdoutFile } = options;
  // stdin: a pipe the Node servers watch, so they exit when the bench dies without a word
  const { tracked, exited } = track(label, command, args, { ...(env ? { env } : {}), ...(cwd ? { cwd } : {}), stdoutFile, stdin: port === undefined });
  const why = () => tracked.output().trim().slice(-1000);
  try {
    const url = port === undefined ? await urlLineOf(stdoutFile, exited, STARTUP_MS, why) : await accepting(port, exited, why);
    return { ...tracked, url };
  } catch (e) {
    await tracked.stop();
    throw new Error(`${label} ${(e as Error).message}`);
  }
}

/** http://127.0.0.1:<port> once it accepts a connection; rejects when `exited` settles first or after STARTUP_MS. */
function accepting(port: number, exited: Promise<unknown>, why: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => ((done = true), reject(new Error(`did not start within ${STARTUP_MS} ms: ${why()}`))), STARTUP_MS);
    void exited.then((code) => ((done = true), clearTimeout(timer), reject(new Error(`exited (${code}) before it served: ${why()}`))));
    const poll = async () => {
      if (done) return;
      if (await canConnect(port)) return (clearTimeout(timer), resolve(`http://127.0.0.1:${port}`));
      setTimeout(poll, 50);
    };
    void poll();
  });
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

/** `start` on a free port, again (twice) when another process took that port first. */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (err) {
      if (attempt >= 2 || !/Address already in use|EADDRINUSE/i.test((err as Error).message)) throw err;
    }
  }
}

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** CPU seconds the tool used (all its threads), exact: the reaping shell's cutime + cstime. */
  cpuSeconds: number | undefined;
}

/**
 * Runs a tool to completion (wrk, valkey-benchmark) under /bin/sh, which reaps it and then
 * reports its own children's CPU from /proc/$$/stat. Killed with its group at `timeoutMs`.
 */
export async function runTool(label: string, command: string, args: readonly string[], timeoutMs: number): Promise<ToolRun> {
  const sh = '"$@"; rc=$?; read -r st < /proc/$$/stat; echo "BENCH-STAT $st"; exit $rc';
  const { child, tracked, exited } = track(label, '/bin/sh', ['-c', sh, 'sh', command, ...args]);
  let stdout = '';
  child.stdout!.on('data', (d) => (stdout += d));
  const timer = setTimeout(() => void tracked.stop(), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  const stat = /^BENCH-STAT (.*)$/m.exec(stdout)?.[1];
  stdout = stdout.replace(/^BENCH-STAT .*\n?/m, '');
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpu = fields ? (Number(fields[13]) + Number(fields[14])) / clockTicks() : NaN; // cutime, cstime (fields 16, 17 of proc(5))
  return { code, stdout, stderr: tracked.output(), cpuSeconds: Number.isFinite(cpu) ? cpu : undefined };
}

/** What a command prints (a version), trimmed; undefined when it cannot be run. */
export function outputOf(command: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** Stops every process still running (SIGTERM, SIGKILL after the grace period) but those stopped by their owner; exits awaited. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].filter(([, v]) => !v.byOwner).map(([t]) => t.stop()));
}

/** The account at the end: every process started, and whether any still runs (not a zombie, from /proc). */
export function accounting(): string {
  const running = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      return stat[stat.lastIndexOf(')') + 2] !== 'Z';
    } catch {
      return false;
    }
  };
  const all = [...history.filter((p) => p.label !== 'valkey'), ...history.filter((p) => p.label === 'valkey')]; // Valkey last, as the servers behind the rest
  const left = all.filter((p) => running(p.pid));
  const counts = new Map<string, number>();
  for (const p of all) counts.set(p.label, (counts.get(p.label) ?? 0) + 1);
  const labels = [...counts].map(([label, n]) => (n > 1 ? `${label} x${n}` : label)).join(', ');
  return `processes started: ${all.length} (${labels}); still running after the run: ${left.length === 0 ? 'none' : left.map((p) => `${p.label} ${p.pid}`).join(', ')}`;
}

// ---- CPU, from /proc ------------------------------------------------------------------

let ticks: number | undefined;
/** The kernel's clock ticks per second, which /proc/<pid>/stat counts CPU time in. */
function clockTicks(): number {
  try {
    ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    ticks = 100;
  }
  return ticks;
}

/** utime + stime in seconds, from a /proc stat file (NaN when it cannot be read), and the name. */
function statSeconds(path: string): { seconds: number; name: string } {
  try {
    const stat = readFileSync(path, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { seconds: (Number(fields[11]) + Number(fields[12])) / clockTicks(), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) };
  } catch {
    return { seconds: NaN, name: '?' };
  }
}

/** A process's CPU seconds, and each thread's, now. */
function sample(pid: number) {
  const at = performance.now();
  const threads = new Map<string, { seconds: number; name: string }>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) threads.set(tid, statSeconds(`/proc/${pid}/task/${tid}/stat`));
  } catch {
    // no per-thread figures
  }
  return { at, total: statSeconds(`/proc/${pid}/stat`).seconds, threads };
}

export interface CpuUse {
  /** Cores the whole process used (all threads). */
  cores: number;
  /** Its busiest thread: cores, and the thread's name. */
  topThread: number;
  topThreadName: string;
}

/** Cores used between two samples of the same process; undefined when it could not be read. */
function between(a: ReturnType<typeof sample>, b: ReturnType<typeof sample>): CpuUse | undefined {
  if (!Number.isFinite(a.total) || !Number.isFinite(b.total)) return undefined;
  const secs = (b.at - a.at) / 1000;
  let [top, topName] = [0, '?'];
  for (const [tid, t] of b.threads) {
    const used = t.seconds - (a.threads.get(tid)?.seconds ?? 0);
    if (used > top) [top, topName] = [used, t.name];
  }
  return { cores: (b.total - a.total) / secs, topThread: top / secs, topThreadName: topName };
}

/** The whole machine's busy CPU seconds since boot (not idle, not iowait), from /proc/stat; NaN off Linux. */
function machineBusy(): number {
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    return f.slice(0, 8).reduce((s, v, i) => (i === 3 || i === 4 ? s : s + v), 0) / clockTicks();
  } catch {
    return NaN;
  }
}

/** A process whose CPU a row reports. */
export interface Proc {
  label: string;
  pid: number;
}

export interface ProcUse {
  label: string;
  use: CpuUse | undefined;
}

export interface CpuWindow {
  /** Wall time of the window. */
  seconds: number;
  /** Cores this process used (all its threads: JS, libuv, glide's Rust runtime, worker_threads). */
  self: number;
  procs: ProcUse[];
  /** Cores busy machine-wide; undefined off Linux. */
  machine: number | undefined;
}

/** Runs `body` with the CPU of this process, of `procs` and of the whole machine sampled around it. */
export async function cpuWindow<T>(procs: readonly Proc[], body: () => Promise<T>): Promise<{ value: T; cpu: CpuWindow }> {
  const m0 = machineBusy();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const before = procs.map((p) => sample(p.pid));
  const value = await body();
  const after = procs.map((p) => sample(p.pid));
  const own = process.cpuUsage(own0);
  const seconds = (performance.now() - t0) / 1000;
  const machine = (machineBusy() - m0) / seconds;
  const uses = procs.map((p, i) => ({ label: p.label, use: between(before[i]!, after[i]!) }));
  return { value, cpu: { seconds, self: (own.user + own.system) / 1e6 / seconds, procs: uses, machine: Number.isFinite(machine) ? machine : undefined } };
}
