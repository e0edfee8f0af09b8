// The glide connection's own duties: URLs with credentials and db, cluster clients,
// and failing (never hanging) when the server is gone. Each test runs its own server.
import { afterEach, describe, expect, it } from 'vitest';
import { connectGlide } from '../shared/connections/glide.js';
import { ConnectionError, enqueue, enqueueMany, mintId } from '../shared/index.js';
import { ensureServer, startServer, type RunningServer } from '../scripts/valkey.js';
import { connectAdmin, freshQueue } from './support/admin.js';

const started: RunningServer[] = [];
async function server(config: string[] = []) {
  const s = await startServer({ binary: ensureServer(), config });
  started.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

describe('glide connection', () => {
  it('authenticates with user and password from the URL and selects the db', async () => {
    const s = await server(['user default off', 'user app on >p@ss:word ~* &* +@all']);
    const url = `redis://app:${encodeURIComponent('p@ss:word')}@127.0.0.1:${s.port}/2`;
    const conn = await connectGlide(url);
    const q = freshQueue();
    const id = mintId();
    expect(await enqueue(conn, q, id, 'in db 2')).toBe('enqueued');
    await conn.close();
    const admin = await connectAdmin(url);
    expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${id}`))).toBe(1);
    await admin.call('SELECT', '0');
    expect(Number(await admin.call('EXISTS', `emq:{${q}}:job:${id}`))).toBe(0);
    admin.close();
  });

  it('a wrong password fails with ConnectionError that does not repeat the password', async () => {
    const s = await server(['requirepass right-one']);
    const error = await connectGlide(`redis://:wrong-secret@127.0.0.1:${s.port}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).not.toContain('wrong-secret');
    expect((error as Error).message).toContain('***');
  });

  it('no server on the port: ConnectionError, not a hang', { timeout: 10_000 }, async () => {
    const s = await server();
    await s.stop();
    await expect(connectGlide({ url: s.url, connectTimeoutMs: 500 })).rejects.toBeInstanceOf(ConnectionError);
  });

  it('the server goes away mid-life: enqueue rejects with ConnectionError', { timeout: 20_000 }, async () => {
    const s = await server();
    const conn = await connectGlide({ url: s.url, requestTimeoutMs: 500, connectTimeoutMs: 500 });
    expect(await enqueue(conn, 'q', mintId(), 'x')).toBe('enqueued');
    await s.stop();
    await expect(enqueue(conn, 'q', mintId(), 'x')).rejects.toBeInstanceOf(ConnectionError);
    await conn.close();
  });

  it('talks to a Valkey Cluster with ?cluster=true: single enqueues, batches, and NOSCRIPT', async () => {
    const s = await server(['cluster-enabled yes', 'cluster-config-file nodes.conf']);
    const admin = await connectAdmin(s.url);
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    for (let i = 0; i < 100 && !/cluster_state:ok/.test(String(await admin.text('CLUSTER', 'INFO'))); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const conn = await connectGlide(`${s.url}?cluster=true`);
    const queues = ['alpha', 'beta', 'gamma'];
    const ids = queues.map(() => mintId());
    expect(await Promise.all(queues.map((q, i) => enqueue(conn, q, ids[i]!, q)))).toEqual(['enqueued', 'enqueued', 'enqueued']);
    await admin.call('SCRIPT', 'FLUSH');
    const batch = await enqueueMany(conn, 'beta', [
      { id: ids[1]!, payload: 'again' },
      { id: mintId(), payload: 'new' },
    ]);
    expect(batch.map((r) => r.verdict)).toEqual(['duplicate', 'enqueued']);
    for (const q of queues) expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(q === 'beta' ? 2 : 1);
    await conn.close();
    admin.close();
  });
});
