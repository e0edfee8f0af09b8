// `emq producer`'s configuration: the producer's (config.ts) and the Node process's own
// (HOST, PORT, VALKEY_URL, EMQ_WIRE_VERSION, the HTTP server's caps), all read and checked
// before anything connects or listens. The table: shared/config/variables.ts.
import { gatewayUrl, text, valkeyUrl, wholeNumber, wireVersion } from '../../shared/config/parse.js';
import { limitsFrom, type ServerLimits } from '../http/limits.js';
import { configFrom, type Config } from './config.js';

export interface NodeProducerConfig {
  config: Config;
  host: string;
  port: number;
  limits: ServerLimits;
  wireVersion: string;
  /** GET /metrics's bearer token (EMQ_METRICS_TOKEN); undefined: /metrics is off. */
  metricsToken: string | undefined;
  /** glide straight to Valkey, or REST through a gateway. */
  via: { valkeyUrl: string } | { restUrl: string; restToken: string };
}

export function nodeProducerConfigFrom(env: Record<string, string | undefined>): NodeProducerConfig {
  const config = configFrom(env);
  const wire = wireVersion(env, 'EMQ_WIRE_VERSION');
  const host = text(env, 'HOST')!;
  const port = wholeNumber(env, 'PORT');
  const limits = limitsFrom(env, 'EMQ_PRODUCER');
  const valkey = valkeyUrl(env, 'VALKEY_URL');
  const restToken = text(env, 'EMQ_REST_TOKEN');
  let via: NodeProducerConfig['via'];
  if (valkey) via = { valkeyUrl: valkey };
  else if (env.EMQ_REST_URL && restToken) via = { restUrl: gatewayUrl(env, 'EMQ_REST_URL')!, restToken };
  else throw new Error('set VALKEY_URL (glide, straight to Valkey) or EMQ_REST_URL and EMQ_REST_TOKEN (through a gateway)');
  return { config, host, port, limits, wireVersion: wire, metricsToken: text(env, 'EMQ_METRICS_TOKEN'), via };
}
