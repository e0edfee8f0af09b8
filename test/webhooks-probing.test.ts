// Finding 5 (second review): webhook source names cannot be probed. An unknown source and a
// configured one whose delivery is unsigned, malformed, stale or wrongly signed get the same
// status, headers and byte-identical body, after the same handling of the body: read under
// the same cap, and the same number of HMACs of it. What differs is in the request's log
// line (`reason`), never in the answer. The producer app in-process; its Valkey path throws,
// so a refusal that reached it (that could write) fails the test.
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { requestLog } from '../functions/http/request-log.js';

const SOURCES = {
  gh: { kind: 'github', secrets: ['gh-probe-secret-0123456789'], queue: 'probe' },
  st: { kind: 'stripe', secrets: ['whsec_probe-stripe-0123', 'whsec_probe-stripe-4567'], queue: 'probe' },
  sw: { kind: 'standard', secrets: [`whsec_${Buffer.from('probe-standard-secret-bytes').toString('base64')}`], queue: 'probe' },
  hm: {
    kind: 'hmac',
    secrets: ['hm-probe-secret-a-0123456789', 'hm-probe-secret-b-0123456789', 'hm-probe-secret-c-0123456789'],
    queue: 'probe',
    signatureHeader: 'X-Probe-Sig',
    idHeader: 'X-Probe-Id',
    encoding: 'hex',
    toleranceSeconds: 123,
  },
};
const MOST_SECRETS = 3;
const CAP = 4096;

const lines: Array<Record<string, unknown>> = [];
const app = createProducerApp({
  config: (() => {
    const config = configFrom({
      EMQ_TOKENS: JSON.stringify([{ token: 'probe-token-0123456789', queues: ['*'], rawPrefixes: true }]),
      EMQ_SOURCES: JSON.stringify(SOURCES),
      EMQ_MAX_PAYLOAD_BYTES: String(CAP),
    });
    return () => config;
  })(),
  connection: () => {
    throw new Error('a refusal must not reach Valkey');
  },
  observe: { sinks: [requestLog({ app: 'producer', level: () => 'info', write: (l) => lines.push(JSON.parse(l)) })] },
});
afterEach(() => {
  lines.length = 0;
});

const now = () => Math.floor(Date.now() / 1000);
const wrong = (body: string) => createHmac('sha256', 'not-the-secret-0123456789').update(body).digest();

/** Each way a delivery fails its signature, as the headers for a source of each kind. */
function deliveries(body: string): Array<[string, string, Record<string, string>]> {
  const sig = wrong(body);
  const t = now();
  return [
    ['github unsigned', 'gh', { 'X-GitHub-Delivery': 'd1' }],
    ['github malformed', 'gh', { 'X-Hub-Signature-256': 'sha256=zz', 'X-GitHub-Delivery': 'd1' }],
    ['github wrongly signed', 'gh', { 'X-Hub-Signature-256': `sha256=${sig.toString('hex')}`, 'X-GitHub-Delivery': 'd1' }],
    ['stripe unsigned', 'st', {}],
    ['stripe malformed', 'st', { 'Stripe-Signature': `t=${t},v1=00` }],
    ['stripe stale', 'st', { 'Stripe-Signature': `t=${t - 3600},v1=${sig.toString('hex')}` }],
    ['stripe wrongly signed', 'st', { 'Stripe-Signature': `t=${t},v1=${sig.toString('hex')}` }],
    ['standard unsigned', 'sw', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(t) }],
    ['standard stale', 'sw', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(t + 3600), 'webhook-signature': `v1,${sig.toString('base64')}` }],
    ['standard wrongly signed', 'sw', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(t), 'webhook-signature': `v1,${sig.toString('base64')}` }],
    ['hmac unsigned', 'hm', { 'X-Probe-Id': 'p1' }],
    ['hmac malformed', 'hm', { 'X-Probe-Sig': 'nope', 'X-Probe-Id': 'p1' }],
    ['hmac wrongly signed', 'hm', { 'X-Probe-Sig': sig.toString('hex'), 'X-Probe-Id': 'p1' }],
    ['an unknown source, no headers', 'nope', {}],
    ['an unknown source, github headers', 'github', { 'X-Hub-Signature-256': `sha256=${sig.toString('hex')}`, 'X-GitHub-Delivery': 'd1' }],
    ['an unknown source, stripe headers', 'stripe', { 'Stripe-Signature': `t=${t},v1=${sig.toString('hex')}` }],
  ];
}

