// The real gateway, as its own process (`emq gateway`), in front of a real server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/emq.js', import.meta.url));

export interface GatewayProcess {
  url: string;
  admin: string;
  producer: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, and the exit code once it has exited. */
  stop(): Promise<number | null>;
}

export async function startGatewayProcess(valkeyUrl: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const admin = `adm-${randomBytes(16).toString('hex')}`;
  const producer = `prd-${randomBytes(16).toString('hex')}`;
  const child = spawn(process.execPath, [bin, 'gateway'], {
    env: {
      ...process.env,
      VALKEY_URL: valkeyUrl,
      EMQ_GATEWAY_PORT: '0',
      EMQ_GATEWAY_TOKENS: `admin:${admin},producer:${producer}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${err}`)), 15_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const line = /^(http:\/\/\S+)\n/.exec(out);
      if (line) {
        clearTimeout(timer);
        resolve(line[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}: ${err}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    admin,
    producer,
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
