// `emq console`'s configuration, read whole and checked before it listens (the table of
// names, kinds, defaults and meanings: shared/config/variables.ts). A bad value stops the
// start, naming the variable, never its value.
import { ConfigError, gatewayUrl, text, wholeNumber } from '../../shared/config/parse.js';
import { limitsFrom, type ServerLimits } from '../http/limits.js';
import { parseSources, type Source } from '../producer/webhooks/sources.js';

export interface ConsoleConfig {
  /** The producer API it reads and acts through. */
  producerUrl: string;
  host: string;
  port: number;
  limits: ServerLimits;
  /** The webhook sources it can send a signed test delivery to (EMQ_SOURCES, the producer's table). */
  sources: ReadonlyMap<string, Source>;
}

export function consoleConfigFrom(env: Record<string, string | undefined>): ConsoleConfig {
  const producerUrl = gatewayUrl(env, 'EMQ_CONSOLE_PRODUCER_URL');
  if (!producerUrl) throw new ConfigError('EMQ_CONSOLE_PRODUCER_URL', 'EMQ_CONSOLE_PRODUCER_URL is not set: the console needs the producer API to read from');
  let sources: Map<string, Source>;
  try {
    sources = parseSources(env.EMQ_SOURCES);
  } catch (err) {
    // parseSources names the entry and field, never a secret
    throw new ConfigError('EMQ_SOURCES', (err as Error).message);
  }
  return {
    producerUrl: producerUrl.replace(/\/+$/, ''),
    host: text(env, 'EMQ_CONSOLE_HOST')!,
    port: wholeNumber(env, 'EMQ_CONSOLE_PORT'),
    limits: limitsFrom(env, 'EMQ_CONSOLE'),
    sources,
  };
}
