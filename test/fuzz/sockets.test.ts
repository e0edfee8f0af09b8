// The fuzz of connections that never make a request (functions/http/connection-guard.ts):
// silent, half-open, partial request lines, bytes trickled, garbage, partial TLS records, resets,
// from a handful of addresses, against the plain gateway, the HTTPS gateway and `emq producer`
// (real processes, small caps so the share and the cap are reached). After each case another
// address is served; at the end every such socket has been closed within the request line's
// timeout (and a sweep's lateness) of connecting, and nothing was written.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../scripts/valkey.js';
import { connectAdmin, type Admin } from '../support/admin.js';
import { get, hold, startListeners, type Held, type Listener } from '../support/listeners.js';
import { RUNS, params } from './setup.js';

const LINE_MS = 300;
const SLACK_MS = 1_500; // a sweep runs every LINE_MS / 4; the rest is a loaded runner
const settings = (prefix: string) => ({
  [`${prefix}_REQUEST_LINE_TIMEOUT_MS`]: String(LINE_MS),
  [`${prefix}_MAX_CONNECTIONS_PER_ADDRESS`]: '16',
  [`${prefix}_MAX_CONNECTIONS`]: '64',
});

const SHAPES = ['silent', 'partial-line', 'half-open', 'trickle', 'garbage', 'tls-partial', 'reset'] as const;
type Shape = (typeof SHAPES)[number];
interface Opened {
  shape: Shape;
  held: Held;
}

const noLf = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b.map((x) => (x === 10 ? 32 : x))));
const shapeArb = fc.record({ shape: fc.constantFrom(...SHAPES), address: fc.integer({ min: 2, max: 9 }), bytes: noLf });
const caseArb = fc.record({ listener: fc.integer({ min: 0, max: 2 }), shapes: fc.array(shapeArb, { minLength: 1, maxLength: 24 }) });
type Case = { listener: number; shapes: Array<{ shape: Shape; address: number; bytes: Buffer }> };

function open(l: Listener, { shape, address, bytes }: Case['shapes'][number]): Opened {
  const from = `127.0.0.${address}`;
  switch (shape) {
    case 'silent':
    case 'trickle':
    case 'reset':
      return { shape, held: hold(l.url, from) };
    case 'partial-line':
      return { shape, held: hold(l.url, from, `${l.post.line.slice(0, 1 + (bytes.length % (l.post.line.length - 2)))}`) };
    case 'half-open': {
      const held = hold(l.url, from, bytes);
      void held.opened.then(() => held.socket.end());
      return { shape, held };
    }
    case 'garbage':
      return { shape, held: hold(l.url, from, Buffer.concat([bytes, Buffer.from('\r\n')])) };
    case 'tls-partial':
      return { shape, held: hold(l.url, from, Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), bytes])) };
  }
}

describe(`fuzz sockets that never make a request (FUZZ_RUNS=${RUNS})`, () => {
  let server: RunningServer;
  let admin: Admin;
  let listeners: Listener[];
  const all: Opened[] = [];

  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    listeners = await startListeners(server.url, settings);
  }, 120_000);
  afterAll(async () => {
    for (const l of listeners ?? []) expect(await l.stop()).toBe(0);
    admin?.close();
    await server?.stop();
  }, 60_000);

  it('each listener closes them all within the request line timeout, serves another address meanwhile, and writes nothing', async () => {
    const before = Number(await admin.call('DBSIZE'));
    const examples: Array<[Case]> = [0, 1, 2].map((listener) => [
      { listener, shapes: SHAPES.map((shape, i) => ({ shape, address: 2 + i, bytes: Buffer.from('x') })) },
    ]);
    await fc.assert(
      fc.asyncProperty(caseArb, async (c: Case) => {
        const l = listeners[c.listener]!;
        const opened = c.shapes.map((s) => open(l, s));
        all.push(...opened);
        await Promise.all(opened.map((o) => o.held.opened));
        for (const o of opened) {
          if (o.shape === 'reset') o.held.socket.resetAndDestroy();
          if (o.shape === 'trickle') {
            const drip = setInterval(() => (o.held.isClosed() ? clearInterval(drip) : o.held.socket.write('G')), 40);
          }
        }
        const answer = await get(l, '/healthz', '127.0.0.100');
        expect(answer.status).toBe(200);
        expect(answer.ms).toBeLessThan(1_000);
      }),
      { ...params(RUNS), examples },
    );
    const times = await Promise.all(
      all.map(async (o) => ({
        shape: o.shape,
        ...(await Promise.race([o.held.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), LINE_MS + SLACK_MS + 1_000))])),
      })),
    );
    const slowest = new Map<Shape, number>();
    for (const t of times) slowest.set(t.shape, Math.max(slowest.get(t.shape) ?? 0, t.ms ?? Number.POSITIVE_INFINITY));
    console.log(`[fuzz sockets] ${all.length} sockets; the slowest closed, by shape: ${[...slowest].map(([s, ms]) => `${s} ${ms.toFixed(0)} ms`).join(', ')}`);
    for (const t of times) {
      expect(t.ms, `a ${t.shape} socket`).toBeLessThan(LINE_MS + SLACK_MS);
      // a request line never arrived: nothing answered but a parser's refusal of garbage
      if (t.shape !== 'garbage') expect(t.received, `a ${t.shape} socket`).toBe('');
    }
    expect(Number(await admin.call('DBSIZE'))).toBe(before);
  }, 120_000);
});
