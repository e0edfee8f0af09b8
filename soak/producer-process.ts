// `emq producer` as its own process for the soak's glide mode: over glide straight to Valkey
// (no gateway), its request logs dropped (a soak's run would fill any buffer), restartable on
// the same port so the producers' URL stays good through the restart.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../scripts/repo-root.js';

export interface ProducerProcess {
  url: URL;
  /** SIGTERM (it drains; SIGKILL after 10 s), then the same command on the same port; answers whether it exited by itself. */
  restart(): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startProducerProcess(env: Record<string, string>): Promise<ProducerProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env };
  let child!: ChildProcess;
  let exited!: Promise<void>;
  const launch = () =>
    new Promise<URL>((resolve, reject) => {
      child = spawn(process.execPath, [join(repoRoot(), 'bin', 'emq.js'), 'producer'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      exited = new Promise((r) => child.once('exit', () => r()));
      let err = '';
      let out = '';
      let started = false;
      child.stderr!.on('data', (d) => (err = (err + d).slice(-4000)));
      const timer = setTimeout(() => reject(new Error(`emq producer did not start: ${err}`)), 15_000);
      child.stdout!.on('data', (d) => {
        if (started) return; // a log line per request: read and dropped
        out += d;
        const line = /^(http:\/\/\S+)\n/.exec(out);
        if (line) {
          started = true;
          clearTimeout(timer);
          resolve(new URL(line[1]!));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        if (!started) reject(new Error(`emq producer exited with ${code}: ${err}`));
      });
    });
  const url = await launch();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => (killed = child.kill('SIGKILL')), 10_000);
    await exited;
    clearTimeout(timer);
    return !killed;
  };
  return {
    url,
    async restart() {
      const drained = await stop();
      childEnv.PORT = url.port;
      await launch();
      return drained;
    },
    async stop() {
      await stop();
    },
  };
}
