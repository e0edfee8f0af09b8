// What the Node side provide()s to the workerd tests, for inject() to be typed there.
// Included by both the root tsconfig (where the global setups call provide()) and
// test/workers/tsconfig.json (where the tests call inject()): add new keys here.
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** test/workers/global-setup.ts: the byte-echo server on 127.0.0.1. */
    echoUrl: string;
    /** test/workers/global-setup.ts: GET it for the gateway process's stdout (its request log lines). */
    gatewayLogUrl: string;
    /** test/workers/global-setup.ts: the real gateway process, with an admin and a producer token. */
    gateway: { url: string; admin: string; producer: string };
    /** test/workers/global-setup.ts: a gateway whose private Valkey's {emq}:version is echomq:2.0.0. */
    mismatchedGateway: { url: string; admin: string; producer: string };
    /** test/global-setup.ts (the root global setup): the Valkey/Redis servers of this run. */
    servers: Array<{ name: string; url: string }>;
  }
}
