// The console's parts that need no browser: hidden characters shown as escapes, its test
// deliveries verified by the producer's own verifier (every kind), its configuration named
// and checked, and the gate's refusals answered before any producer call.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createConsoleApp } from '../functions/console/app.js';
import { consoleConfigFrom } from '../functions/console/config.js';
import { BYTES_SHOWN, Payload, TEXT_SHOWN, hexDump } from '../functions/console/payload.js';
import { signIn } from '../functions/console/session.js';
import { visible } from '../functions/console/show.js';
import { DELIVERY_ID, bodyOf, newDelivery, signedHeaders } from '../functions/console/webhook-sign.js';
import { parseSources } from '../functions/producer/webhooks/sources.js';
import { verify } from '../functions/producer/webhooks/verify.js';

describe('visible', () => {
  it('shows controls, bidi overrides and isolates, zero-width and lone surrogates as \\u escapes; leaves other text', () => {
    expect(visible('a\u202eb\u2066c\u200bd\u0000e\u007f\u0085\ufeff')).toBe('a\\u202eb\\u2066c\\u200bd\\u0000e\\u007f\\u0085\\ufeff');
    expect(visible('x\ud800y')).toBe('x\\ud800y');
    expect(visible('😀 é 中 <"\'>')).toBe('😀 é 中 <"\'>');
    expect(visible('line\nnext\ttab')).toBe('line\\u000anext\\u0009tab');
    expect(visible('line\nnext\ttab\r', true)).toBe('line\nnext\ttab\\u000d');
  });

  it('renders a payload escaped and cut: text to TEXT_SHOWN characters, binary as hex to BYTES_SHOWN bytes', async () => {
    const text = String(await Payload({ payload: `<b>"&'\u202e${'x'.repeat(TEXT_SHOWN)}`, copyUrl: '/c' }).toString());
    expect(text).toContain('&lt;b&gt;&quot;&amp;&#39;<span class="esc"');
    expect(text).not.toContain('<b>');
    expect(text).toContain(`the first ${TEXT_SHOWN} characters of ${TEXT_SHOWN + 7}`);
    const bytes = Buffer.alloc(BYTES_SHOWN + 10, 0xff);
    const binary = String(await Payload({ payloadBase64: bytes.toString('base64'), copyUrl: '/c' }).toString());
    expect(binary).toContain(`binary (not UTF-8), ${BYTES_SHOWN + 10} bytes; the first ${BYTES_SHOWN} are shown`);
    expect(binary).toContain('000001f0  ff ff');
    expect(binary).not.toContain('00000200');
    expect(binary).toContain('data-copy-as="base64"');
  });

  it('dumps bytes as offset, hex and printable ASCII', () => {
    expect(hexDump(new Uint8Array([0x3c, 0x00, 0xff, 0x41]))).toBe(`00000000  3c 00 ff 41${' '.repeat(36)}  <..A`);
  });
});

describe('test deliveries', () => {
  const sources = parseSources(
    JSON.stringify({
      gh: { kind: 'github', secrets: ['github-secret-0123456789'], queue: 'q' },
      st: { kind: 'stripe', secrets: ['whsec_stripe-secret-0123456'], queue: 'q' },
      sv: { kind: 'standard', secrets: [`whsec_${Buffer.from('standard-secret-0123456').toString('base64')}`], queue: 'q' },
      hx: {
        kind: 'hmac',
        secrets: ['hmac-secret-0123456789ab'],
        queue: 'q',
        signatureHeader: 'X-Sig',
        encoding: 'hex',
        signaturePrefix: 'sha256=',
        idHeader: 'X-Id',
      },
      hb: {
        kind: 'hmac',
        secrets: ['hmac-secret-0123456789ab'],
        queue: 'q',
        signatureHeader: 'X-Sig',
        encoding: 'base64',
        idHeader: 'X-Id',
        eventHeader: 'X-Ev',
      },
    }),
  );

  it.each([...sources.keys()])('%s: the producer verifies it, with the delivery id; a changed body or another secret does not', async (name) => {
    const source = sources.get(name)!;
    const d = newDelivery();
    expect(d.id).toMatch(DELIVERY_ID);
    const body = bodyOf(d);
    const headers = new Headers(await signedHeaders(source, d, body));
    const bytes = new TextEncoder().encode(body);
    expect(await verify(source, headers, bytes)).toMatchObject({ id: d.id });
    expect(await verify(source, headers, new TextEncoder().encode(body.replace('test', 'tost')))).toMatchObject({ code: 'invalid_signature' });
    const other = { ...source, secretBytes: [new TextEncoder().encode('another-secret-0123456789')] };
    expect(await verify(other, headers, bytes)).toMatchObject({ code: 'invalid_signature' });
    expect(bodyOf(d)).toBe(body); // a resend is byte for byte the same
    expect(JSON.stringify(Object.fromEntries(headers))).not.toContain(source.secrets[0]);
  });
});

