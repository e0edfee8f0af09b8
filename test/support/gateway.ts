// The real gateway, as its own process (`emq gateway`), in front of a real server.
import { afterAll, beforeAll, expect } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../../scripts/gateway-process.js';
import { connectAdmin, type Admin } from './admin.js';
import { answerOf } from './answer.js';

export { startGatewayProcess, type GatewayProcess };

export interface GatewayHarness {
  gw: GatewayProcess;
  admin: Admin;
  /** POSTs `body` to the gateway with the producer token. */
  post(path: string, body: string | Uint8Array, type?: string): ReturnType<typeof answerOf>;
}

/**
 * For one describe block: a gateway in front of `serverUrl` and an admin client on that server,
 * started before the block's tests and stopped after them (the gateway must exit 0).
 */
export function gatewayOn(serverUrl: string, env: Record<string, string> = {}): GatewayHarness {
  const held = {
    post: async (path: string, body: string | Uint8Array, type = 'application/octet-stream') =>
      answerOf(await fetch(held.gw.url + path, { method: 'POST', body, headers: { Authorization: `Bearer ${held.gw.producer}`, 'Content-Type': type } })),
  } as GatewayHarness;
  beforeAll(async () => {
    held.gw = await startGatewayProcess(serverUrl, env);
    held.admin = await connectAdmin(serverUrl);
  });
  afterAll(async () => {
    held.admin?.close();
    if (held.gw) expect(await held.gw.stop()).toBe(0);
  });
  return held;
}
