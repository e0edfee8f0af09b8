// Every process the bench starts goes through here, so one set of rules stops them all:
//   - servers (the gateway, `emq producer`, the Node servers under bench/, workerd) are
//     started detached, each leading its own process group; stop() sends SIGTERM to the
//     group, then SIGKILL after a grace period;
//   - tools (wrk, valkey-benchmark) run to completion under a shell that reports their CPU;
//   - Valkey servers started by scripts/valkey.ts (not ours to spawn) are registered by pid;
//   - stopAll() stops whatever is still running (on success, failure, SIGINT, deadline), and
//     an 'exit' hook SIGKILLs anything left, however the bench leaves (process.exit included).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { clockTicks } from './proc-cpu.js';

const STARTUP_MS = 15_000;
const GRACE_MS = 5_000;

/** A running process of ours, stoppable once (later calls share the first). */
export interface Tracked {
  label: string;
  pid: number;
  /** Everything it wrote so far (stderr; stdout too for processes that log there), the last 8 KB. */
  output(): string;
  /** SIGTERM to its group, SIGKILL after a grace period; the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
}

/** A server that printed its URL. */
export interface Child extends Tracked {
  url: string;
}

const live = new Map<ChildProcess, Tracked>();
/** Every process started, running or not, for the account at the end. */
const history: Array<{ label: string; pid: number }> = [];
/** Sent SIGTERM already: a second one would kill a draining gateway by the default action. */
const termed = new WeakSet<ChildProcess>();
/** Pids to SIGKILL at exit that we did not spawn here (Valkey servers from scripts/valkey.ts). */
const foreign = new Set<number>();

function gone(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || gone(child)) return;
  if (signal === 'SIGTERM') {
    if (termed.has(child)) return;
    termed.add(child);
  }
  try {
    process.kill(-child.pid, signal); // detached: the child leads its own group
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

// the last resort: whatever way the bench leaves, no child outlives it
process.on('exit', () => {
  for (const child of live.keys()) killGroup(child, 'SIGKILL');
  for (const pid of foreign) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // stopped already
    }
  }
});

/** A pid to SIGKILL when the bench exits, unless forgotten first (its owner stopped it). */
export function killOnExit(pid: number): () => void {
  foreign.add(pid);
  return () => foreign.delete(pid);
}

/** Spawns `command` detached, in its own process group, and tracks it until it exits. */
function track(label: string, command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: boolean } = {}) {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    // stdin: a pipe the Node servers watch, so they exit when the bench dies without a word
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-8192);
  };
  child.stderr!.on('data', keep);
  child.stdin?.on('error', () => {}); // EPIPE if it dies first
  let spawnError: Error | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (e) => {
      spawnError = e;
      keep(Buffer.from(`spawn ${command}: ${e.message}\n`));
      if (child.pid === undefined) resolve(null); // never started: no 'exit' will come
    });
    child.once('exit', (code) => resolve(code));
  }).finally(() => live.delete(child));
  let stopping: Promise<number | null> | undefined;
  const tracked: Tracked = {
    label,
    pid: child.pid ?? -1,
    output: () => out,
    stop: () =>
      (stopping ??= (async () => {
        killGroup(child, 'SIGTERM');
        const timer = setTimeout(() => killGroup(child, 'SIGKILL'), GRACE_MS);
        const code = await exited;
        clearTimeout(timer);
        return code;
      })()),
  };
  live.set(child, tracked);
  if (child.pid !== undefined) history.push({ label, pid: child.pid });
  return { child, tracked, exited, keep, spawnError: () => spawnError };
}

/** Spawns a server (`node <args>` unless `command` is given) and waits for the URL on its first stdout line. */
export async function spawnServing(
  label: string,
  args: string[],
  env: Record<string, string> = {},
  command: string = process.execPath,
): Promise<Child> {
  const { child, tracked, exited, keep } = track(label, command, args, { env: { ...process.env, ...env }, stdin: true });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${label} did not print its URL within ${STARTUP_MS} ms: ${tracked.output()}`)), STARTUP_MS);
      const onData = (d: Buffer) => {
        out += d;
        const line = /^(http:\/\/\S+)\n/.exec(out);
        if (line) {
          clearTimeout(timer);
          child.stdout!.off('data', onData).on('data', keep); // keep draining: a full pipe would block it
          resolve(line[1]!);
        }
      };
      child.stdout!.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${label} exited (${code}) before printing its URL: ${tracked.output()}`));
      });
    });
    return { ...tracked, url };
  } catch (e) {
    await tracked.stop();
    throw e;
  }
}

/** A process with no URL to print (workerd): `ready` polls until it serves, or it failed. */
export async function spawnWaiting(
  label: string,
  command: string,
  args: string[],
  options: { cwd?: string; ready: () => Promise<boolean> },
): Promise<{ tracked: Tracked; ready: boolean; code: Promise<number | null> }> {
  const { child, tracked, exited, keep } = track(label, command, args, options.cwd ? { cwd: options.cwd } : {});
  child.stdout!.on('data', keep);
  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline && !gone(child) && child.pid !== undefined) {
    if (await options.ready()) return { tracked, ready: true, code: exited };
    await new Promise((r) => setTimeout(r, 50));
  }
  await tracked.stop();
  return { tracked, ready: false, code: exited };
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
  let cpuSeconds: number | undefined;
  if (stat) {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(fields[13]) + Number(fields[14])) / clockTicks(); // cutime, cstime (fields 16, 17 of proc(5))
    if (Number.isFinite(cpu)) cpuSeconds = cpu;
  }
  return { code, stdout, stderr: tracked.output(), cpuSeconds };
}

/** Every process spawned here so far (tools included), by label and pid. */
export function spawned(): ReadonlyArray<{ label: string; pid: number }> {
  return history;
}

/** Stops every process still running (SIGTERM, SIGKILL after the grace period), exits awaited. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live.values()].map((t) => t.stop()));
}

/** Whether a pid is still running (not a zombie), from /proc. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export interface GatewayChild extends Child {
  producer: string;
}

const BIN = fileURLToPath(new URL('../../bin/emq.js', import.meta.url)); // from dist/bench/

/** `emq gateway` in front of `valkeyUrl`, on a free port, with fresh tokens. */
export async function startGateway(valkeyUrl: string): Promise<GatewayChild> {
  const admin = `adm-${randomBytes(16).toString('hex')}`;
  const producer = `prd-${randomBytes(16).toString('hex')}`;
  const child = await spawnServing('gateway', [BIN, 'gateway'], {
    VALKEY_URL: valkeyUrl,
    EMQ_GATEWAY_PORT: '0',
    EMQ_GATEWAY_TOKENS: `admin:${admin},producer:${producer}`,
  });
  return { ...child, producer };
}

/** `emq producer` (the producer app on Node, over glide) in front of `valkeyUrl`. */
export function startProducer(valkeyUrl: string, emqTokens: string): Promise<Child> {
  return spawnServing('emq producer', [BIN, 'producer'], { VALKEY_URL: valkeyUrl, PORT: '0', HOST: '127.0.0.1', EMQ_TOKENS: emqTokens });
}
