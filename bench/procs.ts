// The bench's processes and their CPU. Every process it starts is tracked here: servers run
// detached, each leading its process group (SIGTERM to the group, SIGKILL after a grace
// period); tools (wrk, valkey-benchmark) run under a shell that reports their CPU; processes
// started by scripts/ (Valkey, the gateway) are adopted by pid. stopAll() stops what still
// runs; an 'exit' hook SIGKILLs anything left. CPU comes from /proc (Linux), per thread too.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { urlLineOf } from '../scripts/url-line.js';
import { freePort } from '../scripts/valkey.js';

const STARTUP_MS = 15_000;
const GRACE_MS = 5_000;

/** A running process of ours, stoppable once (later calls share the first). */
export interface Tracked {
  label: string;
  pid: number;
  /** The last 8 KB it wrote to stderr. */
  output(): string;
  /** SIGTERM (to its group), SIGKILL after a grace period; the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
}

/** A server that printed its URL. */
export type Child = Tracked & { url: string };

/** Running, with how to kill it at exit (`byOwner`: not by stopAll()); and every process started, for the account. */
const live = new Map<Tracked, { kill: () => void; byOwner?: boolean }>();
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
const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.pid !== undefined && !gone(child) && !kill(-child.pid, signal)) kill(child.pid, signal);
};
process.on('exit', () => {
  for (const { kill } of live.values()) kill();
});

/** Takes in a process started by scripts/ (Valkey, the gateway); `byOwner`: not stopped by stopAll(). Returns its stop, once-only. */
export function adopt<R>(label: string, pid: number, stop: () => Promise<R>, byOwner = false): () => Promise<R> {
  history.push({ label, pid });
  let stopping: Promise<R> | undefined;
  const once = () => (stopping ??= stop().finally(() => live.delete(tracked)));
  const tracked: Tracked = { label, pid, output: () => '', stop: async () => (await once(), null) };
  live.set(tracked, { kill: () => kill(pid, 'SIGKILL'), byOwner });
  return once;
}

export interface Serving {
  stdoutFile?: string | undefined;
  env?: Record<string, string> | undefined;
  command?: string | undefined;
  cwd?: string | undefined;
  port?: number | undefined;
}

