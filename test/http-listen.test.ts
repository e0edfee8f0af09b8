// functions/http/listen.ts: a request listener on a node:http (or, given a certificate and key,
// node:https) server with its caps and timeouts, resolving once it listens with the URL it
// answers on: http or https, an IPv6 address in brackets, the port it was given (0: its own).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ServerLimits } from '../functions/http/limits.js';
import { listen } from '../functions/http/listen.js';
import { selfSigned } from './support/self-signed.js';

const limits: ServerLimits = {
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 3_000,
  keepAliveTimeoutMs: 1_000,
  maxConnections: 8,
  maxConnectionsPerAddress: 4,
  requestLineTimeoutMs: 1_000,
};
const listener = (_req: unknown, res: { end(body: string): void }) => res.end('hello');
const dir = mkdtempSync(join(tmpdir(), 'emq-listen-'));
const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('listen', () => {
  it('resolves with the http URL of an IPv4 address and the port it was given, and answers there', async () => {
    const { server, url } = await listen({ listener, host: '127.0.0.1', port: 0, limits });
    servers.push(server);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(url).port)).toBe((server.address() as { port: number }).port);
    expect(await (await fetch(`${url}/`)).text()).toBe('hello');
  });

  it('puts an IPv6 address in brackets', async () => {
    const { server, url } = await listen({ listener, host: '::1', port: 0, limits });
    servers.push(server);
    expect(url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    expect(await (await fetch(`${url}/`)).text()).toBe('hello');
  });

  it('sets the caps and timeouts on the server', async () => {
    const { server } = await listen({ listener, host: '127.0.0.1', port: 0, limits });
    servers.push(server);
    expect(server.headersTimeout).toBe(limits.headersTimeoutMs);
    expect(server.requestTimeout).toBe(limits.requestTimeoutMs);
    expect(server.keepAliveTimeout).toBe(limits.keepAliveTimeoutMs);
  });

  it('serves HTTPS with the certificate and key it is given, at an https URL', async () => {
    const [certPath, keyPath] = selfSigned(dir, 'listen');
    const cert = readFileSync(certPath);
    const { server, url } = await listen({ listener, host: '127.0.0.1', port: 0, limits, tls: { cert, key: readFileSync(keyPath) } });
    servers.push(server);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const body = await new Promise<string>((resolve, reject) => {
      httpsGet(`${url}/`, { ca: cert }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(body).toBe('hello');
  });

  it('rejects when the address cannot be listened on', async () => {
    const first = await listen({ listener, host: '127.0.0.1', port: 0, limits });
    servers.push(first.server);
    const port = Number(new URL(first.url).port);
    await expect(listen({ listener, host: '127.0.0.1', port, limits })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
