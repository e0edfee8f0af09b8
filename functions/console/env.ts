// The Hono environment of the console's routes: who asks (session.ts) and the producer API
// on their behalf (producer.ts), set by the gate in app.tsx before any page or action runs.
import type { Source } from '../producer/webhooks/sources.js';
import type { Api } from './producer.js';
import type { Asker } from './session.js';

export interface ConsoleEnv {
  Variables: { asker: Asker; api: Api };
}

export interface ConsoleOptions {
  /** The producer API's base URL. */
  producerUrl: string;
  /** Webhook sources a test delivery may be signed for (EMQ_SOURCES). */
  sources: ReadonlyMap<string, Source>;
  /** The fetch calls to the producer go through (tests). */
  fetch?: typeof fetch;
}
