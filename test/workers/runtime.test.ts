// Runs inside workerd (the "workers" vitest project, @cloudflare/vitest-pool-workers).
// Proves the wiring the real edge tests rely on: the code under test is in the Workers
// runtime, values provided by Node-side global setups arrive through inject(), and
// outbound fetch from workerd reaches a Node server on 127.0.0.1 byte for byte.
import { describe, expect, inject, it } from 'vitest';

describe('workers project runtime', () => {
  it('runs inside workerd, not Node', () => {
    expect(navigator.userAgent).toBe('Cloudflare-Workers');
    expect(typeof WebSocketPair).toBe('function');
  });

  it('fetches a Node server on 127.0.0.1 and gets all 256 byte values back exactly', async () => {
    const url = inject('echoUrl');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const sent = Uint8Array.from({ length: 256 }, (_, i) => i);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: sent,
    });
    expect(res.status).toBe(200);
    const received = res.headers.get('x-received-hex');
    expect(received).toBe([...sent].map((b) => b.toString(16).padStart(2, '0')).join(''));
    const echoed = new Uint8Array(await res.arrayBuffer());
    expect(echoed.byteLength).toBe(256);
    expect([...echoed]).toEqual([...sent]);
  });

  it('sees the Valkey servers the root global setup provided', () => {
    const servers = inject('servers');
    expect(servers.length).toBeGreaterThan(0);
    for (const s of servers) expect(s.url).toMatch(/^rediss?:\/\//);
  });
});
