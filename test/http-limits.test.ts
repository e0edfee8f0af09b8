// Both Node servers, `emq gateway` and `emq producer`, as real processes with small caps and
// timeouts: a client trickling its headers or its body is cut off (408, closed), connections
// past the cap are closed as they arrive, and honest requests still work.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { enqueueScript } from '../shared/scripts.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { startGatewayProcess } from './support/gateway.js';
import { startProducerProcess } from './support/producer.js';

const TOKEN = 'limits-test-token-0123456789';
const HEADERS_MS = 500;
const REQUEST_MS = 1_000;
const MAX = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Target {
  url: string;
  /** An honest request that writes: a producer's enqueue, status 200 or 201. */
  honest(): Promise<number>;
  /** A POST path and headers a caller with a token would send (the body trickled). */
  post: { path: string; headers: string };
  stop(): Promise<unknown>;
}

/** What a raw connection saw: everything it received, and how many pieces it wrote before the server closed it. */
interface Cut {
  received: string;
  written: number;
  closedByServer: boolean;
}

/** Connects, writes `head`, then `piece` every 100 ms up to `pieces` times, until the server closes. */
function trickle(url: string, head: string, piece: string, pieces: number): Promise<Cut> {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const sock = connect({ host: hostname, port: Number(port) });
    let received = '';
    let written = 0;
    let closed = false;
    sock.on('data', (d) => (received += d));
    sock.on('error', () => undefined);
    sock.once('connect', () => sock.write(head));
    const timer = setInterval(() => {
      if (closed) return;
      if (written >= pieces) {
        clearInterval(timer);
        sock.destroy();
        resolve({ received, written, closedByServer: false });
        return;
      }
      sock.write(piece);
      written++;
    }, 100);
    sock.once('close', () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      resolve({ received, written, closedByServer: written < pieces });
    });
  });
}

/** A raw keep-alive connection that has had one request answered (so the server counts it). */
async function heldConnection(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const sock = connect({ host: hostname, port: Number(port) });
  sock.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    let got = '';
    sock.once('connect', () => sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    sock.on('data', (d) => {
      got += d;
      if (/\r\n\r\n[^]*"ok"/.test(got)) resolve();
    });
    sock.once('close', () => reject(new Error(`closed before an answer: ${got}`)));
  });
  return sock;
}

/** One more connection sending a request: the answer, or '' when the server closed it unanswered. */
function oneMore(url: string): Promise<string> {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const sock = connect({ host: hostname, port: Number(port) });
    let got = '';
    sock.on('error', () => undefined);
    sock.once('connect', () => sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    sock.on('data', (d) => (got += d));
    sock.once('close', () => resolve(got));
  });
}

const limitsOf = (prefix: string) => ({
  [`${prefix}_HEADERS_TIMEOUT_MS`]: String(HEADERS_MS),
  [`${prefix}_REQUEST_TIMEOUT_MS`]: String(REQUEST_MS),
  [`${prefix}_KEEPALIVE_TIMEOUT_MS`]: '30000',
  [`${prefix}_MAX_CONNECTIONS`]: String(MAX),
});

