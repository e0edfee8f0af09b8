// CPU of a process and of each of its threads, from /proc (Linux; undefined elsewhere), so
// a row can say which process, and which thread in it, was busy: a Node server's JS runs
// on its main thread, a workerd isolate on one thread, glide's I/O on its own threads.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticks: number | undefined;
/** The kernel's clock ticks per second, which /proc/<pid>/stat counts CPU time in. */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** utime + stime in seconds, from a /proc stat file; undefined when it cannot be read. */
function statSeconds(path: string): { seconds: number; name: string } | undefined {
  try {
    const stat = readFileSync(path, 'latin1');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / clockTicks(); // utime, stime
    return Number.isFinite(seconds) ? { seconds, name } : undefined;
  } catch {
    return undefined;
  }
}

export interface CpuSample {
  at: number;
  total: number;
  threads: Map<string, { seconds: number; name: string }>;
}

export function sample(pid: number): CpuSample | undefined {
  const at = performance.now();
  const total = statSeconds(`/proc/${pid}/stat`);
  if (!total) return undefined;
  const threads = new Map<string, { seconds: number; name: string }>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const t = statSeconds(`/proc/${pid}/task/${tid}/stat`);
      if (t) threads.set(tid, t);
    }
  } catch {
    // no per-thread figures
  }
  return { at, total: total.seconds, threads };
}

export interface CpuUse {
  /** Cores the whole process used (all threads). */
  cores: number;
  /** Its busiest thread: cores, and the thread's name. */
  topThread: number;
  topThreadName: string;
}

/** Cores used between two samples of the same process. */
export function between(a: CpuSample | undefined, b: CpuSample | undefined): CpuUse | undefined {
  if (!a || !b) return undefined;
  const secs = (b.at - a.at) / 1000;
  let top = 0;
  let topName = '?';
  for (const [tid, t] of b.threads) {
    const used = t.seconds - (a.threads.get(tid)?.seconds ?? 0);
    if (used > top) {
      top = used;
      topName = t.name;
    }
  }
  return { cores: (b.total - a.total) / secs, topThread: top / secs, topThreadName: topName };
}

export interface MachineSample {
  at: number;
  /** Seconds of CPU busy (not idle, not iowait) summed over all CPUs, since boot. */
  busy: number;
}

/** The whole machine's busy CPU, from /proc/stat; undefined off Linux. */
export function machineSample(): MachineSample | undefined {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n')[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = f.slice(0, 8).reduce((s, v, i) => (i === 3 || i === 4 ? s : s + v), 0);
    return { at: performance.now(), busy: busy / clockTicks() };
  } catch {
    return undefined;
  }
}

/** Cores busy machine-wide between two samples. */
export function machineCores(a: MachineSample | undefined, b: MachineSample | undefined): number | undefined {
  return a && b ? (b.busy - a.busy) / ((b.at - a.at) / 1000) : undefined;
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
  const m0 = machineSample();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const before = procs.map((p) => sample(p.pid));
  const value = await body();
  const after = procs.map((p) => sample(p.pid));
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  const m1 = machineSample();
  return {
    value,
    cpu: {
      seconds,
      self: (own.user + own.system) / 1e6 / seconds,
      procs: procs.map((p, i) => ({ label: p.label, use: between(before[i], after[i]) })),
      machine: machineCores(m0, m1),
    },
  };
}
