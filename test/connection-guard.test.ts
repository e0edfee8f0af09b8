// Who may hold a connection to the Node listeners, and for how long before asking for anything
// (functions/http/connection-guard.ts), against the real processes at their default settings:
// the plain gateway, the HTTPS gateway and `emq producer`. Clients take their own source
// addresses on 127.0.0.0/8, so "one address" and "another client" are real distinct peers.
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect as netConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { get, hold, startListeners, until, type Held, type Listener } from './support/listeners.js';

const LINE_MS = 2_000; // EMQ_*_REQUEST_LINE_TIMEOUT_MS's default
const SHARE = 256; // EMQ_*_MAX_CONNECTIONS_PER_ADDRESS's default
const CAP = 1_024; // EMQ_*_MAX_CONNECTIONS's default
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long after connecting the server closed it: ms, or Infinity when it still held it after `ms`. */
async function closedWithin(held: Held, ms: number): Promise<number> {
  const timer = sleep(ms).then(() => Number.POSITIVE_INFINITY);
  const result = await Promise.race([held.closed.then((c) => c.ms), timer]);
  held.socket.destroy();
  return result;
}

/** A kept-alive connection that has had a request answered, and asks again on the same socket. */
interface Established {
  socket: Socket | TLSSocket;
  /** GET /healthz on this connection: the raw answer, or '' if the server closed it. */
  ask(): Promise<string>;
}

