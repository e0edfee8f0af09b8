// Finding 8 (second review): a caller cannot choose the request id the hops log. Each server
// mints its own id; a caller's X-Request-Id is logged beside it as callerRequestId (bounded,
// printable ASCII), and only the minted id is sent on. A traceparent is passed on as version
// 00, 55 characters, or not at all. Real processes: `emq producer` over REST to `emq gateway`,
// and a plain HTTP listener standing in for the gateway to read what the producer sends.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { traceparentOf } from '../functions/http/request-record.js';
import { startServer } from '../scripts/valkey.js';
import { startGatewayProcess } from './support/gateway.js';
import { startProducerProcess } from './support/producer.js';

const CALLER = `caller-${randomBytes(12).toString('hex')}`;
const TOKENS = JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]);
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const linesOf = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function until<T>(read: () => T | undefined, ms = 10_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const got = read();
    if (got !== undefined) return got;
  }
  throw new Error('timed out');
}

describe('traceparentOf: version 00, 55 characters, or nothing', () => {
  const [trace, parent] = [hex(16), hex(8)];
  const v00 = `00-${trace}-${parent}-01`;
  it.each([
    ['version 00 as it came', v00, v00],
    ['version 00 with anything after it: dropped', `${v00}-x`, undefined],
    ['a later version with fields after a dash: its first 55 as version 00', `01-${trace}-${parent}-03-${'a'.repeat(450)}`, `00-${trace}-${parent}-03`],
    ['a later version of exactly 55', `cc-${trace}-${parent}-00`, `00-${trace}-${parent}-00`],
    ['a later version whose 56th character is not a dash: dropped', `01-${trace}-${parent}-01x`, undefined],
    ['version ff: dropped', `ff-${trace}-${parent}-01`, undefined],
    ['an all-zero trace id: dropped', `00-${'0'.repeat(32)}-${parent}-01`, undefined],
    ['upper-case hex: dropped', v00.toUpperCase(), undefined],
  ])('%s', (_, header, passed) => {
    expect(traceparentOf(header)?.header).toBe(passed);
  });
});

describe('finding 8 (second review): the servers mint the request id', () => {
  it('finding 8 (second review): X-Request-Id victim-req-0001 is logged as callerRequestId, never as a line id; the gateway logs the producer id as its caller id', async () => {
    const valkey = await startServer();
    const gateway = await startGatewayProcess(valkey.url);
    const producer = await startProducerProcess({ EMQ_TOKENS: TOKENS, EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer });
    try {
      const trace = hex(16);
      const send = (path: string, body: string) =>
        fetch(`${producer.url}${path}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${CALLER}`, 'X-Request-Id': 'victim-req-0001', traceparent: `01-${trace}-${hex(8)}-01-${'z'.repeat(450)}` },
          body,
        });
      // a job and a batch
      for (const [path, body] of [
        ['/v1/queues/ids-q/jobs', 'x'],
        ['/v1/queues/ids-q/batch', '[{"payload":"y"}]'],
      ] as const) {
        const res = await send(path, body);
        expect(res.status).toBeLessThan(300);
        const id = res.headers.get('X-Request-Id')!;
        expect(id).toMatch(/^[0-9a-f]{32}$/);
        const mine = await until(() => linesOf(producer.stdout()).find((l) => l.id === id));
        expect(mine).toMatchObject({ callerRequestId: 'victim-req-0001', trace });
        const theirs = await until(() => {
          const lines = linesOf(gateway.stdout()).filter((l) => l.callerRequestId === id);
          return lines.length > 0 ? lines : undefined;
        });
        for (const line of theirs) {
          expect(line.id).toMatch(/^[0-9a-f]{32}$/);
          expect(line.id).not.toBe(id);
          expect(line.trace).toBe(trace);
        }
      }
      const all = [...linesOf(producer.stdout()), ...linesOf(gateway.stdout())];
      expect(all.filter((l) => l.id === 'victim-req-0001')).toEqual([]);
    } finally {
      await producer.stop();
      await gateway.stop();
      await valkey.stop();
    }
  });

  it('finding 8 (second review): the producer sends its minted id and a 55-character traceparent, never the caller’s', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const upstream = createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on('end', () => res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"ERR no"}'));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const producer = await startProducerProcess({ EMQ_TOKENS: TOKENS, EMQ_REST_URL: url, EMQ_REST_TOKEN: `t-${hex(16)}` });
    try {
      const [trace, parent] = [hex(16), hex(8)];
      const res = await fetch(`${producer.url}/v1/queues/ids-q/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${CALLER}`, 'X-Request-Id': 'victim-req-0001', traceparent: `7f-${trace}-${parent}-01-${'z'.repeat(450)}` },
        body: 'x',
      });
      expect(res.status).toBe(502);
      const id = res.headers.get('X-Request-Id');
      expect(seen.length).toBeGreaterThan(0);
      for (const headers of seen) {
        expect(headers['x-request-id']).toBe(id);
        expect(headers.traceparent).toBe(`00-${trace}-${parent}-01`);
      }
    } finally {
      await producer.stop();
      await new Promise((r) => upstream.close(r));
    }
  });
});
