// Findings 6 and 7 of the second review on the Worker's POST …/jobs inside workerd, against
// the real gateway process (its producer body cap: the default 2 MiB).
import { describe, expect, inject, it, vi } from 'vitest';
import { producerFor } from '../../functions/producer/worker.js';

const gw = inject('gateway');
const TOKEN = 'second-review-token-0123456789';
const env = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
  EMQ_MAX_PAYLOAD_BYTES: String(4 * 1024 * 1024), // past the gateway's cap: its 413 reaches the Worker
};
const post = (path: string, body: BodyInit) =>
  Promise.resolve(
    producerFor(env).fetch(
      new Request(`http://producer${path}`, { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}` }, duplex: 'half' } as RequestInit),
      env,
    ),
  );

/** What `run` wrote through console.log (the request lines) and console.error. */
async function told(run: () => Promise<void>) {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const error = vi.spyOn(console, 'error').mockImplementation(() => {});
  try {
    await run();
    return {
      lines: log.mock.calls.map((a) => JSON.parse(String(a[0])) as Record<string, unknown>),
      errors: error.mock.calls.map((a) => a.map(String).join(' ')),
    };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('the Worker, POST …/jobs', () => {
  it('finding 6 (second review): a gateway 413 answers a fixed text, no URL or upstream words; the detail goes to console.error under the request id', async () => {
    let res!: Response;
    const { errors } = await told(async () => {
      res = await post(`/v1/queues/wsr-${Date.now().toString(36)}/jobs`, 'x'.repeat(2 * 1024 * 1024 + 4096));
    });
    const text = await res.text();
    // the endpoint's 413 answers a fixed text (as test/error-text.test.ts holds emq producer to)
    expect(res.status).toBe(413);
    const { code, detail } = JSON.parse(text) as { code: string; detail: string };
    expect(code).toBe('payload_too_large');
    for (const leak of ['http://', new URL(gw.url).host, 'REST', '413', 'larger than']) expect(detail).not.toContain(leak);
    expect(text).not.toContain(new URL(gw.url).host);
    const id = res.headers.get('X-Request-Id')!;
    const line = errors.find((e) => e.includes(`request ${id}:`));
    expect(line).toContain(`REST ${gw.url}`);
    expect(line).not.toContain(gw.producer);
  });

  it('finding 7 (second review): a body stream that fails mid-way is 499 client_closed in the log line, no stack', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('part of a payload'));
      },
      pull(c) {
        c.error(new Error('the client went away'));
      },
    });
    let res!: Response;
    const { lines, errors } = await told(async () => {
      res = await post('/v1/queues/wsr-abort/jobs', body);
    });
    expect(res.status).toBe(499);
    expect(((await res.json()) as { code: string }).code).toBe('client_closed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ status: 499, code: 'client_closed', route: '/v1/queues/:queue/jobs' });
    expect(errors).toEqual([]);
  });
});
