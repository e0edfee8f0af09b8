// The typed client against the producer app on Node (`emq producer`, glide to Valkey), over
// real HTTP: ids minted on the client, exact bytes, problems as ProducerError, and retries
// that never make a second job.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProducerError, createProducerClient } from '../client/index.js';
import { decodeId } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { libraryConsumer } from './support/consumer.js';

const bin = fileURLToPath(new URL('../bin/emq.js', import.meta.url));
const TOKEN = 'client-test-token-0123456789';

describe('createProducerClient (typed client)', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let producer: ChildProcess;
  let url: string;
  let admin: Admin;

  beforeAll(async () => {
    admin = await connectAdmin(valkeyUrl);
    producer = spawn(process.execPath, [bin, 'producer'], {
      env: { ...process.env, VALKEY_URL: valkeyUrl, PORT: '0', EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      producer.stdout!.on('data', (d) => {
        out += d;
        const m = /^(http:\/\/\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      producer.once('exit', (code) => reject(new Error(`emq producer exited with ${code}`)));
    });
  });
  afterAll(async () => {
    admin?.close();
    if (producer && producer.exitCode === null) {
      const exited = new Promise((r) => producer.once('exit', r));
      producer.kill('SIGTERM');
      await exited;
    }
  });

  it('enqueue and enqueueMany take group, delay and notBefore (sent as Emq-Group, Emq-Delay, Emq-Not-Before and item fields)', async () => {
    const client = createProducerClient({ url, token: TOKEN });
    const q = freshQueue('cplace');
    const consumer = libraryConsumer(admin, q);
    const lane = await client.enqueue(q, 'lane', { group: 'PRT0KHTOWnGLuC' });
    const delayed = await client.enqueue(q, 'later', { delay: 100, group: 'USR0NgWEfAEJfs' });
    const at = await client.enqueue(q, 'at', { notBefore: new Date(Date.now() + 100) });
    expect([lane.verdict, delayed.verdict, at.verdict]).toEqual(['enqueued', 'scheduled', 'scheduled']);
    const many = await client.enqueueMany(q, [
      { payload: 'm-flat' },
      { payload: 'm-lane', group: 'PRT0KHTOWnGLuC' },
      { payload: 'm-later', delay: '100ms' },
      { payload: 'm-at', notBefore: Date.now() + 100 },
    ]);
    expect(many.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled', 'scheduled']);
    expect((await consumer.claim())?.id).toBe(many[0]!.id);
    expect((await consumer.gclaim())?.id).toBe(lane.id);
    await new Promise((r) => setTimeout(r, 200));
    expect(await consumer.promote()).toBe(4);
    const err = await client.enqueue(q, 'x', { delay: '5' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProducerError);
    expect((err as ProducerError).code).toBe('invalid_delay');
    const bad = await client.enqueueMany(q, [{ payload: 'x', group: 'nope' }]).catch((e: unknown) => e);
    expect((bad as ProducerError).problem).toMatchObject({ code: 'invalid_batch', index: 0 });
  });

  it('enqueue: mints a JOB id on the client, stores the bytes exactly, duplicate on the same id', async () => {
    const client = createProducerClient({ url, token: TOKEN });
    const q = freshQueue('client');
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const first = await client.enqueue(q, bytes);
    expect(first).toMatchObject({ queue: q, verdict: 'enqueued' });
    expect(first.id).toMatch(/^JOB[0-9A-Za-z]{11}$/);
    expect(Date.now() - decodeId(first.id).unixMs).toBeLessThan(60_000);
    expect([...((await admin.call('HGET', `emq:{${q}}:job:${first.id}`, 'payload')) as Buffer)]).toEqual([...bytes]);
    expect(await client.enqueue(q, 'other', { id: first.id })).toEqual({ id: first.id, queue: q, verdict: 'duplicate' });
    expect(await client.status(q, first.id)).toEqual({ id: first.id, queue: q, state: 'pending', attempts: 0 });
  });

  it('enqueueMany: text, bytes that are not UTF-8, a BOM: all exact, verdicts in order', async () => {
    const client = createProducerClient({ url, token: TOKEN });
    const q = freshQueue('client');
    const jobs = [{ payload: 'text ✓' }, { payload: new Uint8Array([0xff, 0, 0xfe]) }, { payload: new Uint8Array([0xef, 0xbb, 0xbf, 0x41]) }];
    const results = await client.enqueueMany(q, jobs);
    expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'enqueued']);
    const stored = await Promise.all(results.map(async (r) => [...((await admin.call('HGET', `emq:{${q}}:job:${r.id}`, 'payload')) as Buffer)]));
    expect(stored).toEqual([[...Buffer.from('text ✓')], [0xff, 0, 0xfe], [0xef, 0xbb, 0xbf, 0x41]]);
  });

  it("a refusal is a ProducerError with the problem's code, and is not retried", async () => {
    let calls = 0;
    const client = createProducerClient({ url, token: 'wrong-token-0123456789', fetch: (i, init) => (calls++, fetch(i, init)) });
    const q = freshQueue('client');
    const error = await client.enqueue(q, 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProducerError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(calls).toBe(1);
    await expect(createProducerClient({ url, token: TOKEN }).enqueue('bad queue', 'x')).rejects.toMatchObject({ status: 400, code: 'invalid_queue' });
    expect(await admin.footprint(q)).toEqual({});
  });

  it('listQueues walks every page to each queue made; listJobs pages a state (a lane with group); a bad query is ProducerError 400', async () => {
    const client = createProducerClient({ url, token: TOKEN });
    const made = [freshQueue('client-lq'), freshQueue('client-lq')];
    const ids: string[] = [];
    for (const q of made) ids.push((await client.enqueue(q, 'abc')).id);
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof client.listQueues>> = await client.listQueues({ count: 5000, ...(cursor !== null && { cursor }) });
      for (const q of page.queues) if (made.includes(q.name)) seen.add(q.name);
      cursor = page.cursor;
    } while (cursor !== null);
    expect(seen).toEqual(new Set(made));
    const later = (await client.enqueue(made[0]!, 'later', { delay: '1h' })).id;
    expect(await client.listJobs(made[0]!)).toEqual({
      queue: made[0],
      state: 'pending',
      jobs: [{ id: ids[0], state: 'pending', attempts: 0, bytes: 3 }],
      cursor: null,
    });
    expect((await client.listJobs(made[0]!, { state: 'scheduled', limit: 1 })).jobs).toMatchObject([
      { id: later, state: 'scheduled', runAt: expect.any(Number) },
    ]);
    await expect(client.listJobs(made[0]!, { limit: 101 })).rejects.toMatchObject({ status: 400, code: 'invalid_query' });
    await expect(client.listQueues({ cursor: 'nope' })).rejects.toMatchObject({ status: 400, code: 'invalid_query' });
  });

  it('nodeId: the ids it mints carry it', async () => {
    const client = createProducerClient({ url, token: TOKEN, nodeId: 321 });
    const { id } = await client.enqueue(freshQueue('client'), 'x');
    expect(decodeId(id).node).toBe(321);
  });

  it('a duplicate on the first try of an id it minted is a collision: the job goes again under a fresh id', async () => {
    // another minter on the same node took the ids this client is about to mint: plant
    // their rows by asking what the producer would store, through a client with a
    // transport that records the ids and answers duplicate once for each
    const q = freshQueue('collide');
    const seen: string[] = [];
    let calls = 0;
    const client = createProducerClient({
      url,
      token: TOKEN,
      nodeId: 5,
      fetch: async (input, init) => {
        const body = typeof init?.body === 'string' && init.body.startsWith('[') ? (JSON.parse(init.body) as Array<{ id: string }>) : undefined;
        const ids = body ? body.map((b) => b.id) : [String((init?.headers as Record<string, string> | undefined)?.['Emq-Job-Id'])];
        seen.push(...ids);
        // the first try of the single enqueue (call 0) and of the batch (call 2) find someone
        // else's job already there under their first id
        if (calls++ === 0 || calls === 3) {
          await admin.call('HSET', `emq:{${q}}:job:${ids[0]}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
          await admin.call('ZADD', `emq:{${q}}:pending`, '0', ids[0]!);
        }
        return fetch(input, init);
      },
    });
    const one = await client.enqueue(q, 'mine');
    expect(one.verdict).toBe('enqueued');
    expect(seen).toHaveLength(2);
    expect(one.id).toBe(seen[1]);
    expect(String(await admin.text('HGET', `emq:{${q}}:job:${seen[0]}`, 'payload'))).toBe('theirs');
    expect(String(await admin.text('HGET', `emq:{${q}}:job:${one.id}`, 'payload'))).toBe('mine');

    seen.length = 0;
    const many = await client.enqueueMany(q, [{ payload: 'm0' }, { payload: 'm1' }]);
    expect(many.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued']);
    expect(seen).toHaveLength(3); // two, then the one that collided again under a fresh id
    expect(many[0]!.id).not.toBe(seen[0]);
    expect(many[1]!.id).toBe(seen[1]);
    for (const [r, p] of [
      [many[0]!, 'm0'],
      [many[1]!, 'm1'],
    ] as const) {
      expect(String(await admin.text('HGET', `emq:{${q}}:job:${r.id}`, 'payload'))).toBe(p);
    }
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(5);
  });

  it('flow: ids minted here, bytes exact, the parent released by the last child; a taken parent or child id minted here is minted again', async () => {
    const q = freshQueue('cflow');
    const other = freshQueue('cflow2');
    const client = createProducerClient({ url, token: TOKEN });
    const flow = await client.flow(q, {
      parent: { payload: 'sum' },
      children: [{ payload: new Uint8Array([0xff, 0]) }, { payload: 'there', queue: other, onFailure: 'ignore' }],
    });
    expect(flow.verdict).toBe('enqueued');
    expect(flow.children.map((c) => c.queue)).toEqual([q, other]);
    expect((await admin.hgetall(`emq:{${q}}:job:${flow.children[0]!.id}`)).payload).toEqual(Buffer.from([0xff, 0]));
    const [here, there] = [libraryConsumer(admin, q), libraryConsumer(admin, other)];
    const far = await there.claim();
    await there.complete(far!.id, far!.token);
    await there.pump();
    const near = await here.claim();
    expect(near?.id).toBe(flow.children[0]!.id);
    await here.complete(near!.id, near!.token);
    expect((await here.claim())?.id).toBe(flow.parent.id);
    expect(await client.status(q, flow.parent.id)).toMatchObject({ state: 'active' });

    // another minter took the ids this client mints first: the parent's (duplicate), then a child's (409 job_exists)
    for (const which of ['parent', 'child'] as const) {
      const sent: string[][] = [];
      const colliding = createProducerClient({
        url,
        token: TOKEN,
        fetch: async (input, init) => {
          const body = JSON.parse(String(init?.body)) as { parent: { id: string }; children: Array<{ id: string }> };
          sent.push([body.parent.id, ...body.children.map((c) => c.id)]);
          if (sent.length === 1) {
            const taken = which === 'parent' ? body.parent.id : body.children[1]!.id;
            await admin.call('HSET', `emq:{${q}}:job:${taken}`, 'state', 'pending', 'attempts', '0', 'payload', 'theirs');
          }
          return fetch(input, init);
        },
      });
      const landed = await colliding.flow(q, { parent: { payload: 'P' }, children: [{ payload: 'a' }, { payload: 'b' }] });
      expect(landed.verdict).toBe('enqueued');
      expect(sent).toHaveLength(2);
      const moved = which === 'parent' ? 0 : 2;
      sent[0]!.forEach((id, i) => (i === moved ? expect(sent[1]![i]).not.toBe(id) : expect(sent[1]![i]).toBe(id)));
      expect(String(await admin.text('HGET', `emq:{${q}}:job:${sent[0]![moved]}`, 'payload'))).toBe('theirs');
      expect([landed.parent.id, ...landed.children.map((c) => c.id)]).toEqual(sent[1]);
    }
  });

  describe('through a proxy that answers 503 to the first try, after the job has landed', () => {
    let proxy: Server;
    let proxyUrl: string;
    let seen: string[] = [];
    let failFirst = true;
    beforeAll(async () => {
      // forwards to the producer; on the first request of each test, forwards it and then
      // answers 503 anyway: the job landed, the client does not know
      proxy = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          seen.push(String(req.headers['emq-job-id'] ?? ''));
          const target = new URL(req.url!, url);
          const fwd = request(target, { method: req.method, headers: req.headers }, (up) => {
            const body: Buffer[] = [];
            up.on('data', (c) => body.push(c));
            up.on('end', () => {
              if (failFirst) {
                failFirst = false;
                res.writeHead(503, { 'Retry-After': '0', 'Content-Type': 'application/problem+json' }).end('{"code":"unavailable"}');
              } else res.writeHead(up.statusCode!, up.headers).end(Buffer.concat(body));
            });
          });
          fwd.end(Buffer.concat(chunks));
        });
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((r) => proxy.close(r)));

    it('the retry carries the same id: one job, and the answer is duplicate', async () => {
      seen = [];
      failFirst = true;
      const client = createProducerClient({ url: proxyUrl, token: TOKEN, backoffMs: 1 });
      const q = freshQueue('retry');
      const result = await client.enqueue(q, 'landed once');
      expect(seen).toHaveLength(2);
      expect(seen[0]).toBe(seen[1]);
      expect(result).toEqual({ id: seen[0], queue: q, verdict: 'duplicate' });
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(1);
    });

    it('a flow retried after a 503 keeps its ids: duplicate, nothing twice', async () => {
      failFirst = true;
      const client = createProducerClient({ url: proxyUrl, token: TOKEN, backoffMs: 1 });
      const q = freshQueue('retry');
      const flow = await client.flow(q, { parent: { payload: 'P' }, children: [{ payload: 'a' }, { payload: 'b' }] });
      expect(flow.verdict).toBe('duplicate');
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(2);
      expect(String(await admin.call('GET', `emq:{${q}}:job:${flow.parent.id}:dependencies`))).toBe('2');
    });

    it('a batch retried after a 503 keeps its ids: no job twice', async () => {
      failFirst = true;
      const client = createProducerClient({ url: proxyUrl, token: TOKEN, backoffMs: 1 });
      const q = freshQueue('retry');
      const results = await client.enqueueMany(q, [{ payload: 'a' }, { payload: 'b' }]);
      expect(results.map((r) => r.verdict)).toEqual(['duplicate', 'duplicate']);
      expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(2);
    });
  });
});
