// What the soak runs against, all real and all on loopback: a valkey-server with AOF and
// appendfsync always, and a producer in front of it, by mode:
// - worker (the default): `emq gateway` as its own process on a fixed port (so it can be
//   restarted under the Worker), and the producer Worker in workerd (wrangler's
//   unstable_startWorker) over REST to that gateway with a control token (the control routes);
// - glide: `emq producer` as its own process, over glide straight to Valkey (no gateway).
// Each part can be hurt and brought back.
import { GlideClient, Decoder } from '@valkey/valkey-glide';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../scripts/gateway-process.js';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { goOffline } from '../scripts/offline-env.js';
import { repoRoot } from '../scripts/repo-root.js';
import { startProducerProcess } from './producer-process.js';

export type SoakMode = 'worker' | 'glide';

export interface StackOptions {
  mode?: SoakMode;
  /** EMQ_SOURCES for the producer (the webhooks verb), as its JSON. */
  sources?: Record<string, unknown>;
}

export interface Stack {
  mode: SoakMode;
  valkey: RunningServer;
  /** The gateway under the Worker; null in glide mode. */
  gateway: GatewayProcess | null;
  /** The producer's origin: the Worker's, or `emq producer`'s in glide mode. */
  worker: URL;
  /** The callers' token the producer accepts for every queue and every action (enqueue, read, control). */
  token: string;
  /** A plain glide client named `soak-admin`, for faults and the final count. */
  admin: GlideClient;
  /** Restarts the producer on the same port: workerd's Worker disposed and started again, or `emq producer` SIGTERMed and started again. */
  restartProducer(): Promise<string>;
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const { mode = 'worker', sources } = options;
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
    const token = `soak-${randomBytes(16).toString('hex')}`;
    const tokens = JSON.stringify([{ token, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] }]);
    const sourcesJson = sources ? JSON.stringify(sources) : undefined;
    if (mode === 'glide') {
      const producer = await startProducerProcess({ VALKEY_URL: valkey.url, EMQ_TOKENS: tokens, ...(sourcesJson ? { EMQ_SOURCES: sourcesJson } : {}) });
      parts.push(() => producer.stop());
      const restartProducer = async () => {
        const drained = await producer.restart();
        return `SIGTERM, ${drained ? 'drained' : 'not drained in 10 s: SIGKILL'}, started again on the same port`;
      };
      return { mode, valkey, gateway: null, worker: producer.url, token, admin, restartProducer, stop };
    }
    const gateway = await startGatewayProcess(valkey.url);
    parts.push(() => gateway.stop());
    const { unstable_startWorker } = await import('wrangler');
    const start = async (port: number) => {
      const w = await unstable_startWorker({
        config: join(root, 'wrangler.toml'),
        bindings: {
          EMQ_REST_URL: { type: 'plain_text', value: gateway.url },
          EMQ_REST_TOKEN: { type: 'secret_text', value: gateway.control },
          EMQ_TOKENS: { type: 'secret_text', value: tokens },
          ...(sourcesJson ? { EMQ_SOURCES: { type: 'secret_text', value: sourcesJson } } : {}),
        },
        dev: { server: { hostname: '127.0.0.1', port }, inspector: false, persist: false, watch: false, logLevel: 'none' },
      });
      await w.ready;
      return w;
    };
    let worker = await start(0);
    parts.push(() => worker.dispose());
    const url = await worker.url;
    // every isolate goes with its workerd: dispose stops it, and a new one serves the same port
    const restartProducer = async () => {
      await worker.dispose();
      worker = await start(Number(url.port));
      const again = await worker.url;
      if (again.port !== url.port) throw new Error(`the Worker came back on port ${again.port}, not ${url.port}`);
      return 'workerd disposed, started again on the same port';
    };
    return { mode, valkey, gateway, worker: url, token, admin, restartProducer, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
