// /readyz needs no token, so it says only ready or not and a stable reason: never glide's
// words, an address, a user, a database or a credential. The gateway and `emq producer` (over
// glide, and over REST through a gateway), as real processes, in front of a real server.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { answerOf, type Answer } from './support/answer.js';
import { startGatewayProcess } from './support/gateway.js';
import { startProducerProcess } from './support/producer.js';

const USER = 'readyz-user-name';
const PASSWORD = 'pa@ss-w0rd-secret'; // a raw '@': the userinfo runs to the last one
const TOKEN = 'readyz-test-token-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const readyz = (base: string) => fetch(`${base}/readyz`).then(answerOf);

/** What must not show: the user, the password (and its halves around the '@'), the address, the URL, glide's words. */
function expectNothingOf(a: Answer, port: number, ...more: string[]) {
  const text = `${a.text}\n${[...a.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`;
  for (const secret of [
    USER,
    PASSWORD,
    'pa@ss',
    'w0rd-secret',
    '127.0.0.1',
    String(port),
    'redis://',
    'valkey:',
    'glide',
    'cannot connect',
    'timed out',
    '/3',
    ...more,
  ]) {
    expect(text, `/readyz shows ${secret}`).not.toContain(secret);
  }
}

/** /readyz until it answers `status` (the process notices a change within a probe or two). */
async function readyzUntil(base: string, status: number): Promise<Answer> {
  let last = await readyz(base);
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && last.status !== status; await sleep(100)) last = await readyz(base);
  return last;
}

describe('finding 9 (security review): /readyz tells ready or not and a stable reason, nothing else', () => {
  const started: Array<{ stop(): Promise<unknown> }> = [];
  afterAll(async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
  });

  it('the gateway, and emq producer through it, with a VALKEY_URL holding a user and a password with @, on a closed port', async () => {
    const port = await closedPort();
    const gw = await startGatewayProcess(`redis://${USER}:${PASSWORD}@127.0.0.1:${port}/3`, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
    started.push(gw);
    const viaRest = await startProducerProcess({
      EMQ_REST_URL: gw.url,
      EMQ_REST_TOKEN: gw.producer,
      EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
    });
    started.push(viaRest);

    for (let i = 0; i < 3; i++) {
      // the first finds Valkey gone, the next are answered while the gateway looks for it
      const g = await readyz(gw.url);
      expect(g.status).toBe(503);
      expect(g.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(g.json).toEqual({ status: 'unavailable', reason: 'valkey_unreachable' });
      expectNothingOf(g, port, gw.producer, gw.admin);

      const p = await readyz(viaRest.url);
      expect(p.status).toBe(503);
      expect(p.json).toMatchObject({ code: 'unavailable', status: 503 });
      expectNothingOf(p, port, gw.producer, gw.admin, new URL(gw.url).port);
    }
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  }, 60_000);

  describe('with a real server that knows the user', () => {
    let server: RunningServer;
    let admin: Admin;
    beforeAll(async () => {
      server = await startServer();
      admin = await connectAdmin(server.url);
      await admin.call('ACL', 'SETUSER', USER, 'on', `>${PASSWORD}`, '~*', '&*', '+@all');
    });
    afterAll(async () => {
      admin?.close();
      await server?.stop();
    });

    it('ready, then Valkey killed: the gateway and emq producer over glide say valkey_unreachable and nothing more', async () => {
      const url = `redis://${USER}:${PASSWORD}@127.0.0.1:${server.port}/3`;
      const gw = await startGatewayProcess(url, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
      started.push(gw);
      const viaGlide = await startProducerProcess({ VALKEY_URL: url, EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) });
      started.push(viaGlide);
      expect((await readyz(gw.url)).json).toEqual({ status: 'ready' });
      expect((await readyz(viaGlide.url)).json).toEqual({ status: 'ready' });

      await server.stop();
      const g = await readyzUntil(gw.url, 503);
      expect(g.status).toBe(503);
      expect(g.json).toEqual({ status: 'unavailable', reason: 'valkey_unreachable' });
      expectNothingOf(g, server.port);
      const p = await readyzUntil(viaGlide.url, 503);
      expect(p.status).toBe(503);
      expect(p.json).toMatchObject({ code: 'unavailable', status: 503 });
      expectNothingOf(p, server.port);

      server = await startServer({ port: server.port });
      admin.close();
      admin = await connectAdmin(server.url);
      await admin.call('ACL', 'SETUSER', USER, 'on', `>${PASSWORD}`, '~*', '&*', '+@all');
      expect((await readyzUntil(gw.url, 200)).json).toEqual({ status: 'ready' });
    }, 60_000);

    it("error replies that name the user (NOPERM for PING, and for the fence's GET): valkey_refused, and a wire mismatch without the reply's words", async () => {
      const url = `redis://${USER}:${PASSWORD}@127.0.0.1:${server.port}/3`;
      const gw = await startGatewayProcess(url, { EMQ_GATEWAY_TIMEOUT_MS: '1000' });
      started.push(gw);
      const viaGlide = await startProducerProcess({ VALKEY_URL: url, EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) });
      started.push(viaGlide);
      expect((await readyz(gw.url)).json).toEqual({ status: 'ready' });
      try {
        // permissions change under open connections
        await admin.call('ACL', 'SETUSER', USER, '-ping');
        const g = await readyz(gw.url);
        expect(g.status).toBe(503);
        expect(g.json).toEqual({ status: 'unavailable', reason: 'valkey_refused' });
        expectNothingOf(g, server.port, 'NOPERM', 'PermissionDenied', 'ping');

        // the fence cannot read {emq}:version: it fails closed, a mismatch whose found is no version
        await admin.call('ACL', 'SETUSER', USER, '+ping', '-get');
        const mismatch = { reason: 'wire_mismatch', code: 'wire_mismatch', expected: 'echomq:3.0.0', found: '(an error reply)' };
        const m = await readyzUntil(gw.url, 503);
        expect(m.json).toEqual({ status: 'unavailable', ...mismatch, error: expect.stringContaining('echomq:3.0.0') });
        expectNothingOf(m, server.port, 'NOPERM', 'PermissionDenied', "'get'");
        const p = await readyzUntil(viaGlide.url, 503);
        expect(p.json).toMatchObject({ code: 'wire_mismatch', expected: 'echomq:3.0.0', found: '(an error reply)' });
        expectNothingOf(p, server.port, 'NOPERM', 'PermissionDenied', "'get'");
      } finally {
        await admin.call('ACL', 'SETUSER', USER, '+@all');
      }
      expect((await readyzUntil(gw.url, 200)).json).toEqual({ status: 'ready' });
      expect((await readyzUntil(viaGlide.url, 200)).json).toEqual({ status: 'ready' });
    }, 60_000);
  });
});
