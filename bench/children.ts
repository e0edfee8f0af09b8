// The HTTP processes the bench puts in front of the server: the gateway (`emq gateway`) and
// the no-op Hono server (noop-server.ts). Each runs in its own process group, prints its URL
// as its first stdout line, and is stopped with SIGTERM (SIGKILL after a grace period).
// Every child still running when the bench exits, however it exits, is killed with its group.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { clockTicks } from './proc-cpu.js';

const STARTUP_MS = 15_000;
const GRACE_MS = 5_000;

export interface Child {
  label: string;
  url: string;
  pid: number;
  /** CPU seconds the process has used so far (all its threads), from /proc; undefined off Linux. */
  cpuSeconds(): number | undefined;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM to its group, SIGKILL after a grace period; the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
}

const live = new Set<ChildProcess>();
/** Sent SIGTERM already: a second one would kill a draining gateway by the default action. */
const termed = new WeakSet<ChildProcess>();

export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
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

// the last resort: whatever way the bench leaves (process.exit included), no child outlives it
process.on('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});


/** utime + stime of a process (the whole thread group), in seconds; undefined when /proc cannot tell. */
export function procCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // the fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]); // field 14 of proc(5); fields[0] is field 3
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / clockTicks() : undefined;
  } catch {
    return undefined;
  }
}

/** Spawns `node <args>` and waits for the URL on its first stdout line. */
export async function spawnServing(label: string, args: string[], env: Record<string, string> = {}): Promise<Child> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'], // stdin: closes when the bench dies, which the no-op server watches
    detached: true,
  });
  live.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    }),
  );
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  child.stdin!.on('error', () => {}); // EPIPE if it dies first
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${label} did not print its URL within ${STARTUP_MS} ms: ${err}`)), STARTUP_MS);
      child.stdout!.on('data', (d) => {
        out += d;
        const line = /^(http:\/\/\S+)\n/.exec(out);
        if (line) {
          clearTimeout(timer);
          resolve(line[1]!);
        }
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${label} exited (${signal ?? code}) before printing its URL: ${err}`));
      });
    });
    const pid = child.pid!;
    let stopping: Promise<number | null> | undefined;
    return {
      label,
      url,
      pid,
      cpuSeconds: () => procCpuSeconds(pid),
      stderr: () => err,
      stop: () =>
        (stopping ??= (async () => {
          killGroup(child, 'SIGTERM');
          const timer = setTimeout(() => killGroup(child, 'SIGKILL'), GRACE_MS);
          const code = await exited;
          clearTimeout(timer);
          return code;
        })()),
    };
  } catch (e) {
    killGroup(child, 'SIGKILL');
    await exited;
    throw e;
  }
}

/** SIGTERM to every child still running, and their exits awaited (SIGKILL after the grace period). */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...live].map(async (child) => {
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), GRACE_MS);
      await exited;
      clearTimeout(timer);
    }),
  );
}

export interface GatewayChild extends Child {
  admin: string;
  producer: string;
}

/** `node bin/emq.js gateway` in front of `valkeyUrl`, on a free port, with fresh tokens. */
export async function startGateway(valkeyUrl: string): Promise<GatewayChild> {
  const bin = fileURLToPath(new URL('../../bin/emq.js', import.meta.url)); // from dist/bench/
  const admin = `adm-${randomBytes(16).toString('hex')}`;
  const producer = `prd-${randomBytes(16).toString('hex')}`;
  const child = await spawnServing('gateway', [bin, 'gateway'], {
    VALKEY_URL: valkeyUrl,
    EMQ_GATEWAY_PORT: '0',
    EMQ_GATEWAY_TOKENS: `admin:${admin},producer:${producer}`,
  });
  return { ...child, admin, producer };
}

/** The no-op Hono server (noop-server.ts, compiled next to this file). */
export function startNoop(): Promise<Child> {
  return spawnServing('no-op server', [fileURLToPath(new URL('./noop-server.js', import.meta.url))]);
}