describe('consoleConfigFrom', () => {
  it('defaults to 127.0.0.1:8786, and names a bad variable, never its value', () => {
    expect(consoleConfigFrom({ EMQ_CONSOLE_PRODUCER_URL: 'http://127.0.0.1:8787/' })).toMatchObject({
      producerUrl: 'http://127.0.0.1:8787',
      host: '127.0.0.1',
      port: 8786,
    });
    expect(() => consoleConfigFrom({})).toThrow(/EMQ_CONSOLE_PRODUCER_URL is not set/);
    expect(() => consoleConfigFrom({ EMQ_CONSOLE_PRODUCER_URL: 'http://producer.example.com' })).toThrow(/EMQ_CONSOLE_PRODUCER_URL must be an https:\/\/ URL/);
    expect(() => consoleConfigFrom({ EMQ_CONSOLE_PRODUCER_URL: 'https://p.example', EMQ_CONSOLE_PORT: 'x-secret' })).toThrow(
      /^EMQ_CONSOLE_PORT is not a whole number/,
    );
    const bad = JSON.stringify({ s: { kind: 'github', secrets: ['short-secret'], queue: 'q' } });
    expect(() => consoleConfigFrom({ EMQ_CONSOLE_PRODUCER_URL: 'https://p.example', EMQ_SOURCES: bad })).toThrow(/EMQ_SOURCES\.s\.secrets\[0\] is shorter/);
    try {
      consoleConfigFrom({ EMQ_CONSOLE_PRODUCER_URL: 'https://p.example', EMQ_SOURCES: bad });
    } catch (err) {
      expect((err as Error).message).not.toContain('short-secret');
    }
  });
});

describe('the gate, before any producer call', () => {
  let calls = 0;
  const app = createConsoleApp({
    producerUrl: 'http://127.0.0.1:9',
    sources: new Map(),
    fetch: async () => {
      calls++;
      throw new Error('no producer here');
    },
  });
  const at = (path: string) => `http://127.0.0.1:8786${path}`;

  it('no token: a page redirects to sign in, JSON and posts are 401; a cross-site or origin-less post with the cookie is 403; an over-long form 413', async () => {
    expect((await app.request(at('/q/x'))).headers.get('Location')).toBe('/signin');
    expect((await app.request(at('/queues.json'))).status).toBe(401);
    expect((await app.request(at('/q/x/pause'), { method: 'POST' })).status).toBe(401);
    const cookie = { Cookie: 'emq_console=some-token-0123456789' };
    expect((await app.request(at('/q/x/pause'), { method: 'POST', headers: { ...cookie, 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
    expect((await app.request(at('/q/x/pause'), { method: 'POST', headers: { ...cookie, Origin: 'http://evil.example' } })).status).toBe(403);
    expect((await app.request(at('/q/x/pause'), { method: 'POST', headers: cookie })).status).toBe(403);
    const big = 'x'.repeat(5_000);
    const signin = await app.request(at('/signin'), {
      method: 'POST',
      body: `token=${big}`,
      headers: { 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(signin.status).toBe(413);
    const junk = await app.request(at('/signin'), {
      method: 'POST',
      body: 'token=a%20b',
      headers: { 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(junk.status).toBe(400);
    const unknown = await app.request(at('/no/such/page'), { headers: { Authorization: 'Bearer some-token-0123456789' } });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('the console has no such page');
    expect(calls).toBe(0);
  });

  it('a sign-in cookie is Secure over https, or behind a proxy that says so', async () => {
    const app2 = new Hono().get('/', (c) => (signIn(c, 'token-0123456789abcdef'), c.text('ok')));
    const plain = (await app2.request('http://127.0.0.1/')).headers.get('Set-Cookie')!;
    expect(plain).toMatch(/HttpOnly/);
    expect(plain).toMatch(/SameSite=Strict/);
    expect(plain).toMatch(/Path=\//);
    expect(plain).not.toMatch(/Secure/);
    expect((await app2.request('https://console.example/')).headers.get('Set-Cookie')).toMatch(/Secure/);
    expect((await app2.request('http://127.0.0.1/', { headers: { 'X-Forwarded-Proto': 'https' } })).headers.get('Set-Cookie')).toMatch(/Secure/);
  });

  it('every answer carries the CSP, nosniff and no framing; the assets are files of this origin', async () => {
    for (const path of ['/signin', '/assets/console.js', '/assets/console.css', '/q/x']) {
      const res = await app.request(at(path));
      expect(res.headers.get('Content-Security-Policy'), path).toContain("frame-ancestors 'none'");
      expect(res.headers.get('X-Content-Type-Options'), path).toBe('nosniff');
    }
    expect((await app.request(at('/assets/console.js'))).headers.get('Content-Type')).toMatch(/^text\/javascript/);
  });
});
