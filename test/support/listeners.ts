// The three Node listeners a client can reach (the plain gateway, the HTTPS gateway, `emq
// producer`) as real processes in front of one Valkey, and the raw sockets the connection tests
// hold against them. A client picks its own source address on 127.0.0.0/8 (Linux routes all of
// it to lo), so one test can be many addresses.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type Agent } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess } from './gateway.js';
import { startProducerProcess } from './producer.js';
import { selfSigned } from './self-signed.js';

export const PRODUCER_TOKEN = 'listeners-test-token-0123456789';

export interface Listener {
  name: 'plain gateway' | 'HTTPS gateway' | 'emq producer';
  url: string;
  /** The certificate to trust (HTTPS only). */
  ca: Buffer | undefined;
  /** A POST request line that would enqueue, with the headers a caller with a token sends. */
  post: { line: string; headers: string };
  stop(): Promise<number | null>;
}

/** Starts the three; `env(prefix)` gives each its EMQ_GATEWAY_* or EMQ_PRODUCER_* settings. */
export async function startListeners(valkeyUrl: string, env: (prefix: 'EMQ_GATEWAY' | 'EMQ_PRODUCER') => Record<string, string>): Promise<Listener[]> {
  const dir = mkdtempSync(join(tmpdir(), 'emq-listeners-'));
  const [cert, key] = selfSigned(dir, 'gateway');
  const ca = readFileSync(cert);
  const [plain, https, producer] = await Promise.all([
    startGatewayProcess(valkeyUrl, env('EMQ_GATEWAY')),
    startGatewayProcess(valkeyUrl, { ...env('EMQ_GATEWAY'), EMQ_GATEWAY_TLS_CERT: cert, EMQ_GATEWAY_TLS_KEY: key }),
    startProducerProcess({
      VALKEY_URL: valkeyUrl,
      EMQ_TOKENS: JSON.stringify([{ token: PRODUCER_TOKEN, queues: ['*'], rawPrefixes: true }]),
      ...env('EMQ_PRODUCER'),
    }),
  ]);
  rmSync(dir, { recursive: true, force: true }); // read at start
  const gwPost = (token: string) => ({
    line: 'POST /evalsha/0000000000000000000000000000000000000000/2/a/b/c HTTP/1.1\r\n',
    headers: `Host: x\r\nAuthorization: Bearer ${token}\r\n`,
  });
  return [
    { name: 'plain gateway', url: plain.url, ca: undefined, post: gwPost(plain.producer), stop: () => plain.stop() },
    { name: 'HTTPS gateway', url: https.url, ca, post: gwPost(https.producer), stop: () => https.stop() },
    {
      name: 'emq producer',
      url: producer.url,
      ca: undefined,
      post: { line: 'POST /v1/queues/conn-test/jobs HTTP/1.1\r\n', headers: `Host: x\r\nAuthorization: Bearer ${PRODUCER_TOKEN}\r\n` },
      stop: () => producer.stop(),
    },
  ];
}

export interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** GET `path` from `localAddress` (a fresh connection unless `agent`); rejects on a closed connection or after 5 s. */
export function get(listener: Listener, path: string, localAddress: string, agent: Agent | false = false): Promise<Answer> {
  const started = performance.now();
  const request = listener.ca ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(`${listener.url}${path}`, { agent, localAddress, ca: listener.ca, timeout: 5_000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from the ${listener.name} in 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

export interface Held {
  socket: Socket;
  /** Resolves once connected (or failed). */
  opened: Promise<void>;
  /** Resolves when it closed: ms since it connected, and everything it received. */
  closed: Promise<{ ms: number; received: string }>;
  /** Whether the server has closed it yet. */
  isClosed(): boolean;
}

/** A raw TCP connection from `localAddress` that writes `write` (if any) once connected, then nothing. */
export function hold(url: string, localAddress: string, write?: string | Buffer): Held {
  const { hostname, port } = new URL(url);
  const socket = netConnect({ host: hostname, port: Number(port), localAddress });
  let connectedAt = performance.now();
  let received = '';
  let closed = false;
  socket.on('error', () => undefined);
  socket.on('data', (d) => (received += d.toString('latin1')));
  const opened = new Promise<void>((resolve) => {
    socket.once('connect', () => {
      connectedAt = performance.now();
      if (write !== undefined) socket.write(write);
      resolve();
    });
    socket.once('close', () => resolve());
  });
  const done = new Promise<{ ms: number; received: string }>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve({ ms: performance.now() - connectedAt, received });
    }),
  );
  return { socket, opened, closed: done, isClosed: () => closed };
}

/** Resolves when `check()` holds, polling every 20 ms; rejects after `ms`. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  for (const deadline = performance.now() + ms; !check(); await new Promise((r) => setTimeout(r, 20)))
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
}
