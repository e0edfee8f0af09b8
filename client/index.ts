// A typed client for the producer's HTTP API, for callers on any runtime with fetch.
// Ids are minted here, before the first try, so a retry of a request that timed out or
// met a 502/503/504 is the same job: it answers `enqueued` or `duplicate`, never a second job.
import { mintId } from '../shared/ids.js';
import { toBase64 } from '../shared/base64.js';

export type Verdict = 'enqueued' | 'duplicate';
export type Payload = Uint8Array | string;

export interface ProducerClientOptions {
  /** The producer's base URL (the Worker, or `emq producer` on Node). */
  url: string;
  token: string;
  /** One attempt's budget, in ms. */
  timeoutMs?: number;
  /** Further attempts after a transport failure or a 502/503/504. */
  retries?: number;
  /** The first retry's delay, in ms; it doubles, with jitter, and honours Retry-After (up to 5 s). */
  backoffMs?: number;
  fetch?: typeof fetch;
}

export interface EnqueueResult {
  id: string;
  queue: string;
  verdict: Verdict;
}

/** The producer refused the request: `code` is the problem document's stable code. */
export class ProducerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problem: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ProducerError';
  }
}

const RETRYABLE = new Set([502, 503, 504]);
// ignoreBOM: true keeps a leading BOM as text; the default would drop those three bytes
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** A batch item carrying the payload exactly: text when it is UTF-8, base64 otherwise. */
function item(id: string, payload: Payload): Record<string, string> {
  if (typeof payload === 'string') {
    if (!payload.isWellFormed()) throw new TypeError('payload string has a lone surrogate; pass bytes instead');
    return { id, payload };
  }
  try {
    return { id, payload: strictUtf8.decode(payload) };
  } catch {
    return { id, payloadBase64: toBase64(payload) };
  }
}

export function createProducer({
  url,
  token,
  timeoutMs = 10_000,
  retries = 3,
  backoffMs = 100,
  fetch: fetchImpl = (input, init) => fetch(input, init),
}: ProducerClientOptions) {
  const base = url.replace(/\/+$/, '');
  const queuePath = (queue: string) => `${base}/v1/queues/${encodeURIComponent(queue)}`;

  async function send(target: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let res: Response;
      try {
        res = await fetchImpl(target, { ...init, headers: { ...(init.headers as object), Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        if (last) throw new ProducerError(0, 'unreachable', `${base}: ${(err as Error).message}`);
        await sleep(backoffMs * 2 ** attempt * (0.5 + Math.random()));
        continue;
      }
      if (RETRYABLE.has(res.status) && !last) {
        await res.body?.cancel();
        const asked = Number(res.headers.get('Retry-After')) * 1000;
        await sleep(Number.isFinite(asked) && asked > 0 ? Math.min(asked, 5_000) : backoffMs * 2 ** attempt);
        continue;
      }
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (res.ok) return { status: res.status, body };
      const problem = (body ?? {}) as Record<string, unknown>;
      const code = typeof problem.code === 'string' ? problem.code : `http_${res.status}`;
      const detail = typeof problem.detail === 'string' ? problem.detail : text.slice(0, 200);
      throw new ProducerError(res.status, code, `${res.status} ${code}: ${detail}`, problem);
    }
  }

  return {
    /** Enqueues one job; its id is minted here unless given. */
    async enqueue(queue: string, payload: Payload, options: { id?: string } = {}): Promise<EnqueueResult> {
      const id = options.id ?? mintId();
      const { body } = await send(`${queuePath(queue)}/jobs`, {
        method: 'POST',
        headers: { 'Emq-Job-Id': id, 'Content-Type': 'application/octet-stream' },
        body: typeof payload === 'string' ? payload : (payload as NonNullable<RequestInit['body']>),
      });
      return body as EnqueueResult;
    },

    /** Enqueues up to 1,000 jobs in one request; a verdict per job, in order. */
    async enqueueMany(queue: string, jobs: ReadonlyArray<{ payload: Payload; id?: string }>): Promise<Array<{ id: string; verdict: Verdict }>> {
      const items = jobs.map((j) => item(j.id ?? mintId(), j.payload));
      const { body } = await send(`${queuePath(queue)}/batch`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(items),
      });
      return (body as { results: Array<{ id: string; verdict: Verdict }> }).results;
    },

    /** The job's state and attempts, or null when there is no such job. */
    async status(queue: string, id: string): Promise<{ id: string; queue: string; state: string; attempts: number } | null> {
      try {
        const { body } = await send(`${queuePath(queue)}/jobs/${encodeURIComponent(id)}`, { method: 'GET' });
        return body as { id: string; queue: string; state: string; attempts: number };
      } catch (err) {
        if (err instanceof ProducerError && err.status === 404 && err.code === 'not_found') return null;
        throw err;
      }
    },
  };
}

export type ProducerClient = ReturnType<typeof createProducer>;
