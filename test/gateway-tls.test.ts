// `emq gateway` over HTTPS (EMQ_GATEWAY_TLS_CERT, EMQ_GATEWAY_TLS_KEY), as the real process in
// front of a real server, with a self-signed certificate made by openssl (support/self-signed.ts) and a client
// that trusts it; and every bad setting stopping the start.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { mintId } from '../shared/ids.js';
import { enqueueScript } from '../shared/scripts.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { selfSigned } from './support/self-signed.js';

interface Reply {
  status: number;
  body: string;
}

/** One HTTPS request that trusts `ca` (and only it). */
function httpsCall(
  url: string,
  ca: Buffer | undefined,
  { method = 'GET', token, body }: { method?: string; token?: string; body?: string | Buffer } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, ...(ca ? { ca } : {}), headers: token ? { Authorization: `Bearer ${token}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('finding 7 (security review): emq gateway serves HTTPS with EMQ_GATEWAY_TLS_CERT and EMQ_GATEWAY_TLS_KEY', () => {
  let dir: string;
  let cert: string;
  let key: string;
  let server: RunningServer;
  let admin: Admin;
  let gw: GatewayProcess;
  let ca: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emq-tls-'));
    [cert, key] = selfSigned(dir, 'gateway');
    ca = readFileSync(cert);
    server = await startServer();
    admin = await connectAdmin(server.url);
    await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
    gw = await startGatewayProcess(server.url, { EMQ_GATEWAY_TLS_CERT: cert, EMQ_GATEWAY_TLS_KEY: key, EMQ_GATEWAY_HEADERS_TIMEOUT_MS: '500' });
  });
  afterAll(async () => {
    const code = await gw?.stop();
    admin?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  it('it prints an https URL, and a client that trusts the certificate PINGs, enqueues and reads the probes', async () => {
    expect(gw.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(gw.stderr()).toContain('over HTTPS');
    expect(await httpsCall(`${gw.url}/ping`, ca, { token: gw.producer })).toEqual({ status: 200, body: '{"result":"PONG"}' });
    const q = freshQueue('tls');
    const id = mintId();
    const path = `/evalsha/${enqueueScript.sha1}/2/${encodeURIComponent(`emq:{${q}}:job:${id}`)}/${encodeURIComponent(`emq:{${q}}:pending`)}/${id}`;
    const payload = Buffer.from([0, 0xff, 0x80, 10, 13]);
    expect(await httpsCall(gw.url + path, ca, { method: 'POST', token: gw.producer, body: payload })).toEqual({ status: 200, body: '{"result":1}' });
    expect(((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer).equals(payload)).toBe(true);
    expect(await httpsCall(`${gw.url}/readyz`, ca)).toEqual({ status: 200, body: '{"status":"ready"}' });
    expect(await httpsCall(`${gw.url}/healthz`, ca)).toEqual({ status: 200, body: '{"status":"ok"}' });
  });

  it('it is really TLS: a client that does not trust the certificate, and plain HTTP on the same port, get no answer', async () => {
    await expect(httpsCall(`${gw.url}/ping`, undefined, { token: gw.producer })).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    await expect(fetch(`${gw.url.replace('https:', 'http:')}/ping`, { headers: { Authorization: `Bearer ${gw.producer}` } })).rejects.toThrow();
  });

  it('the caps hold over TLS too: trickled headers are cut off (408)', async () => {
    const { hostname, port } = new URL(gw.url);
    const received = await new Promise<string>((resolve) => {
      let got = '';
      const sock = connect({ host: hostname, port: Number(port), ca, servername: 'localhost' }, () => sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'));
      const timer = setInterval(() => sock.write('X-Slow: 1\r\n'), 100);
      sock.on('data', (d) => (got += d));
      sock.on('error', () => undefined);
      sock.once('close', () => (clearInterval(timer), resolve(got)));
      setTimeout(() => sock.destroy(), 15_000).unref(); // not hung
    });
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });

  describe('a bad setting stops the start (exit 2), naming the variable, never its value (the path)', () => {
    let other: string;
    let garbage: string;
    beforeAll(() => {
      [, other] = selfSigned(dir, 'other'); // a key that is not this certificate's
      garbage = join(dir, 'garbage.pem');
      writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    });
    const cases: Array<[string, () => Record<string, string>, string]> = [
      ['only the certificate', () => ({ EMQ_GATEWAY_TLS_CERT: cert }), 'EMQ_GATEWAY_TLS_CERT and EMQ_GATEWAY_TLS_KEY go together'],
      ['only the key', () => ({ EMQ_GATEWAY_TLS_KEY: key }), 'EMQ_GATEWAY_TLS_CERT and EMQ_GATEWAY_TLS_KEY go together'],
      [
        'a certificate file that is not there',
        () => ({ EMQ_GATEWAY_TLS_CERT: join(dir, 'missing.pem'), EMQ_GATEWAY_TLS_KEY: key }),
        'EMQ_GATEWAY_TLS_CERT names a file that cannot be read (ENOENT)',
      ],
      [
        'a key that is a directory',
        () => ({ EMQ_GATEWAY_TLS_CERT: cert, EMQ_GATEWAY_TLS_KEY: dir }),
        'EMQ_GATEWAY_TLS_KEY names a file that cannot be read (EISDIR)',
      ],
      ['a certificate that is not one', () => ({ EMQ_GATEWAY_TLS_CERT: garbage, EMQ_GATEWAY_TLS_KEY: key }), 'EMQ_GATEWAY_TLS_CERT is not a PEM certificate'],
      ['the key in place of the certificate', () => ({ EMQ_GATEWAY_TLS_CERT: key, EMQ_GATEWAY_TLS_KEY: key }), 'EMQ_GATEWAY_TLS_CERT is not a PEM certificate'],
      [
        'the certificate in place of the key',
        () => ({ EMQ_GATEWAY_TLS_CERT: cert, EMQ_GATEWAY_TLS_KEY: cert }),
        'EMQ_GATEWAY_TLS_KEY is not an unencrypted PEM private key',
      ],
      [
        "another certificate's key",
        () => ({ EMQ_GATEWAY_TLS_CERT: cert, EMQ_GATEWAY_TLS_KEY: other }),
        'EMQ_GATEWAY_TLS_KEY is not the private key of EMQ_GATEWAY_TLS_CERT',
      ],
    ];
    it.each(cases)('%s', async (_, env, message) => {
      const run = await emq(['gateway'], '', { VALKEY_URL: server.url, EMQ_GATEWAY_TOKENS: `admin:${gw.admin}`, EMQ_GATEWAY_PORT: '0', ...env() });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
      expect(run.stderr).not.toContain(dir);
      expect(run.stdout).toBe('');
    });
  });
});
