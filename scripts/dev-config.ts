// `npm start`'s configuration, checked whole before anything starts: its own variables
// (EMQ_DEV_TOKEN, PORT, VALKEY_URL), the console's (EMQ_CONSOLE_*: not the Worker's), the gateway's (EMQ_GATEWAY_*, EMQ_WIRE_VERSION: its
// gateway reads this environment), and the Worker's (every other EMQ_* variable reaches the
// Worker as a var), read with the same modules the gateway and the Worker read them with.
// A bad value (a dev token too short for the producer included) stops it, naming the
// variable, never its value. The table: shared/config/variables.ts.
import { randomBytes } from 'node:crypto';
import { text, valkeyUrl, wholeNumber } from '../shared/config/parse.js';
import { gatewayConfigFrom } from '../functions/gateway/config.js';
import { configFrom } from '../functions/producer/config.js';
import { triggersOf } from '../functions/producer/crons.js';
import { parseCallerTokens } from '../functions/producer/tokens.js';
import { regionsFrom } from '../functions/producer/regions.js';
import { consoleConfigFrom } from '../functions/console/config.js';

type Env = Record<string, string | undefined>;

/** The Worker's secrets npm start makes itself (EMQ_TOKENS: with the given ones, after the dev token's). */
const MADE_HERE = new Set(['EMQ_TOKENS', 'EMQ_REST_TOKEN', 'EMQ_DEV_TOKEN']);

export interface DevConfig {
  /** The Worker's port. */
  port: number;
  devToken: string;
  /** Whether the dev token came from EMQ_DEV_TOKEN. */
  devTokenGiven: boolean;
  /** VALKEY_URL, or undefined for a private server. */
  valkeyUrl: string | undefined;
  /** The producer token npm start's gateway accepts and its Worker sends. */
  gatewayToken: string;
  /** What the gateway is started with. */
  gatewayEnv: Env;
  /** The Worker's vars and secrets, given its gateway's URL. */
  workerVars(restUrl: string): Record<string, string>;
  /** EMQ_CRONS' distinct expressions, each fired by GET /__scheduled?cron=… (wrangler dev --test-scheduled). */
  crons: string[];
}

export function devConfigFrom(env: Env): DevConfig {
  const given = text(env, 'EMQ_DEV_TOKEN');
  const devToken = given ?? `dev-${randomBytes(16).toString('hex')}`;
  const port = wholeNumber(env, 'PORT');
  const valkey = valkeyUrl(env, 'VALKEY_URL');
  // the dev token may do everything, so its gateway token is a control token
  const gatewayToken = `dev-control-${randomBytes(16).toString('hex')}`;
  const gatewayEnv = { ...env, EMQ_GATEWAY_TOKENS: `control:${gatewayToken}`, EMQ_GATEWAY_PORT: env.EMQ_GATEWAY_PORT ?? '0' };
  // EMQ_TOKENS given here (say, a token that lacks a capability, to try it) join the dev token
  const others = env.EMQ_TOKENS ? (parseCallerTokens(env.EMQ_TOKENS), JSON.parse(env.EMQ_TOKENS) as unknown[]) : [];
  const tokens = JSON.stringify([{ token: devToken, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] }, ...others]);
  const workerVars = (restUrl: string): Record<string, string> => ({
    ...(Object.fromEntries(
      Object.entries(env).filter(([k, v]) => k.startsWith('EMQ_') && !k.startsWith('EMQ_CONSOLE_') && !MADE_HERE.has(k) && v !== undefined),
    ) as Record<string, string>),
    EMQ_REST_URL: restUrl,
    EMQ_REST_TOKEN: gatewayToken,
    EMQ_TOKENS: tokens,
  });
  // the gateway's and the Worker's configuration, as they will read it (a stand-in Valkey URL
  // while the private server is not started yet; the gateway's port is not known yet either)
  gatewayConfigFrom({ ...gatewayEnv, VALKEY_URL: valkey ?? 'redis://127.0.0.1:6379' });
  const vars = workerVars('http://127.0.0.1:8079');
  const { crons } = configFrom(vars);
  regionsFrom(vars).gatewayOf(undefined);
  // the console's, with its producer (the Worker) as it will be
  consoleConfigFrom({ ...env, EMQ_CONSOLE_PRODUCER_URL: `http://127.0.0.1:${port}` });
  return { port, devToken, devTokenGiven: given !== undefined, valkeyUrl: valkey, gatewayToken, gatewayEnv, workerVars, crons: triggersOf(crons) };
}
