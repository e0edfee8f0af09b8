// Finding 6 (second review), its error-text half: an answer never carries a URL, a host or an
// upstream's own words. A real `emq gateway` with a small producer body cap answers 413 to
// the producer's REST calls; the producer (`emq producer`, over REST) answers its caller a
// fixed text and a stable code, and logs the detail on stderr under the request's id.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const CALLER = `caller-${randomBytes(12).toString('hex')}`;
const CAP = 64 * 1024;
let n = 0;
const fresh = () => `errtext-${Date.now().toString(36)}-${(n++).toString(36)}`;

describe('finding 6 (second review): a gateway 413 reaches the caller as a fixed text', () => {
  let valkey: RunningServer;
  let admin: Admin;
  let gateway: GatewayProcess;
  let producer: ProducerProcess;
  beforeAll(async () => {
    valkey = await startServer();
    admin = await connectAdmin(valkey.url);
    gateway = await startGatewayProcess(valkey.url, { EMQ_GATEWAY_PRODUCER_MAX_BODY: String(CAP) });
    producer = await startProducerProcess({
      EMQ_TOKENS: JSON.stringify([{ token: CALLER, queues: ['*'], rawPrefixes: true }]),
      EMQ_REST_URL: gateway.url,
      EMQ_REST_TOKEN: gateway.producer,
      EMQ_MAX_PAYLOAD_BYTES: String(4 * CAP),
    });
  });
  afterAll(async () => {
    await producer?.stop();
    await gateway?.stop();
    admin?.close();
    await valkey?.stop();
  });

  /** What an answer must not hold: the gateway's URL, its host:port, its own error text. */
  const leaks = (text: string) => {
    const { host } = new URL(gateway.url);
    expect(text).not.toContain('http://');
    expect(text).not.toContain(host);
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toMatch(/REST|413|larger than \d+ bytes/);
  };

  const post = (path: string, body: string, id: string) =>
    fetch(`${producer.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${CALLER}`, 'X-Request-Id': id }, body });

  it.each([
    ['a same-queue flow', 'flows'],
    ['one job', 'jobs'],
  ])(
    'finding 6 (second review): %s over the gateway cap: 413 payload_too_large, no URL or upstream text, the detail logged under the request id',
    async (_, route) => {
      const q = fresh();
      const big = 'x'.repeat(CAP + 1024);
      const body = route === 'flows' ? JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: big }, { payload: big }] }) : big;
      const res = await post(`/v1/queues/${q}/${route}`, body, `hidden-${route}`);
      const text = await res.text();
      expect(res.status).toBe(413);
      expect(JSON.parse(text)).toMatchObject({ code: 'payload_too_large' });
      leaks(JSON.parse(text).detail); // (the body's status field is the answer's own 413)
      expect(text).not.toMatch(/http:|127\.0\.0\.1|REST/);
      // the operator's line: the request's own (minted) id, the REST error with the gateway's words
      const id = res.headers.get('X-Request-Id')!;
      await expect.poll(() => producer.stderr(), { timeout: 5000 }).toContain(`request ${id}: POST /v1/queues/${q}/${route}: payload_too_large: `);
      const line = producer
        .stderr()
        .split('\n')
        .find((l) => l.includes(`request ${id}:`))!;
      expect(line).toContain(`REST ${gateway.url}`);
      expect(line).toContain('413');
      expect(line).not.toContain(gateway.producer); // never the token
      // nothing written
      expect(await admin.footprint(q)).toEqual({});
    },
  );
});