/** Spawns `command` detached, in its own process group, and tracks it until it exits. */
function track(label: string, command: string, args: readonly string[], options: Omit<Serving, 'port' | 'command'> & { stdin?: boolean } = {}) {
  const { env, cwd, stdin, stdoutFile } = options;
  const stdout = stdoutFile === undefined ? 'pipe' : openSync(stdoutFile, 'w');
  const child = spawn(command, args, { env: { ...process.env, ...env }, cwd, stdio: [stdin ? 'pipe' : 'ignore', stdout, 'pipe'], detached: true });
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
  const tracked: Tracked = {
    label,
    pid: child.pid ?? -1,
    output: () => out,
    // once: a second SIGTERM would kill a draining server by the default action
    stop: () =>
      (stopping ??= (async () => {
        killGroup(child, 'SIGTERM');
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

/** Starts a server, ready once `stdoutFile`'s first line is its URL, or, given `port` (workerd, webdis print none), once it answers HTTP. */
export async function spawnServing(label: string, args: string[], options: Serving & { stdoutFile: string }): Promise<Child> {
  const { command = process.execPath, port, stdoutFile } = options;
  // stdin: a pipe the Node servers watch, so they exit when the bench dies without a word
  const { tracked, exited } = track(label, command, args, { ...options, stdin: port === undefined });
  const why = () => tracked.output().trim().slice(-1000);
  try {
    const url = port === undefined ? await urlLineOf(stdoutFile, exited, STARTUP_MS, why) : await answering(`http://127.0.0.1:${port}`, exited, why);
    return { ...tracked, url };
  } catch (e) {
    await tracked.stop();
    throw new Error(`${label} ${(e as Error).message}`);
  }
}

/** `url` once it answers HTTP (any status); throws when `exited` settles first or after STARTUP_MS. */
async function answering(url: string, exited: Promise<unknown>, why: () => string): Promise<string> {
  let ended = false;
  void exited.then(() => (ended = true));
  const answers = () =>
    fetch(url, { signal: AbortSignal.timeout(500) }).then(
      (res) => (void res.body?.cancel(), true),
      () => false,
    );
  for (const end = Date.now() + STARTUP_MS; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    if (ended) throw new Error(`exited before it served: ${why()}`);
    if (await answers()) return url;
  }
  throw new Error(`did not start within ${STARTUP_MS} ms: ${why()}`);
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

/** Runs a tool (wrk, valkey-benchmark) under /bin/sh, which reaps it and reports its CPU (cutime + cstime: exact); killed at `timeoutMs`. */
export async function runTool(label: string, command: string, args: readonly string[], timeoutMs: number) {
  const sh = '"$@"; rc=$?; read -r st < /proc/$$/stat; echo "BENCH-STAT $st"; exit $rc';
  const { child, tracked, exited } = track(label, '/bin/sh', ['-c', sh, 'sh', command, ...args]);
  let stdout = '';
  child.stdout!.on('data', (d) => (stdout += d));
  const timer = setTimeout(() => void tracked.stop(), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  const stat = /^BENCH-STAT (.*)$/m.exec(stdout)?.[1];
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpu = fields ? (Number(fields[13]) + Number(fields[14])) / clockTicks() : NaN; // fields 16, 17 of proc(5)
  return { code, stdout: stdout.replace(/^BENCH-STAT .*\n?/m, ''), stderr: tracked.output(), cpuSeconds: Number.isFinite(cpu) ? cpu : undefined };
}

/** What a command prints (a version), trimmed; undefined when it cannot be run. */
export function outputOf(command: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** Stops every process still running but those stopped by their owner; exits awaited. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].filter(([, v]) => !v.byOwner).map(([t]) => t.stop()));
}

/** The account at the end: every process started (Valkey last), and any still running (not a zombie). */
export function accounting(): string {
  const running = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      return stat[stat.lastIndexOf(')') + 2] !== 'Z';
    } catch {
      return false;
    }
  };
  const all = [...history.filter((p) => p.label !== 'valkey'), ...history.filter((p) => p.label === 'valkey')];
  const left = all.filter((p) => running(p.pid));
  const counts = new Map<string, number>();
  for (const p of all) counts.set(p.label, (counts.get(p.label) ?? 0) + 1);
  const labels = [...counts].map(([label, n]) => (n > 1 ? `${label} x${n}` : label)).join(', ');
  return `processes started: ${all.length} (${labels}); still running after the run: ${left.length === 0 ? 'none' : left.map((p) => `${p.label} ${p.pid}`).join(', ')}`;
}

// ---- CPU, from /proc ------------------------------------------------------------------

let ticks: number | undefined;
/** The kernel's clock ticks per second, which /proc counts CPU time in. */
const clockTicks = () => (ticks ??= Number(outputOf('getconf', ['CLK_TCK'])) || 100);

/** utime + stime in seconds of a /proc stat file; NaN when unreadable. */
function statSeconds(path: string): number {
  try {
    const stat = readFileSync(path, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return NaN;
  }
}

/** A process's CPU seconds, and each thread's, now. */
function sample(pid: number) {
  const threads = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) threads.set(tid, statSeconds(`/proc/${pid}/task/${tid}/stat`));
  } catch {
    // no per-thread figures
  }
  return { at: performance.now(), total: statSeconds(`/proc/${pid}/stat`), threads };
}

/** Cores a process used (all threads), and its busiest thread's. */
export type CpuUse = { cores: number; topThread: number };

function between(a: ReturnType<typeof sample>, b: ReturnType<typeof sample>): CpuUse | undefined {
  if (!Number.isFinite(a.total) || !Number.isFinite(b.total)) return undefined;
  const secs = (b.at - a.at) / 1000;
  let top = 0;
  for (const [tid, t] of b.threads) top = Math.max(top, t - (a.threads.get(tid) ?? 0));
  return { cores: (b.total - a.total) / secs, topThread: top / secs };
}

/** The machine's busy CPU seconds since boot (user to steal, less idle and iowait); NaN off Linux. */
function machineBusy(): number {
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return f.slice(0, 8).reduce((s, v, i) => (i === 3 || i === 4 ? s : s + v), 0) / clockTicks();
  } catch {
    return NaN;
  }
}

/** A process whose CPU a row reports, and what it used. */
export type Proc = { label: string; pid: number };
export type ProcUse = { label: string; use: CpuUse | undefined };

/** A window's wall time; cores this process used (all its threads), each of `procs`, the machine (undefined off Linux). */
export type CpuWindow = { seconds: number; self: number; procs: ProcUse[]; machine: number | undefined };

/** Runs `body` with the CPU of this process, of `procs` and of the whole machine sampled around it. */
export async function cpuWindow<T>(procs: readonly Proc[], body: () => Promise<T>): Promise<{ value: T; cpu: CpuWindow }> {
  const [m0, own0, t0] = [machineBusy(), process.cpuUsage(), performance.now()];
  const before = procs.map((p) => sample(p.pid));
  const value = await body();
  const after = procs.map((p) => sample(p.pid));
  const own = process.cpuUsage(own0);
  const seconds = (performance.now() - t0) / 1000;
  const machine = (machineBusy() - m0) / seconds;
  const uses = procs.map((p, i) => ({ label: p.label, use: between(before[i]!, after[i]!) }));
  return { value, cpu: { seconds, self: (own.user + own.system) / 1e6 / seconds, procs: uses, machine: Number.isFinite(machine) ? machine : undefined } };
}