/** The answer (status, headers but the request id, body text), the HMACs it cost and its log line. */
async function probe(source: string, body: string, headers: Record<string, string>) {
  const sign = vi.spyOn(crypto.subtle, 'sign');
  const check = vi.spyOn(crypto.subtle, 'verify');
  try {
    const res = await app.fetch(new Request(`http://producer/v1/webhooks/${source}`, { method: 'POST', body, headers }));
    const head = [...res.headers.entries()].filter(([name]) => name !== 'x-request-id');
    return { status: res.status, head, text: await res.text(), hmacs: sign.mock.calls.length + check.mock.calls.length, line: lines.at(-1)! };
  } finally {
    sign.mockRestore();
    check.mockRestore();
  }
}

describe('finding 5 (second review): webhook source names cannot be probed', () => {
  it('finding 5 (second review): an unknown source and every refused delivery of a known one: one status, the same headers, byte-identical body, the same HMACs and bytes read', async () => {
    const body = JSON.stringify({ id: 'evt_probe', type: 'x', pad: 'p'.repeat(1000) });
    const seen = [];
    for (const [label, source, headers] of deliveries(body)) seen.push({ label, ...(await probe(source, body, headers)) });
    const first = seen[0]!;
    expect(first.status).toBe(401);
    expect(JSON.parse(first.text)).toMatchObject({ code: 'invalid_signature', detail: 'the delivery is not signed by a configured source' });
    for (const s of seen) {
      expect({ label: s.label, status: s.status, head: s.head, text: s.text }).toEqual({ label: s.label, status: 401, head: first.head, text: first.text });
      // the same work: the body read whole, and as many HMACs of it as the costliest wrong signature
      expect({ label: s.label, hmacs: s.hmacs, bytes: s.line.bytes }).toEqual({ label: s.label, hmacs: MOST_SECRETS, bytes: body.length });
      expect(s.line).toMatchObject({ status: 401, code: 'invalid_signature' });
    }
    // nothing about a source's kind, its headers or its tolerance in any answer
    for (const word of ['X-Probe-Sig', 'X-Hub-Signature', 'Stripe', 'webhook-signature', 'tolerance', '123']) expect(first.text).not.toContain(word);
  });

  it('finding 5 (second review): what a refusal stands for is in the log line only', async () => {
    const body = '{"id":"evt_1"}';
    const reasons = new Map<string, unknown>();
    for (const [label, source, headers] of deliveries(body)) reasons.set(label, (await probe(source, body, headers)).line.reason);
    expect(reasons.get('an unknown source, no headers')).toBe('unknown_source');
    expect(reasons.get('stripe stale')).toMatch(/^stale_timestamp: the delivery is signed \d+ s in the past; the tolerance is 300 s$/);
    expect(reasons.get('standard stale')).toMatch(/^stale_timestamp: .* in the future/);
    expect(reasons.get('hmac malformed')).toBe('invalid_signature: X-Probe-Sig is missing or not <32 bytes of hex>');
    expect(reasons.get('github wrongly signed')).toBe('invalid_signature: X-Hub-Signature-256 does not match the body');
  });

  it('finding 5 (second review): an unknown source has its body read under the same cap: over it, the same 413', async () => {
    const big = 'x'.repeat(CAP + 1);
    const unknown = await probe('nope', big, {});
    const known = await probe('hm', big, { 'X-Probe-Sig': wrong(big).toString('hex'), 'X-Probe-Id': 'p1' });
    expect(unknown.status).toBe(413);
    expect({ status: unknown.status, head: unknown.head, text: unknown.text }).toEqual({ status: known.status, head: known.head, text: known.text });
  });
});
