// `emq gateway` as its own process, for the tests and the soak: started with generated
// admin, producer and control tokens, read back from the URL it prints, stopped with SIGTERM (it
// drains), and restartable on the same port (so a Worker pointed at it keeps its URL).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo-root.js';
import { urlLineOf } from './url-line.js';

export interface GatewayProcess {
  url: string;
  admin: string;
  producer: string;
  /** A control token: a producer's, and the control scripts. */
  control: string;
  /** The current process (a new one after restart). */
  readonly child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Its stdout after the URL line (its request logs), the last MiB of it; empty with `logFile`. */
  stdout(): string;
  /** SIGTERM, and the exit code once it has exited. */
  stop(): Promise<number | null>;
  /** stop(), then the same command on the same port. */
  restart(): Promise<void>;
}

/**
 * `bin`: the emq command to run; default this checkout's (the package test runs an installed
 * one). `logFile`: its stdout (the URL line, then a log line per request) goes to that file
 * instead of a pipe read here (the bench: no reader woken per line).
 */
export async function startGatewayProcess(
  valkeyUrl: string,
  env: Record<string, string> = {},
  bin = join(repoRoot(), 'bin', 'emq.js'),
  logFile?: string,
): Promise<GatewayProcess> {
  const admin = `adm-${randomBytes(16).toString('hex')}`;
  const producer = `prd-${randomBytes(16).toString('hex')}`;
  const control = `ctl-${randomBytes(16).toString('hex')}`;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    VALKEY_URL: valkeyUrl,
    EMQ_GATEWAY_PORT: '0',
    EMQ_GATEWAY_TOKENS: `admin:${admin},producer:${producer},control:${control}`,
    ...env,
  };
  let child!: ChildProcess;
  let err = '';
  let logs = '';
  let exited: Promise<number | null>;
  const launch = (): Promise<string> => {
    const out = logFile === undefined ? 'pipe' : openSync(logFile, 'w');
    child = spawn(process.execPath, [bin, 'gateway'], { env: childEnv, stdio: ['ignore', out, 'pipe'] });
    if (typeof out === 'number') closeSync(out); // the child has its own copy
    exited = new Promise((r) => child.once('exit', (code) => r(code)));
    child.stderr!.on('data', (d) => (err += d));
    if (logFile !== undefined)
      return urlLineOf(logFile, exited, 15_000, () => err.slice(-1000)).catch((e: Error) => Promise.reject(new Error(`gateway ${e.message}`)));
    return new Promise<string>((resolve, reject) => {
      let out = '';
      let started = false;
      const timer = setTimeout(() => reject(new Error(`gateway did not start: ${err.slice(-1000)}`)), 15_000);
      child.stdout!.on('data', (d) => {
        if (started) {
          // kept bounded: a soak's gateway logs a line per request
          logs = (logs + d).slice(-1024 * 1024);
          return;
        }
        out += d;
        const line = /^(https?:\/\/\S+)\n/.exec(out);
        if (line) {
          started = true;
          logs += out.slice(line[0].length);
          clearTimeout(timer);
          resolve(line[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`gateway exited with ${code}: ${err.slice(-1000)}`));
      });
    });
  };
  const url = await launch();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return {
    url,
    admin,
    producer,
    control,
    get child() {
      return child;
    },
    stderr: () => err,
    stdout: () => logs,
    stop,
    async restart() {
      await stop();
      childEnv.EMQ_GATEWAY_PORT = new URL(url).port; // the same port again
      await launch();
    },
  };
}
