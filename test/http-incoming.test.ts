// functions/http/incoming.ts: a node:http request's body read under a cap, on body.ts's rules,
// against a real server on loopback and raw sockets; drain() reads and drops what is left once
// answered, so the connection carries the next request, or closes it when the body never ends.
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientClosed, TooLarge } from '../functions/http/body.js';
import { drain, readIncoming } from '../functions/http/incoming.js';

const MAX = 10;
let server: Server | undefined;

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** A server whose every request is read with readIncoming (cap MAX), answered with what was read, then drained. */
async function serve(outcomes: Array<{ body?: string; error?: unknown; bytes: number }>): Promise<number> {
  server = createServer((req: IncomingMessage, res) => {
    const read = { bytes: 0 };
    readIncoming(req, MAX, read).then(
      (body) => {
        outcomes.push({ body: Buffer.from(body).toString(), bytes: read.bytes });
        res.end(`read ${body.length}`);
      },
      (error: unknown) => {
        outcomes.push({ error, bytes: read.bytes });
        if (error instanceof TooLarge) res.writeHead(413).end('too large');
        if (!req.readableEnded) drain(req);
      },
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes `text` on a fresh connection; resolves with all it received once the server closes it or `ms` pass. */
function raw(port: number, text: string, ms = 1_500): Promise<{ received: string; closed: boolean }> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(text));
    let received = '';
    sock.on('data', (d) => (received += d));
    sock.on('error', () => undefined);
    const timer = setTimeout(() => (sock.destroy(), resolve({ received, closed: false })), ms);
    sock.once('close', () => (clearTimeout(timer), resolve({ received, closed: true })));
  });
}

const chunked = (...pieces: string[]) => pieces.map((p) => `${p.length.toString(16)}\r\n${p}\r\n`).join('');

describe('readIncoming', () => {
  it('reads a body at the cap and adds its bytes to the record', async () => {
    const outcomes: Array<{ body?: string; error?: unknown; bytes: number }> = [];
    const port = await serve(outcomes);
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '0123456789' });
    expect(await res.text()).toBe('read 10');
    expect(outcomes).toEqual([{ body: '0123456789', bytes: 10 }]);
  });

  it('refuses a declared Content-Length over the cap before reading a byte', async () => {
    const outcomes: Array<{ body?: string; error?: unknown; bytes: number }> = [];
    const port = await serve(outcomes);
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x'.repeat(MAX + 1) });
    expect(res.status).toBe(413);
    expect(outcomes[0]!.error).toBeInstanceOf(TooLarge);
    expect((outcomes[0]!.error as TooLarge).partly).toBe(false);
    expect(outcomes[0]!.bytes).toBe(0);
  });

  it('refuses a chunked body part way, counts what was read, and drain lets the connection carry the next request', async () => {
    const outcomes: Array<{ body?: string; error?: unknown; bytes: number }> = [];
    const port = await serve(outcomes);
    const post = `POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n${chunked('x'.repeat(6), 'y'.repeat(6), 'z'.repeat(6))}0\r\n\r\n`;
    const next = 'POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok';
    const { received } = await raw(port, post + next);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toContain('read 2');
    expect(outcomes[0]!.error).toBeInstanceOf(TooLarge);
    expect((outcomes[0]!.error as TooLarge).partly).toBe(true);
    expect(outcomes[0]!.bytes).toBeGreaterThan(MAX);
    expect(outcomes[1]).toEqual({ body: 'ok', bytes: 2 });
  });

  it('turns a client gone before its body ended into ClientClosed', async () => {
    const outcomes: Array<{ body?: string; error?: unknown; bytes: number }> = [];
    const port = await serve(outcomes);
    const sock = connect(port, '127.0.0.1', () => sock.write('POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 8\r\n\r\nabc'));
    sock.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 50));
    sock.destroy();
    await expect.poll(() => outcomes.length).toBe(1);
    expect(outcomes[0]!.error).toBeInstanceOf(ClientClosed);
  });
});

describe('drain', () => {
  it('closes a connection whose leftover body does not end within its time', async () => {
    const outcomes: Array<{ body?: string; error?: unknown; bytes: number }> = [];
    const port = await serve(outcomes);
    const started = performance.now();
    // a body refused part way whose last chunk never comes
    const { received, closed } = await raw(port, `POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n${chunked('x'.repeat(12))}`, 3_000);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(closed).toBe(true);
    // drain's 500 ms, not the server's own timeouts (minutes by default)
    expect(performance.now() - started).toBeGreaterThan(400);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
