// The gateway while Valkey goes away and comes back, and on SIGTERM, as the real process.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { mintId } from '../shared/ids.js';
import { enqueueScript } from '../shared/scripts.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import type { Answer } from './support/answer.js';
import { startGatewayProcess } from './support/gateway.js';
import { call, command, keysOf, evalshaPath, sleep, refused, portOf, readAll } from './support/gateway-calls.js';

// ---------------------------------------------------------------- 5. Valkey going away

describe('gateway while Valkey is down', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f().catch(() => undefined);
  });

  it('after one call found Valkey gone, the next answer 503 at once instead of waiting out the request timeout; a PING finds it back', async () => {
    const server = await startServer();
    cleanup.push(() => server.stop());
    // a request timeout twice the abort below: an answer in time did not wait it out
    const gw = await startGatewayProcess(server.url, { EMQ_GATEWAY_TIMEOUT_MS: '4000' });
    cleanup.push(() => gw.stop());
    expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200 });
    process.kill(server.pid, 'SIGKILL');
    await sleep(100);
    // the first call may wait for glide to give up (connection refused when it reconnects)
    const first = await fetch(`${gw.url}/ping`, { headers: { Authorization: `Bearer ${gw.producer}` } });
    expect(first.status).toBe(503);
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${gw.url}/ping`, { headers: { Authorization: `Bearer ${gw.producer}` }, signal: AbortSignal.timeout(2_000) });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    await server.restart();
    let status = 0;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && status !== 200; await sleep(50)) {
      status = (await command(gw, gw.producer, ['PING'])).status;
    }
    expect(status).toBe(200);
    expect(await gw.stop()).toBe(0);
  }, 60_000);

  it('answers 503 with Retry-After once Valkey is killed, and 200 again from the same process once it is back on the same port', async () => {
    let server = await startServer();
    const port = server.port;
    cleanup.push(() => server.stop());
    const gw = await startGatewayProcess(server.url, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
    cleanup.push(() => gw.stop());

    expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });

    await server.stop();
    const down = await command(gw, gw.producer, ['PING']);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(down.json.error).toMatch(/unavailable/i);
    const downReady = await call(gw, '/readyz');
    expect(downReady.status).toBe(503);
    expect(downReady.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call(gw, '/healthz')).status).toBe(200);

    server = await startServer({ port });
    let last: Answer | undefined;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      last = await command(gw, gw.producer, ['PING']);
      if (last.status === 200) break;
      await sleep(200);
    }
    expect(last?.status, `last answer: ${JSON.stringify(last?.json)}`).toBe(200);
    expect(last?.json).toEqual({ result: 'PONG' });
    expect(gw.child.exitCode).toBeNull();
    expect((await call(gw, '/readyz')).status).toBe(200);
    expect(await gw.stop()).toBe(0);
  }, 30_000);

  it('started while Valkey is down: /readyz 503 and /healthz 200; /readyz 200 once Valkey starts', async () => {
    // a port that nothing listens on, then Valkey on that very port
    const probe = await startServer();
    const port = probe.port;
    await probe.stop();
    const gw = await startGatewayProcess(`redis://127.0.0.1:${port}`, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
    cleanup.push(() => gw.stop());

    expect((await call(gw, '/healthz')).status).toBe(200);
    const notReady = await call(gw, '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toMatch(/^\d+$/);
    const cmd = await command(gw, gw.producer, ['PING']);
    expect(cmd.status).toBe(503);
    // what the gateway decides alone is answered as ever: a refusal stays a refusal
    expect((await command(gw, gw.producer, ['FLUSHALL'])).status).toBe(403);
    expect((await call(gw, '/evalsha/%ZZ/0', { token: gw.producer, method: 'POST', body: 'p' })).status).toBe(400);
    expect((await call(gw, '/', { token: gw.producer, method: 'POST', body: '[' })).status).toBe(400);

    const server = await startServer({ port });
    cleanup.push(() => server.stop());
    let status = 0;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      status = (await call(gw, '/readyz')).status;
      if (status === 200) break;
      await sleep(200);
    }
    expect(status).toBe(200);
    expect(await command(gw, gw.producer, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
    expect(await gw.stop()).toBe(0);
  }, 30_000);
});

// ---------------------------------------------------------------- 6. SIGTERM

describe('gateway SIGTERM', () => {
  let server: RunningServer;
  let admin: Admin;
  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
  });
  afterAll(async () => {
    admin?.close();
    await server?.stop();
  });

  it('finishes the request in flight with 200 and Connection: close, refuses new connections, and exits 0', async () => {
    const gw = await startGatewayProcess(server.url);
    const port = portOf(gw);
    // one keep-alive socket, so a second request can ride the connection of the first
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await call(gw, '/readyz')).status).toBe(200);
      const q = freshQueue('term');
      const id = mintId();
      const payload = randomBytes(512 * 1024);
      const half = payload.length / 2;

      let responded = false;
      let req!: ReturnType<typeof request>;
      const answer = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
        req = request(
          new URL(gw.url + evalshaPath(q, id)),
          { method: 'POST', agent, headers: { Authorization: `Bearer ${gw.producer}`, 'Content-Length': String(payload.length) } },
          (res) => {
            responded = true;
            readAll(res).then((body) => resolve({ status: res.statusCode!, body, connection: res.headers.connection }), reject);
          },
        );
        req.on('error', reject);
      });
      // half the body, then SIGTERM while the rest is still to come
      await new Promise<void>((r) => req.write(payload.subarray(0, half), () => r()));
      await sleep(100);
      expect(responded).toBe(false);
      const exited = gw.stop(); // sends SIGTERM

      // the listener closes: new connections are refused while the old one is still open
      let closed = false;
      for (const deadline = Date.now() + 3_000; Date.now() < deadline; ) {
        if ((closed = await refused(port))) break;
        await sleep(20);
      }
      expect(closed).toBe(true);
      expect(responded).toBe(false);
      expect(gw.child.exitCode).toBeNull();

      // the rest of the body, slowly
      for (let off = half; off < payload.length; off += 64 * 1024) {
        req.write(payload.subarray(off, Math.min(off + 64 * 1024, payload.length)));
        await sleep(20);
      }
      req.end();
      const r = await answer;
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ result: 1 });
      // its client is told not to reuse the socket, so nothing holds the exit up
      expect(r.connection).toBe('close');
      expect(((await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer).equals(payload)).toBe(true);

      expect(await exited).toBe(0);
      expect(gw.stderr()).toMatch(/SIGTERM/);
      expect(await refused(port)).toBe(true);
    } finally {
      agent.destroy();
      await gw.stop();
    }
  }, 20_000);
});
