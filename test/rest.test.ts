// The REST connection's own duties, against the real gateway over real HTTP: one request
// per enqueue, one per batch, bytes JSON cannot carry, timeouts and bounded retries; over
// fetch and over undici (support/rest-sends.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRest } from '../shared/connections/rest.js';
import { AuthError, ConnectionError, enqueue, enqueueMany, mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { SENDS, behindDownValkey, recording } from './support/rest-sends.js';

describe.each(SENDS)('REST connection over $name', (via) => {
  const valkeyUrl = inject('servers')[0]!.url;
  let gateway: GatewayProcess;
  let admin: Admin;
  beforeAll(async () => {
    gateway = await startGatewayProcess(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
  });
  afterAll(async () => {
    admin?.close();
    expect(await gateway?.stop()).toBe(0);
  });

  it('one enqueue is one HTTP request; after SCRIPT FLUSH, two', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport });
    const q = freshQueue();
    await enqueue(rest, q, mintId(), 'warm');
    rec.seen.length = 0;
    await enqueue(rest, q, mintId(), 'steady');
    expect(rec.seen).toEqual(['POST /evalsha']);
    await admin.call('SCRIPT', 'FLUSH');
    rec.seen.length = 0;
    await enqueue(rest, q, mintId(), 'after flush');
    expect(rec.seen).toEqual(['POST /evalsha', 'POST /eval']);
  });

  it('enqueueMany is one /pipeline request', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport });
    const q = freshQueue();
    await enqueue(rest, q, mintId(), 'warm');
    rec.seen.length = 0;
    const jobs = Array.from({ length: 500 }, (_, i) => ({ id: mintId(), payload: `job ${i} ✓` }));
    const results = await enqueueMany(rest, q, jobs);
    expect(rec.seen).toEqual(['POST /pipeline']);
    expect(results.every((r) => r.verdict === 'enqueued')).toBe(true);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(501);
  });

  it('a batch whose JSON would pass the request limit goes as several /pipeline requests, each within it, every byte exact', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport, maxRequestBytes: 64 * 1024 });
    const q = freshQueue();
    // NUL bytes are UTF-8, but JSON writes each as \u0000: 6x the payload
    const jobs = Array.from({ length: 100 }, (_, i) => ({ id: mintId(), payload: new Uint8Array(2_000 + i) }));
    jobs.push({ id: mintId(), payload: new Uint8Array(100 * 1024) }); // too big for any pipeline: alone, as raw bytes
    const results = await enqueueMany(rest, q, jobs);
    expect(results.every((r) => r.verdict === 'enqueued')).toBe(true);
    expect(rec.pipelineBytes.length).toBeGreaterThan(5);
    expect(Math.max(...rec.pipelineBytes)).toBeLessThanOrEqual(64 * 1024);
    expect(rec.seen.at(-1)).toBe('POST /evalsha');
    for (const job of jobs) {
      const stored = (await admin.call('HGET', `emq:{${q}}:job:${job.id}`, 'payload')) as Buffer;
      expect(Buffer.compare(stored, Buffer.from(job.payload))).toBe(0);
    }
  });

  it('a batch with payloads that are not UTF-8 stores every byte, in order, in one pipeline of base64 arguments (after the probe that learns the gateway reads them)', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport });
    const q = freshQueue();
    await enqueue(rest, q, mintId(), 'warm');
    const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
    const id = mintId();
    const jobs = [
      { id: mintId(), payload: 'text' },
      { id, payload: binary },
      { id, payload: 'same id again, after the binary one' },
      { id: mintId(), payload: new Uint8Array([0xff]) },
      { id: mintId(), payload: new Uint8Array(0) },
    ];
    rec.seen.length = 0;
    const results = await enqueueMany(rest, q, jobs);
    expect(results.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'duplicate', 'enqueued', 'enqueued']);
    expect(rec.seen).toEqual(['POST /pipeline', 'POST /pipeline']);
    for (const [i, job] of jobs.entries()) {
      if (i === 2) continue;
      const stored = (await admin.call('HGET', `emq:{${q}}:job:${job.id}`, 'payload')) as Buffer;
      const want = typeof job.payload === 'string' ? Buffer.from(job.payload) : Buffer.from(job.payload);
      expect(Buffer.compare(Buffer.from(stored ?? []), want), `job ${i}`).toBe(0);
    }
  });

  it('a wrong token: AuthError at once, no retries', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: 'not-a-token', transport: rec.transport });
    const q = freshQueue();
    await expect(enqueue(rest, q, mintId(), 'x')).rejects.toBeInstanceOf(AuthError);
    expect(rec.seen).toHaveLength(1);
    expect(await admin.footprint(q)).toEqual({});
  });

  it('Valkey down behind the gateway: 503s are retried a bounded number of times, then ConnectionError', { timeout: 30_000 }, () =>
    behindDownValkey(async (gw) => {
      const rec = recording(via.transport());
      const rest = connectRest({ url: gw.url, token: gw.producer, retries: 2, backoffMs: 10, transport: rec.transport });
      const error = await enqueue(rest, 'q', mintId(), 'x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toMatch(/503/);
      expect(rec.seen).toEqual(['POST /evalsha', 'POST /evalsha', 'POST /evalsha']);
    }),
  );

  it("only this project's scripts are retried: another script gets one try", { timeout: 30_000 }, () =>
    behindDownValkey(async (gw) => {
      const rec = recording(via.transport());
      const rest = connectRest({ url: gw.url, token: gw.admin, retries: 2, backoffMs: 10, transport: rec.transport });
      await expect(rest.run({ op: 'eval', script: 'return 1', keys: [], args: ['x'] })).rejects.toBeInstanceOf(ConnectionError);
      expect(rec.seen).toHaveLength(1);
    }),
  );

  describe('an endpoint that never answers', () => {
    let silent: Server;
    let url: string;
    beforeAll(async () => {
      silent = createServer(() => {}); // holds every request open
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    });

    it('times out through AbortSignal with ConnectionError, after its bounded retries', { timeout: 10_000 }, async () => {
      const rec = recording(via.transport());
      const rest = connectRest({ url, token: 't', timeoutMs: 200, retries: 1, backoffMs: 10, transport: rec.transport });
      const error = await enqueue(rest, 'q', mintId(), 'x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toMatch(/no answer within 200 ms/);
      expect(rec.seen).toHaveLength(2);
    });
  });
});
