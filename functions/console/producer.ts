// The producer API as the console reaches it: one typed client per request, carrying the
// signed-in token (client/), and a webhook delivery (no token: its signature is the
// credential). Every refusal is the client's ProducerError (status, stable code, detail).
import { createProducerClient, ProducerError, type ProducerClient } from '../../client/index.js';
import { drawNode } from '../../shared/ids.js';

export { ProducerError };

/** The node id of the ids this console mints (a test job's): one per process; a collision is minted again by the client. */
let node: number | undefined;

/** One page-load's budget per call: a console page waits on a handful of these. */
const TIMEOUT_MS = 10_000;

export interface Api {
  client: ProducerClient;
  /** A POST of raw bytes with headers, no token (a webhook delivery): its status and JSON body. */
  deliver(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

export function apiFor(producerUrl: string, token: string, fetchImpl: typeof fetch = (i, o) => fetch(i, o)): Api {
  const client = createProducerClient({ url: producerUrl, token, timeoutMs: TIMEOUT_MS, retries: 1, fetch: fetchImpl, nodeId: (node ??= drawNode()) });
  return {
    client,
    async deliver(path, headers, body) {
      try {
        const res = await fetchImpl(`${producerUrl}${path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
        const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        return { status: res.status, body: answer };
      } catch (err) {
        throw new ProducerError(0, 'unreachable', `the producer did not answer: ${(err as Error).name}`);
      }
    },
  };
}
