// `emq producer` on SIGTERM while its clients keep their keep-alive sockets busy (the soak's
// `emq producer restart`, found there: the drain waited on sockets that never went idle, until
// a supervisor's SIGKILL). Each answer once draining began says `Connection: close`, so every
// socket closes after its request in flight and the process exits by itself.
import { request, Agent } from 'node:http';
import { expect, inject, it } from 'vitest';
import { connectAdmin, freshQueue } from './support/admin.js';
import { startProducerProcess } from './support/producer.js';

const TOKEN = 'drain-test-token-0123456789';

it('SIGTERM under steady keep-alive load: answers in flight finish with Connection: close, every acknowledged job is written, and it exits 0 within seconds', {
  timeout: 30_000,
}, async () => {
  const valkeyUrl = inject('servers')[0]!.url;
  const producer = await startProducerProcess({ VALKEY_URL: valkeyUrl, EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) });
  const admin = await connectAdmin(valkeyUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const q = freshQueue('drain');
  const post = () =>
    new Promise<{ status: number; connection?: string | undefined; id?: string | undefined }>((resolve) => {
      const req = request(new URL(`/v1/queues/${q}/jobs`, producer.url), { method: 'POST', agent, headers: { Authorization: `Bearer ${TOKEN}` } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, id: (JSON.parse(body) as { id?: string }).id }));
      });
      req.on('error', () => resolve({ status: 0 })); // refused once the listener is closed
      req.end('x');
    });
  let stopping = false;
  let sigtermAt = 0;
  const answers: Array<{ status: number; connection?: string | undefined; after: boolean }> = [];
  const loops = Array.from({ length: 8 }, async () => {
    while (!stopping) {
      const sentAfter = sigtermAt > 0;
      const a = await post();
      answers.push({ ...a, after: sentAfter });
      if (a.status === 0) return;
    }
  });
  try {
    await new Promise((r) => setTimeout(r, 500));
    sigtermAt = Date.now();
    const exited = new Promise<number | null>((r) => producer.child.once('exit', (code) => r(code)));
    producer.child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 8_000))]);
    stopping = true;
    expect(code).toBe(0);
    expect(Date.now() - sigtermAt).toBeLessThan(8_000);
    await Promise.all(loops);
    // the load was steady: some answers came during the drain, each telling its client to close
    const ok = answers.filter((a) => a.status === 201);
    expect(ok.length).toBeGreaterThan(10);
    const drained = answers.filter((a) => a.after && a.status === 201);
    for (const a of drained) expect(a.connection).toBe('close');
    // every 201 is a job written (none cut short by the exit)
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(ok.length);
  } finally {
    stopping = true;
    agent.destroy();
    await producer.stop();
    admin.close();
  }
});
