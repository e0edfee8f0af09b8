// The producer API as the console reaches it: one typed client per request, carrying the
// signed-in token (client/), and plain reads for the listing routes the client lacks. Every
// refusal is the client's ProducerError (status, stable code, the problem's detail).
import { createProducerClient, ProducerError, type ProducerClient } from '../../client/index.js';
import { drawNode } from '../../shared/ids.js';

export { ProducerError };

/** The node id of the ids this console mints (a test job's): one per process; a collision is minted again by the client. */
let node: number | undefined;

/** One page-load's budget per call: a console page waits on a handful of these. */
const TIMEOUT_MS = 10_000;

export interface Api {
  client: ProducerClient;
  /** A GET of a producer path (query values left out when undefined): its JSON body. */
  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T>;
  /** A POST of raw bytes with headers, no token (a webhook delivery): its status and JSON body. */
  deliver(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

export function apiFor(producerUrl: string, token: string, fetchImpl: typeof fetch = (i, o) => fetch(i, o)): Api {
  const client = createProducerClient({ url: producerUrl, token, timeoutMs: TIMEOUT_MS, retries: 1, fetch: fetchImpl, nodeId: (node ??= drawNode()) });
  return {
    client,
    async get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
      const search = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) search.set(k, String(v));
      const target = `${producerUrl}${path}${search.size > 0 ? `?${search}` : ''}`;
      let res: Response;
      try {
        res = await fetchImpl(target, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(TIMEOUT_MS) });
      } catch (err) {
        throw new ProducerError(0, 'unreachable', `the producer did not answer: ${(err as Error).name}`);
      }
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (res.ok && body !== undefined) return body as T;
      const problem = (body ?? {}) as Record<string, unknown>;
      const code = typeof problem.code === 'string' ? problem.code : `http_${res.status}`;
      const detail = typeof problem.detail === 'string' ? problem.detail : 'the producer answered no problem document';
      throw new ProducerError(res.status, code, detail, problem);
    },
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
