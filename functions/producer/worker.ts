// The Worker: the producer's Hono app (hono-app.ts) over the REST connection (the default on
// Workers), built once per isolate from its vars and secrets. With regions (regions.ts), a
// queue homed in another region goes through that region's gateway, so one queue's jobs share
// one Valkey. Each request logs a JSON line (EMQ_LOG) to Workers Logs, and, with an Analytics
// Engine dataset bound as EMQ_ANALYTICS, writes its data points (analytics.ts).
// Its `scheduled` handler fires the cron schedules (EMQ_CRONS) whose expression is the fired
// trigger's and whose queue is homed in this region (cron-fire.ts), logged and counted alike.
import { connectRest } from '../../shared/connections/rest.js';
import type { Connection, Minter } from '../../shared/index.js';
import { requestLog } from '../http/request-log.js';
import { datasetOf, writeAnalytics } from './analytics.js';
import { configFrom, restOptionsOf, type Config, type Vars } from './config.js';
import { fire, type Fired } from './cron-fire.js';
import { minterOf } from './core.js';
import { createProducerApp } from './hono-app.js';
import { Problem } from './problem.js';
import { regionsFrom, type Regions } from './regions.js';

export type WorkerFetch = (request: Request, env?: unknown, ctx?: unknown) => Response | Promise<Response>;

/** What Cloudflare hands the `scheduled` handler (ScheduledController's fields read here). */
export interface ScheduledEvent {
  /** The trigger's expression, as written in wrangler.toml's `[triggers] crons`. */
  cron: string;
  /** When it was due, Unix ms: its minute is the fire's (the dedup key's). */
  scheduledTime: number;
}

/** The Worker's fetch and scheduled handlers for one configuration. */
export interface Producer {
  fetch: WorkerFetch;
  /** Fires the schedules of `event`; rejects, naming them, when any failed (or the configuration is bad). */
  scheduled(event: ScheduledEvent, env?: unknown): Promise<Fired[]>;
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
  const settings = () => (config ??= configFrom(env));
  const log = requestLog({ app: 'worker', level: () => settings().logLevel, write: (line) => console.log(line) });
  const sinks = [log, writeAnalytics];
  const connection = (queue?: string) => {
    const region = queue === undefined ? routes().local : routes().homeOf(queue);
    let connection = connections.get(region);
    if (connection) return connection;
    const { url, token } = configured(() => routes().gatewayOf(region));
    const options = restOptionsOf(configured(settings));
    connections.set(region, (connection = connectRest({ url, token, ...options })));
    return connection;
  };
  // one minter for requests and fires, on the configured node id (or one drawn at first use)
  let minted: Minter | undefined;
  const minter = () => (minted ??= minterOf(configured(settings)));
  const mint = Object.defineProperty(() => minter()(), 'node', { get: () => minter().node }) as Minter;
  const app = createProducerApp({
    observe: { sinks },
    // a misbound EMQ_ANALYTICS answers 500 misconfigured (naming it) before anything else is done
    precheck: (given) => void datasetOf(given as never),
    config: settings,
    regionOf: (queue) => routes().homeOf(queue),
    connection,
    minter: mint,
  });
  const scheduled = async ({ cron, scheduledTime }: ScheduledEvent, given: unknown = env): Promise<Fired[]> => {
    datasetOf(given as never);
    const { crons } = configured(settings);
    const { local, homeOf } = routes();
    // a trigger's expression may be shared by schedules homed in other regions: theirs fire there
    const due = crons.filter((s) => s.cron.text === cron && homeOf(s.queue) === local);
    if (due.length === 0) console.warn(`producer: scheduled ${JSON.stringify(cron)}: no schedule of EMQ_CRONS homed here has this expression`);
    const fired = await fire(due, scheduledTime, { config: configured(settings), connection, mint, sinks, env: given });
    const failed = fired.filter((f) => 'code' in f).map((f) => f.name);
    if (failed.length > 0)
      throw new Error(`EMQ_CRONS: ${failed.length} of ${fired.length} schedules did not fire: ${failed.join(', ')} (their log lines say why)`);
    return fired;
  };
  const producer: Producer = { fetch: (request, given, ctx) => app.fetch(request, given as never, ctx as never), scheduled };
  built = { env, key, producer };
  return producer;
}

export default {
  fetch(request: Request, env: Vars, ctx: unknown): Response | Promise<Response> {
    return producerFor(env).fetch(request, env, ctx as never);
  },
  /** A Cron Trigger: a bad configuration rejects, naming the variable (the event is marked failed). */
  async scheduled(controller: ScheduledEvent, env: Vars): Promise<void> {
    try {
      await producerFor(env).scheduled({ cron: controller.cron, scheduledTime: controller.scheduledTime }, env);
    } catch (err) {
      console.error(`producer: scheduled ${JSON.stringify(controller.cron)}: ${(err as Error).message}`);
      throw err;
    }
  },
};
