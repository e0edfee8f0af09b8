// The Worker: the producer's Hono app (hono-app.ts) over the REST connection (the default on
// Workers), built once per isolate from its vars and secrets. With regions (regions.ts), a
// queue homed in another region goes through that region's gateway, so one queue's jobs share
// one Valkey. Each request logs a JSON line (EMQ_LOG) to Workers Logs, and, with an Analytics
// Engine dataset bound as EMQ_ANALYTICS, writes its data points (analytics.ts).
import { connectRest } from '../../shared/connections/rest.js';
import type { Connection } from '../../shared/index.js';
import { requestLog } from '../http/request-log.js';
import { datasetOf, writeAnalytics } from './analytics.js';
import { configFrom, restOptionsOf, type Config, type Vars } from './config.js';
import { createProducerApp } from './hono-app.js';
import { Problem } from './problem.js';
import { regionsFrom, type Regions } from './regions.js';

export type WorkerFetch = (request: Request, env?: unknown, ctx?: unknown) => Response | Promise<Response>;

/** The Worker's fetch for one configuration. */
export interface Producer {
  fetch: WorkerFetch;
}

let built: { env: Vars; key: string; producer: Producer } | undefined;

/** What the app is built from; workerd may hand each request a new env object with the same values. */
const keyOf = (env: Vars) =>
  JSON.stringify(
    Object.keys(env)
      .filter((k) => k.startsWith('EMQ_') && typeof env[k] === 'string') // vars, not bindings (EMQ_ANALYTICS)
      .sort()
      .map((k) => [k, env[k]]),
  );

/** A configuration error as the 500 the caller sees (its message names variables, never values of secrets). */
function configured<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new Problem(500, 'misconfigured', (err as Error).message);
  }
}

export function producerFor(env: Vars): Producer {
  if (built?.env === env) return built.producer;
  const key = keyOf(env);
  if (built?.key === key) {
    built.env = env;
    return built.producer;
  }
  let config: Config | undefined;
  let regions: Regions | undefined;
  const connections = new Map<string | undefined, Connection>(); // one per region reached
  const routes = () => (regions ??= configured(() => regionsFrom(env)));
  const log = requestLog({ app: 'worker', level: () => (config ??= configFrom(env)).logLevel, write: (line) => console.log(line) });
  const app = createProducerApp({
    observe: { sinks: [log, writeAnalytics] },
    // a misbound EMQ_ANALYTICS answers 500 misconfigured (naming it) before anything else is done
    precheck: (given) => void datasetOf(given as never),
    config: () => (config ??= configFrom(env)),
    regionOf: (queue) => routes().homeOf(queue),
    connection: (queue) => {
      const region = queue === undefined ? routes().local : routes().homeOf(queue);
      let connection = connections.get(region);
      if (connection) return connection;
      const { url, token } = configured(() => routes().gatewayOf(region));
      const options = restOptionsOf(configured(() => (config ??= configFrom(env))));
      connections.set(region, (connection = connectRest({ url, token, ...options })));
      return connection;
    },
  });
  const producer: Producer = { fetch: (request, given, ctx) => app.fetch(request, given as never, ctx as never) };
  built = { env, key, producer };
  return producer;
}

export default {
  fetch(request: Request, env: Vars, ctx: unknown): Response | Promise<Response> {
    return producerFor(env).fetch(request, env, ctx as never);
  },
};