describe('finding 8 (security review): caps and timeouts on both Node servers', () => {
  let server: RunningServer;
  let admin: Admin;
  const targets: Record<string, Target> = {};

  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
    const gw = await startGatewayProcess(server.url, limitsOf('EMQ_GATEWAY'));
    const q = freshQueue('limits');
    targets.gateway = {
      url: gw.url,
      honest: async () => {
        const id = (await import('../shared/ids.js')).mintId();
        const path = `/evalsha/${enqueueScript.sha1}/2/${encodeURIComponent(`emq:{${q}}:job:${id}`)}/${encodeURIComponent(`emq:{${q}}:pending`)}/${id}`;
        return (await fetch(gw.url + path, { method: 'POST', body: 'honest', headers: { Authorization: `Bearer ${gw.producer}` } })).status;
      },
      post: { path: `/evalsha/${enqueueScript.sha1}/2/a/b/c`, headers: `Authorization: Bearer ${gw.producer}\r\n` },
      stop: () => gw.stop(),
    };
    const producer = await startProducerProcess({
      VALKEY_URL: server.url,
      EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
      ...limitsOf('EMQ_PRODUCER'),
    });
    targets.producer = {
      url: producer.url,
      honest: async () =>
        (await fetch(`${producer.url}/v1/queues/${q}/jobs`, { method: 'POST', body: 'honest', headers: { Authorization: `Bearer ${TOKEN}` } })).status,
      post: { path: `/v1/queues/${q}/jobs`, headers: `Authorization: Bearer ${TOKEN}\r\n` },
      stop: () => producer.stop(),
    };
  });
  afterAll(async () => {
    for (const t of Object.values(targets)) expect(await t.stop()).toBe(0);
    admin?.close();
    await server?.stop();
  });

  describe.each(['gateway', 'producer'])('emq %s', (name) => {
    it(`a client trickling its headers (a line every 100 ms) is cut off: 408 after ${HEADERS_MS} ms, not after Node's 60 s`, async () => {
      const started = Date.now();
      const cut = await trickle(targets[name]!.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 150);
      const ms = Date.now() - started;
      console.log(`[finding 8] emq ${name}: trickled headers ${cut.closedByServer ? 'cut off' : 'NOT cut off'} after ${ms} ms (${cut.written} lines)`);
      expect(cut.closedByServer).toBe(true);
      expect(cut.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(ms).toBeLessThan(10_000); // not hung: 15 s of trickle was on offer
    });

    it(`a client trickling its body (a byte every 100 ms, with a token) is cut off: 408 after ${REQUEST_MS} ms, nothing written`, async () => {
      const before = Number(await admin.call('DBSIZE'));
      const started = Date.now();
      const { path, headers } = targets[name]!.post;
      const cut = await trickle(targets[name]!.url, `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: 150\r\n\r\n`, 'x', 150);
      const ms = Date.now() - started;
      console.log(`[finding 8] emq ${name}: trickled body ${cut.closedByServer ? 'cut off' : 'NOT cut off'} after ${ms} ms (${cut.written} bytes)`);
      expect(cut.closedByServer).toBe(true);
      expect(cut.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(ms).toBeLessThan(10_000);
      expect(Number(await admin.call('DBSIZE'))).toBe(before);
    });

    it(`connections past ${MAX} are closed unanswered; once one of the ${MAX} goes, a new one is served`, async () => {
      const held = await Promise.all(Array.from({ length: MAX }, () => heldConnection(targets[name]!.url)));
      try {
        for (let i = 0; i < 3; i++) expect(await oneMore(targets[name]!.url)).toBe('');
      } finally {
        held.shift()!.destroy();
      }
      // the server learns of the close when the FIN arrives: a few tries at most
      let answer = '';
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && answer === ''; await sleep(50)) answer = await oneMore(targets[name]!.url);
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      for (const s of held) s.destroy();
    });

    it('honest requests still work, many in a row on fresh connections', async () => {
      for (let i = 0; i < 20; i++) expect([200, 201]).toContain(await targets[name]!.honest());
    });
  });

  describe('a bad value stops each process at start (exit 2), naming the variable, never its value', () => {
    const SECRET = 'sekrit-looking-value';
    const cases: Array<[string, Record<string, string>, string]> = [
      ['gateway', { EMQ_GATEWAY_HEADERS_TIMEOUT_MS: SECRET }, 'EMQ_GATEWAY_HEADERS_TIMEOUT_MS is not a whole number'],
      ['gateway', { EMQ_GATEWAY_REQUEST_TIMEOUT_MS: '0' }, 'EMQ_GATEWAY_REQUEST_TIMEOUT_MS is not a whole number'],
      ['gateway', { EMQ_GATEWAY_KEEPALIVE_TIMEOUT_MS: `1${SECRET}` }, 'EMQ_GATEWAY_KEEPALIVE_TIMEOUT_MS is not a whole number'],
      ['gateway', { EMQ_GATEWAY_MAX_CONNECTIONS: '-1' }, 'EMQ_GATEWAY_MAX_CONNECTIONS is not a whole number'],
      [
        'gateway',
        { EMQ_GATEWAY_HEADERS_TIMEOUT_MS: '5000', EMQ_GATEWAY_REQUEST_TIMEOUT_MS: '4000' },
        'EMQ_GATEWAY_HEADERS_TIMEOUT_MS must not be above EMQ_GATEWAY_REQUEST_TIMEOUT_MS',
      ],
      ['gateway', { EMQ_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: SECRET }, 'EMQ_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS is not a whole number'],
      ['gateway', { EMQ_GATEWAY_REQUEST_LINE_TIMEOUT_MS: '0' }, 'EMQ_GATEWAY_REQUEST_LINE_TIMEOUT_MS is not a whole number'],
      ['gateway', { EMQ_GATEWAY_MAX_BODY: SECRET }, 'EMQ_GATEWAY_MAX_BODY is not a whole number'],
      ['gateway', { EMQ_GATEWAY_PRODUCER_MAX_BODY: SECRET }, 'EMQ_GATEWAY_PRODUCER_MAX_BODY is not a whole number'],
      ['gateway', { EMQ_GATEWAY_PORT: SECRET }, 'EMQ_GATEWAY_PORT is not a whole number'],
      ['producer', { EMQ_PRODUCER_HEADERS_TIMEOUT_MS: SECRET }, 'EMQ_PRODUCER_HEADERS_TIMEOUT_MS is not a whole number'],
      ['producer', { EMQ_PRODUCER_REQUEST_TIMEOUT_MS: '1.5' }, 'EMQ_PRODUCER_REQUEST_TIMEOUT_MS is not a whole number'],
      ['producer', { EMQ_PRODUCER_KEEPALIVE_TIMEOUT_MS: SECRET }, 'EMQ_PRODUCER_KEEPALIVE_TIMEOUT_MS is not a whole number'],
      ['producer', { EMQ_PRODUCER_MAX_CONNECTIONS: '0' }, 'EMQ_PRODUCER_MAX_CONNECTIONS is not a whole number'],
      ['producer', { EMQ_PRODUCER_HEADERS_TIMEOUT_MS: '60000' }, 'EMQ_PRODUCER_HEADERS_TIMEOUT_MS must not be above EMQ_PRODUCER_REQUEST_TIMEOUT_MS'],
      ['producer', { EMQ_PRODUCER_MAX_CONNECTIONS_PER_ADDRESS: '-1' }, 'EMQ_PRODUCER_MAX_CONNECTIONS_PER_ADDRESS is not a whole number'],
      ['producer', { EMQ_PRODUCER_REQUEST_LINE_TIMEOUT_MS: `1${SECRET}` }, 'EMQ_PRODUCER_REQUEST_LINE_TIMEOUT_MS is not a whole number'],
      ['producer', { PORT: SECRET }, 'PORT is not a whole number'],
    ];
    it.each(cases)('emq %s with %j', async (which, env, message) => {
      const run = await emq([which], '', {
        VALKEY_URL: 'redis://127.0.0.1:1',
        EMQ_GATEWAY_TOKENS: 'producer:prd-0123456789abcdef0123',
        EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
        ...env,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
      expect(run.stderr).not.toContain(SECRET);
      expect(run.stdout).toBe('');
    });
  });
});
