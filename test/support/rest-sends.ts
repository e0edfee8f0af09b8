// The REST connection's two sends, for its tests to run over each: fetch (Workers, and the
// library outside Node) and undici (Node: shared/connections/rest-node.ts).
import { expect } from 'vitest';
import { startServer } from '../../scripts/valkey.js';
import { undiciTransport } from '../../shared/connections/rest-node.js';
import { fetchTransport, type RestTransport } from '../../shared/connections/rest.js';
import { startGatewayProcess, type GatewayProcess } from './gateway.js';

export const SENDS: ReadonlyArray<{ name: string; transport: () => RestTransport }> = [
  { name: 'fetch', transport: () => fetchTransport() },
  { name: 'undici', transport: () => undiciTransport() },
];

export interface Recording {
  /** Each request as "POST /<first path segment>". */
  seen: string[];
  /** Each request's first path segment, "/pipeline". */
  paths: string[];
  /** Each /pipeline body's size in bytes. */
  pipelineBytes: number[];
  /** Each request's X-Request-Id, when it had one. */
  requestIds: Array<string | undefined>;
  transport: RestTransport;
}

/** `base`, recording each request; `plain` strips Emq-Arg-Encoding on the way, as an endpoint that does not know it ignores it. */
export function recording(base: RestTransport, plain = false): Recording {
  const seen: string[] = [];
  const paths: string[] = [];
  const pipelineBytes: number[] = [];
  const requestIds: Array<string | undefined> = [];
  const transport: RestTransport = {
    post(url, path, headers, body, timeoutMs) {
      paths.push(path.split('/').slice(0, 2).join('/'));
      seen.push(`POST ${paths.at(-1)}`);
      requestIds.push(headers['X-Request-Id']);
      if (path === '/pipeline') pipelineBytes.push(typeof body === 'string' ? new TextEncoder().encode(body).length : body.length);
      const sent = plain ? Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'emq-arg-encoding')) : headers;
      return base.post(url, path, sent, body, timeoutMs);
    },
    close: () => base.close(),
  };
  return { seen, paths, pipelineBytes, requestIds, transport };
}

/** `body` against a gateway whose Valkey is down (every script call answers 503); the gateway must exit 0 after. */
export async function behindDownValkey(body: (gw: GatewayProcess) => Promise<void>): Promise<void> {
  const down = await startServer();
  await down.stop();
  const gw = await startGatewayProcess(down.url, { EMQ_GATEWAY_TIMEOUT_MS: '500' });
  try {
    await body(gw);
  } finally {
    expect(await gw.stop()).toBe(0);
  }
}
