// ?wait=N: after each write, WAIT until N replicas have it; a shortfall is a ConnectionError
// (503 through the gateway), so the caller sends the same job again. Real servers: a
// primary alone, then with a replica started beside it.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { command } from '../functions/gateway/glide-commands.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { connectRest } from '../shared/connections/rest.js';
import { ConnectionError, enqueue, mintId } from '../shared/index.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

describe('?wait=1 on a primary', () => {
  let primary: RunningServer;
  let replica: RunningServer | undefined;
  let glide: GlideConnection;
  let admin: GlideConnection;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    primary = await startServer({ config: ['repl-diskless-sync-delay 0'] });
    const url = `${primary.url}?wait=1&wait_timeout_ms=200`;
    glide = await connectGlide(url);
    admin = await connectGlide(primary.url);
    gateway = await startGatewayProcess(url);
  }, 30_000);
  afterAll(async () => {
    await glide?.close();
    await admin?.close();
    if (gateway) expect(await gateway.stop()).toBe(0);
    await replica?.stop();
    await primary?.stop();
  });

  const exists = async (queue: string, id: string) => Number(((await command(admin.wire, ['EXISTS', `emq:{${queue}}:job:${id}`])) as { value: number }).value);

  it('without a replica: the enqueue fails with a clear, retryable error (the row is on the primary)', async () => {
    const id = mintId();
    const err = await enqueue(glide, 'durable', id, 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(/reached 0 of 1 replicas within 200 ms.*same id/);
    // WAIT cannot undo the write: it is there, only not yet safe from a failover
    expect(await exists('durable', id)).toBe(1);
  });

  it('through the gateway: 503, which the REST connection retries, then reports', { timeout: 20_000 }, async () => {
    const rest = connectRest({ url: gateway.url, token: gateway.producer, retries: 1 });
    const err = await enqueue(rest, 'durable', mintId(), 'y').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(/503/);
  });

  it('with a replica attached: the same id again is a duplicate, new jobs are enqueued, over glide and the gateway', { timeout: 30_000 }, async () => {
    const id = mintId();
    await enqueue(glide, 'durable', id, 'z').catch(() => undefined);
    replica = await startServer({ config: [`replicaof 127.0.0.1 ${primary.port}`] });
    for (let i = 0; ; i++) {
      const info = String(((await command(admin.wire, ['INFO', 'replication'])) as { value: unknown }).value);
      if (/connected_slaves:1/.test(info) && /state=online/.test(info)) break;
      if (i > 200) throw new Error(`the replica did not attach: ${info}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // a replica that has just come online may ack a WAIT late on a loaded machine: a shortfall
    // says "send it again with the same id", so the test does (bounded); the verdicts are the point
    const again = async (send: () => Promise<string>) => {
      for (let i = 0; ; i++) {
        try {
          return await send();
        } catch (err) {
          if (!(err instanceof ConnectionError) || i >= 20) throw err;
        }
      }
    };
    expect(await again(() => enqueue(glide, 'durable', id, 'z'))).toBe('duplicate');
    const fresh = mintId();
    expect(await again(() => enqueue(glide, 'durable', fresh, 'new'))).toMatch(/^(enqueued|duplicate)$/);
    const rest = connectRest({ url: gateway.url, token: gateway.producer });
    const viaGateway = mintId();
    expect(await again(() => enqueue(rest, 'durable', viaGateway, 'via gateway'))).toMatch(/^(enqueued|duplicate)$/);
    // and each acknowledged write is on the replica already (ioredis: glide will not talk to a replica alone)
    const onReplica = new Redis(replica.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await onReplica.connect();
      const m = Number(((await command(admin.wire, ['ZCARD', 'emq:{durable}:pending'])) as { value: number }).value);
      expect(m).toBeGreaterThanOrEqual(3);
      expect(await onReplica.zcard('emq:{durable}:pending')).toBe(m);
    } finally {
      onReplica.disconnect();
    }
  });
});
