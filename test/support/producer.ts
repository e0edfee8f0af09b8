// `emq producer` as its own process (bin/emq.js, built by `npm test`'s pretest step), read
// back from the URL it prints, stopped with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/emq.js', import.meta.url));

export interface ProducerProcess {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Its stdout after the URL line: its request logs. */
  stdout(): string;
  /** SIGTERM, and the exit code once it has exited. */
  stop(): Promise<number | null>;
}

/**
 * Starts `emq producer` on a free port of 127.0.0.1; `env` is laid over this process's.
 * `command`: the emq command to run; default this checkout's (the package test runs an installed one).
 */
export async function startProducerProcess(env: Record<string, string>, command = bin): Promise<ProducerProcess> {
  const child = spawn(process.execPath, [command, 'producer'], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let out = '';
  let urlLine = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^(http:\/\/\S+)\n/.exec(out);
      if (m) {
        urlLine = m[0];
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`emq producer exited with ${code}: ${err}`)));
  });
  return {
    url,
    child,
    stderr: () => err,
    stdout: () => out.slice(urlLine.length),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