async function establish(listener: Listener, localAddress: string): Promise<Established> {
  const { hostname, port } = new URL(listener.url);
  const tcp = netConnect({ host: hostname, port: Number(port), localAddress });
  const socket = listener.ca ? tlsConnect({ socket: tcp, ca: listener.ca, servername: 'localhost' }) : tcp;
  socket.on('error', () => undefined);
  const ask = () =>
    new Promise<string>((resolve) => {
      let got = '';
      const onData = (d: Buffer) => {
        got += d;
        if (got.includes('"ok"}')) done();
      };
      const done = () => {
        socket.off('data', onData).off('close', done);
        resolve(got);
      };
      socket.on('data', onData).once('close', done);
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
  await new Promise<void>((resolve, reject) => {
    socket.once(listener.ca ? 'secureConnect' : 'connect', () => resolve());
    socket.once('close', () => reject(new Error('closed while connecting')));
  });
  expect(await ask()).toMatch(/^HTTP\/1\.1 200 /);
  return { socket, ask };
}

describe('the connection guard on every listener, at the default settings', () => {
  let server: RunningServer;
  let admin: Admin;
  let listeners: Listener[];

  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    listeners = await startListeners(server.url, () => ({}));
  });
  afterAll(async () => {
    for (const l of listeners ?? []) expect(await l.stop()).toBe(0);
    admin?.close();
    await server?.stop();
  });

  it('finding 1 (second review): 1,100 silent sockets from one address take only its share; another address is served in under 100 ms', async () => {
    for (const listener of listeners) {
      const held = Array.from({ length: 1_100 }, () => hold(listener.url, '127.0.0.2'));
      await Promise.all(held.map((h) => h.opened));
      // all but the address's share are closed as they arrive
      await until(() => held.filter((h) => h.isClosed()).length >= 1_100 - SHARE, 5_000, `${listener.name}: the sockets past the share closed`);
      const open = held.filter((h) => !h.isClosed()).length;
      await sleep(100); // the listener has settled
      // five fresh connections in a row, each answered; the fastest in under 100 ms (a fresh
      // TLS handshake alone takes 10-80 ms on a loaded 2-core runner, and the suite's other
      // project may share the cores; before the guard none was answered at all)
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await get(listener, '/healthz', '127.0.0.3'));
      const ms = answers.map((a) => a.ms.toFixed(1)).join(', ');
      console.log(`[finding 1] ${listener.name}: ${open} of 1,100 silent sockets from 127.0.0.2 held; GET /healthz from 127.0.0.3: 200 in ${ms} ms`);
      expect(open).toBeLessThanOrEqual(SHARE);
      for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: '{"status":"ok"}' });
      expect(Math.min(...answers.map((a) => a.ms))).toBeLessThan(100);
      // and the share itself is let go once the request line is overdue
      // (within the request line's timeout of their start, and well before the headers
      // timeout, 10 s; slack for a loaded runner, where an HTTPS burst delays the timers)
      await until(() => held.every((h) => h.isClosed()), LINE_MS + 5_000, `${listener.name}: the held share closed`);
    }
  });

  it(`finding 1 (second review): a silent socket, and one that sent part of a request line, are closed unanswered after ${LINE_MS} ms, not the headers timeout (10 s); nothing is written`, async () => {
    const before = Number(await admin.call('DBSIZE'));
    const results = await Promise.all(
      listeners.map(async (l) => {
        const silent = hold(l.url, '127.0.0.4');
        const partial = hold(l.url, '127.0.0.4', l.ca ? undefined : l.post.line.slice(0, 20));
        return { l, silent: await closedWithin(silent, 6_000), partial: await closedWithin(partial, 6_000), received: (await partial.closed).received };
      }),
    );
    for (const { l, silent, partial, received } of results) {
      console.log(`[finding 1] ${l.name}: silent socket closed after ${silent.toFixed(0)} ms; a partial request line after ${partial.toFixed(0)} ms`);
      for (const ms of [silent, partial]) {
        expect(ms).toBeGreaterThanOrEqual(LINE_MS - 50);
        expect(ms).toBeLessThan(LINE_MS + 1_500);
      }
      expect(received).toBe('');
    }
    expect(Number(await admin.call('DBSIZE'))).toBe(before);
  });

  it(`the request line's timeout ends at the first line: after it the headers timeout holds (headers trickled over 3 s are answered), and between requests the keep-alive timeout (a second request after 3 s is answered)`, async () => {
    await Promise.all(
      listeners.map(async (l) => {
        const kept = await establish(l, '127.0.0.5');
        const { socket } = kept;
        // trickled: the line, then a header every 500 ms for 3 s, then the end of the headers
        const answered = new Promise<string>((resolve) => {
          let got = '';
          socket.on('data', (d: Buffer) => (got += d));
          socket.once('close', () => resolve(got));
          setTimeout(() => resolve(got), 9_000); // 6 s of the test's own waits, and room
        });
        await sleep(3_000); // longer than the request line's timeout, shorter than the keep-alive's
        expect(socket.destroyed).toBe(false);
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        for (let i = 0; i < 6; i++) {
          await sleep(500);
          socket.write(`X-Slow-${i}: 1\r\n`);
        }
        socket.write('Connection: close\r\n\r\n');
        expect(await answered).toMatch(/^HTTP\/1\.1 200 [^]*"ok"\}$/);
      }),
    );
  });

  // The same code (the guard on the raw socket) serves the HTTPS gateway; it is left out here
  // because 1,024 sockets arriving at once cost it a TLS socket each: on a shared 2-core runner
  // that took it over a second, past the silent sockets' own deadline the test reads.
  it(`finding 1 (second review): at the cap (${CAP}), connections that have asked for something keep their place; newcomers take the place of the oldest silent sockets`, async () => {
    for (const listener of listeners.filter((l) => l.ca === undefined)) {
      const kept = await Promise.all(Array.from({ length: 8 }, () => establish(listener, '127.0.0.20')));
      // four addresses' full shares, 1,024 silent sockets: with the 8 above, past the cap
      const silent = [2, 3, 4, 5].flatMap((a) => Array.from({ length: SHARE }, () => hold(listener.url, `127.0.0.${a + 20}`)));
      await Promise.all(silent.map((h) => h.opened));
      await until(() => silent.filter((h) => h.isClosed()).length >= 8, 5_000, `${listener.name}: 8 silent sockets shed`);
      await sleep(100);
      // the fastest of three newcomers (the suite's other project may share the cores)
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await get(listener, '/healthz', `127.0.0.${30 + i}`));
      const answer = answers.reduce((a, b) => (b.ms < a.ms ? b : a));
      // read at once: in ${LINE_MS} ms from their start every silent socket goes anyway
      const closed = silent.map((h) => h.isClosed());
      const shed = closed.filter(Boolean).length;
      console.log(`[finding 1] ${listener.name}: at the cap, ${shed} silent sockets shed; a newcomer answered ${answer.status} in ${answer.ms.toFixed(1)} ms`);
      for (const a of answers) expect(a.status).toBe(200);
      expect(answer.ms).toBeLessThan(100);
      // the oldest were shed: the first address's, none of the others'
      expect(shed).toBeGreaterThanOrEqual(8); // the newcomer's own may still be on its way
      expect(closed.slice(SHARE).some(Boolean)).toBe(false);
      for (const k of kept) expect(await k.ask()).toMatch(/^HTTP\/1\.1 200 /);
      for (const k of kept) k.socket.destroy();
      for (const h of silent) h.socket.destroy();
      await sleep(200);
    }
  });

  it(`finding 2 (second review): the HTTPS gateway closes a silent socket, a partial TLS record and a trickled handshake after ${LINE_MS} ms, not Node's 120 s; and a finished handshake with no request line ${LINE_MS} ms later`, async () => {
    const tls = listeners.find((l) => l.ca !== undefined)!;
    const silent = hold(tls.url, '127.0.0.6');
    const partial = hold(tls.url, '127.0.0.6', Buffer.from([0x16, 0x03, 0x01, 0x02]));
    // a handshake record announcing 512 bytes, sent a byte every 200 ms: Node's handshake timeout restarts on each
    const trickled = hold(tls.url, '127.0.0.6', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]));
    const drip = setInterval(() => trickled.socket.write(Buffer.from([0x01])), 200);
    const { hostname, port } = new URL(tls.url);
    let handshakeAt = 0;
    const tcp = netConnect({ host: hostname, port: Number(port), localAddress: '127.0.0.6' });
    const quiet = tlsConnect({ socket: tcp, ca: tls.ca, servername: 'localhost' }, () => (handshakeAt = performance.now()));
    quiet.on('error', () => undefined);
    const quietClosed = new Promise<number>((resolve) => {
      quiet.once('close', () => resolve(performance.now() - handshakeAt));
      setTimeout(() => resolve(Number.POSITIVE_INFINITY), 8_000);
    });
    const [s, p, t] = await Promise.all([closedWithin(silent, 6_000), closedWithin(partial, 6_000), closedWithin(trickled, 6_000)]);
    clearInterval(drip);
    const q = await quietClosed;
    quiet.destroy();
    console.log(
      `[finding 2] HTTPS gateway: a silent socket closed after ${s.toFixed(0)} ms, 4 bytes of a TLS record after ${p.toFixed(0)} ms, a trickled handshake after ${t.toFixed(0)} ms; a handshake with no request line ${q.toFixed(0)} ms after it`,
    );
    for (const ms of [s, p, t, q]) {
      expect(ms).toBeGreaterThanOrEqual(LINE_MS - 50);
      expect(ms).toBeLessThan(LINE_MS + 1_500);
    }
    expect(handshakeAt).toBeGreaterThan(0);
  });
});
