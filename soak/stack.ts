// What the soak runs against, all real and all on loopback: a valkey-server with AOF and
// appendfsync always, `emq gateway` as its own process on a fixed port (so it can be
// restarted under the Worker), and the producer Worker in workerd (wrangler's
// unstable_startWorker) over REST to that gateway with a control token (the control routes). Each part can be hurt and brought back.
import { GlideClient, Decoder } from '@valkey/valkey-glide';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../scripts/gateway-process.js';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { goOffline } from '../scripts/offline-env.js';
import { repoRoot } from '../scripts/repo-root.js';

export interface Stack {
  valkey: RunningServer;
  gateway: GatewayProcess;
  /** The Worker's origin. */
  worker: URL;
  /** The callers' token the Worker accepts for every queue and every action (enqueue, read, control). */
  token: string;
  /** A plain glide client named `soak-admin`, for faults and the final count. */
  admin: GlideClient;
  stop(): Promise<void>;
}

export async function startStack(): Promise<Stack> {
  const root = repoRoot();
  goOffline();

  const parts: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const p of parts.reverse()) await p().catch(() => undefined);
  };
  try {
    const valkey = await startServer({ config: ['appendonly yes', 'appendfsync always'] });
    parts.push(() => valkey.stop());
    const admin = await GlideClient.createClient({
      addresses: [{ host: '127.0.0.1', port: valkey.port }],
      clientName: 'soak-admin',
      defaultDecoder: Decoder.Bytes,
      requestTimeout: 10_000,
    });
    parts.push(async () => admin.close());
    const gateway = await startGatewayProcess(valkey.url);
    parts.push(() => gateway.stop());
    const token = `soak-${randomBytes(16).toString('hex')}`;
    const { unstable_startWorker } = await import('wrangler');
    const worker = await unstable_startWorker({
      config: join(root, 'wrangler.toml'),
      bindings: {
        EMQ_REST_URL: { type: 'plain_text', value: gateway.url },
        EMQ_REST_TOKEN: { type: 'secret_text', value: gateway.control },
        EMQ_TOKENS: { type: 'secret_text', value: JSON.stringify([{ token, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] }]) },
      },
      dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: false, watch: false, logLevel: 'none' },
    });
    parts.push(() => worker.dispose());
    await worker.ready;
    return { valkey, gateway, worker: await worker.url, token, admin, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
