// The Worker: the producer app over the REST connection (the default on Workers), built
// once per isolate from its vars and secrets.
import { connectRest } from '../../shared/connections/rest.js';
import type { Connection } from '../../shared/index.js';
import { createProducer } from './app.js';
import { configFrom, type Config, type Vars } from './config.js';
import { Problem } from './problem.js';

type App = ReturnType<typeof createProducer>;

let built: { env: Vars; key: string; app: App } | undefined;

/** What the app is built from; workerd may hand each request a new env object with the same values. */
const keyOf = (env: Vars) => JSON.stringify(Object.keys(env).filter((k) => k.startsWith('EMQ_')).sort().map((k) => [k, env[k]]));

export function producerFor(env: Vars): App {
  if (built?.env === env) return built.app;
  const key = keyOf(env);
  if (built?.key === key) {
    built.env = env;
    return built.app;
  }
  let config: Config | undefined;
  let connection: Connection | undefined;
  const app = createProducer({
    config: () => (config ??= configFrom(env)),
    connection: () => {
      if (connection) return connection;
      const url = env.EMQ_REST_URL;
      const token = env.EMQ_REST_TOKEN;
      if (!url || !token) throw new Problem(500, 'misconfigured', 'EMQ_REST_URL and EMQ_REST_TOKEN must both be set');
      const timeoutMs = env.EMQ_REST_TIMEOUT_MS ? Number(env.EMQ_REST_TIMEOUT_MS) : undefined;
      return (connection = connectRest({ url, token, ...(timeoutMs ? { timeoutMs } : {}) }));
    },
  });
  built = { env, key, app };
  return app;
}

export default {
  fetch(request: Request, env: Vars, ctx: unknown): Response | Promise<Response> {
    return producerFor(env).fetch(request, env, ctx as never);
  },
};
