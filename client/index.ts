// A typed client for the producer's HTTP API, for callers on any runtime with fetch.
// Ids are minted here, before the first try, and each such job carries its id as its
// Idempotency-Key too, so a retry of a request that timed out or met a 502/503/504 is the same
// job: it answers `enqueued` or `duplicate`, never a second job, even when the first try landed
// and the job has completed since (its row is gone; the dedup key outlives it).
// A `duplicate` on the first try of an id minted here is another minter's job under the same
// id (a node-id collision): the job is sent again under a fresh id, so it is never lost.
import { createMinter, drawNode, remint, type Minter } from '../shared/ids.js';
import { nodeId as nodeIdVar, nodePool } from '../shared/config/parse.js';
import { payloadField } from '../shared/base64.js';
import { backoff, mayRetry } from '../shared/retry.js';

export type { Payload, Verdict } from '../shared/enqueue.js';
export type { GroupChange, GroupView, JobInfo, QueueView } from './control.js';
import { controlCalls, orNullOf, type JobInfo } from './control.js';
import { scheduleCalls } from './schedules.js';
export type { CronInfo, ScheduleInfo } from './schedules.js';
import { MINT_TRIES } from '../shared/enqueue.js';
import type { Payload, Verdict } from '../shared/enqueue.js';

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
  /**
   * Whether a job whose id is minted here also sends that id as its Idempotency-Key (default
   * true). An id alone dedups only while its job exists (the library's rule): a retry whose
   * first try landed and whose job completed meanwhile would run it again. The key costs one
   * dedup key per job for the producer's EMQ_DEDUPE_TTL_SECONDS. A job given its own id or
   * idempotencyKey sends what it was given.
   */
  keyMintedJobs?: boolean;
  /**
   * The node id (0-1023) the ids minted here carry. Default: EMQ_NODE_ID where the runtime
   * has an environment, else one drawn from EMQ_NODE_IDS (default 0-1023).
   */
  nodeId?: number;
}

/** The node id from options or the environment (Node, Bun, Deno with process), else a draw. */
function nodeIdOf(given: number | undefined): number {
  if (given !== undefined) return given;
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  try {
    return nodeIdVar(env, 'EMQ_NODE_ID') ?? drawNode(nodePool(env, 'EMQ_NODE_IDS'));
  } catch (err) {
    throw new TypeError((err as Error).message); // names the variable, never its value
  }
}

/** What an enqueue answers: `scheduled` for a job with a delay or a not-before time. */
export type EnqueueVerdict = Verdict | 'scheduled';

export interface EnqueueResult {
  id: string;
  queue: string;
  verdict: EnqueueVerdict;
}

/**
 * Where and when a job is admitted. `group`: a lane, named by a branded id (sent as
 * Emq-Group). `delay`: `<n><unit>` (ms, s, m, h or d), or a number of ms (Emq-Delay);
 * `notBefore`: a Date, Unix ms, or an RFC 3339 string (Emq-Not-Before); at most one of the two.
 * The producer checks them (400 invalid_delay, invalid_not_before, invalid_group).
 */
export interface PlacementOptions {
  group?: string;
  delay?: string | number;
  notBefore?: Date | number | string;
}

/** The placement as the producer reads it: the header values, or a batch item's fields. */
function placementFields({ group, delay, notBefore }: PlacementOptions): { group?: string; delay?: string; notBefore?: string } {
  const out: { group?: string; delay?: string; notBefore?: string } = {};
  if (group !== undefined) out.group = group;
  if (delay !== undefined) out.delay = typeof delay === 'number' ? `${delay}ms` : delay;
  if (notBefore !== undefined) out.notBefore = notBefore instanceof Date ? notBefore.toISOString() : String(notBefore);
  return out;
}

/** A job's own id and Idempotency-Key, both optional. */
export interface KeyedJob {
  id?: string;
  /** 1-255 printable ASCII characters; the same key with another payload or group is 422 idempotency_conflict. */
  idempotencyKey?: string;
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
/** A batch item carrying the payload exactly: text when it is UTF-8, base64 otherwise. */
function item(id: string, payload: Payload): Record<string, string> {
  if (typeof payload === 'string') {
    if (!payload.isWellFormed()) throw new TypeError('payload string has a lone surrogate; pass bytes instead');
    return { id, payload };
  }
  return { id, ...payloadField(payload) };
}

/** A 503's problem code, read from a clone so the body stays readable. */
async function peekCode(res: Response): Promise<string | undefined> {
  try {
    const body = (await res.clone().json()) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

export function createProducerClient({
  url,
  token,
  timeoutMs = 10_000,
  retries = 3,
  backoffMs = 100,
  fetch: fetchImpl = (input, init) => fetch(input, init),
  nodeId,
  keyMintedJobs = true,
}: ProducerClientOptions) {
  const mint: Minter = createMinter({ node: nodeIdOf(nodeId) });
  const base = url.replace(/\/+$/, '');
  const queuePath = (queue: string) => `${base}/v1/queues/${encodeURIComponent(queue)}`;
  const retry = { retries, baseMs: backoffMs, maxRetryAfterMs: 5_000 };
  const notFound = (err: unknown) => err instanceof ProducerError && err.status === 404 && err.code === 'not_found';

  /** The answer, and whether it came from the first try (then a `duplicate` of a fresh id is a collision). */
  async function send(target: string, init: RequestInit): Promise<{ status: number; body: unknown; first: boolean }> {
    for (let attempt = 0; ; attempt++) {
      const last = !mayRetry(retry, attempt);
      let res: Response;
      try {
        res = await fetchImpl(target, {
          ...init,
          headers: { ...(init.headers as object), Authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        if (last) throw new ProducerError(0, 'unreachable', `${base}: ${(err as Error).message}`);
        await backoff(retry, attempt);
        continue;
      }
      // a wire mismatch (the fence) lasts until an operator acts: not worth retrying
      const mismatch = res.status === 503 && (await peekCode(res)) === 'wire_mismatch';
      if (RETRYABLE.has(res.status) && !last && !mismatch) {
        await res.body?.cancel();
        await backoff(retry, attempt, res.headers.get('Retry-After'));
        continue;
      }
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (res.ok) return { status: res.status, body, first: attempt === 0 };
      const problem = (body ?? {}) as Record<string, unknown>;
      const code = typeof problem.code === 'string' ? problem.code : `http_${res.status}`;
      const detail = typeof problem.detail === 'string' ? problem.detail : text.slice(0, 200);
      throw new ProducerError(res.status, code, `${res.status} ${code}: ${detail}`, problem);
    }
  }

  /** A job's Idempotency-Key: its own, else its id when the id was minted here (keyMintedJobs). */
  const keyOf = (job: KeyedJob, id: string): string | undefined => job.idempotencyKey ?? (job.id === undefined && keyMintedJobs ? id : undefined);

  const control = controlCalls(send, queuePath, notFound);
  const schedules = scheduleCalls(send, queuePath, orNullOf(notFound), base);

  return {
    /**
     * Enqueues one job (into a lane with `group`; scheduled with `delay` or `notBefore`); its id
     * is minted here unless given. `idempotencyKey`: yours (else a minted id is the key, unless
     * keyMintedJobs is false).
     */
    async enqueue(queue: string, payload: Payload, options: KeyedJob & PlacementOptions = {}): Promise<EnqueueResult> {
      const { group, delay, notBefore } = placementFields(options);
      const placement: Record<string, string> = {
        ...(group !== undefined && { 'Emq-Group': group }),
        ...(delay !== undefined && { 'Emq-Delay': delay }),
        ...(notBefore !== undefined && { 'Emq-Not-Before': notBefore }),
      };
      for (let tries = 1; ; tries++) {
        const id = options.id ?? (tries === 1 ? mint() : remint(mint));
        const key = keyOf(options, id);
        const { body, first } = await send(`${queuePath(queue)}/jobs`, {
          method: 'POST',
          headers: { 'Emq-Job-Id': id, 'Content-Type': 'application/octet-stream', ...(key !== undefined && { 'Idempotency-Key': key }), ...placement },
          body: typeof payload === 'string' ? payload : (payload as NonNullable<RequestInit['body']>),
        });
        const result = body as EnqueueResult;
        // a duplicate of the id just minted, on the first try: another minter's job (a key's hit answers its own job's id)
        const collided = options.id === undefined && first && result.verdict === 'duplicate' && result.id === id;
        if (!collided) return result;
        if (tries >= MINT_TRIES) throw new ProducerError(0, 'id_collision', `${tries} ids minted here were already taken: give each minter its own nodeId`);
      }
    },

    /** Enqueues up to 1,000 jobs in one request, each with its own placement; a verdict per job, in order. */
    async enqueueMany(
      queue: string,
      jobs: ReadonlyArray<{ payload: Payload } & KeyedJob & PlacementOptions>,
    ): Promise<Array<{ id: string; verdict: EnqueueVerdict }>> {
      const ids = jobs.map((j) => j.id ?? mint());
      const results: Array<{ id: string; verdict: EnqueueVerdict }> = [];
      let pending = jobs.map((_, i) => i); // the jobs still to send, by index
      for (let tries = 1; pending.length > 0; tries++) {
        const { body, first } = await send(`${queuePath(queue)}/batch`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(
            pending.map((i) => {
              const key = keyOf(jobs[i]!, ids[i]!);
              return { ...item(ids[i]!, jobs[i]!.payload), ...placementFields(jobs[i]!), ...(key !== undefined && { idempotencyKey: key }) };
            }),
          ),
        });
        const answered = (body as { results: Array<{ id: string; verdict: EnqueueVerdict }> }).results;
        const collided: number[] = [];
        pending.forEach((i, k) => {
          if (first && jobs[i]!.id === undefined && answered[k]!.verdict === 'duplicate' && answered[k]!.id === ids[i]) collided.push(i);
          else results[i] = answered[k]!;
        });
        if (collided.length > 0 && tries >= MINT_TRIES) {
          throw new ProducerError(0, 'id_collision', `${tries} ids minted here were already taken: give each minter its own nodeId`);
        }
        for (const i of collided) ids[i] = remint(mint);
        pending = collided;
      }
      return results;
    },

    /**
     * Adds a flow: `parent` runs once every child has completed. Ids are minted here unless
     * given, so a retried request is the same flow (`duplicate`, nothing doubled). A child may
     * name another `queue` and `onFailure: 'ignore'` (default 'fail-parent'). A freshly minted
     * id already taken by another minter's job (answered duplicate, or 409 job_exists for a
     * child, on the first try) is minted again.
     */
    async flow(queue: string, flow: FlowRequest): Promise<FlowResponse> {
      const parentId = flow.parent.id;
      const ids = [parentId ?? mint(), ...flow.children.map((c) => c.id ?? mint())];
      const given = [parentId !== undefined, ...flow.children.map((c) => c.id !== undefined)];
      for (let tries = 1; ; tries++) {
        const body = JSON.stringify({
          parent: item(ids[0]!, flow.parent.payload),
          children: flow.children.map((c, i) => ({
            ...item(ids[i + 1]!, c.payload),
            ...(c.queue !== undefined && { queue: c.queue }),
            ...(c.onFailure !== undefined && { onFailure: c.onFailure }),
          })),
        });
        let answer: { body: unknown; first: boolean };
        try {
          answer = await send(`${queuePath(queue)}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
        } catch (err) {
          // a child id minted here that another minter's job holds: a collision, mint it again
          const index = err instanceof ProducerError && err.code === 'job_exists' ? err.problem.index : undefined;
          if (typeof index !== 'number' || given[index + 1] || tries >= MINT_TRIES) throw err;
          ids[index + 1] = remint(mint);
          continue;
        }
        const result = answer.body as FlowResponse;
        if (!(answer.first && !given[0] && result.verdict === 'duplicate')) return result;
        if (tries >= MINT_TRIES) throw new ProducerError(0, 'id_collision', `${tries} ids minted here were already taken: give each minter its own nodeId`);
        ids[0] = remint(mint);
      }
    },

    /** The job's state and attempts (and where it waits), or null when there is no such job. */
    status: (queue: string, id: string): Promise<JobInfo | null> => control.job(queue, id),

    ...control,
    ...schedules,
  };
}

export type ProducerClient = ReturnType<typeof createProducerClient>;

/** A flow: its parent, and 1 to 1,000 children (in the parent's queue unless one names another). */
export interface FlowRequest {
  parent: { payload: Payload; id?: string };
  children: ReadonlyArray<{ payload: Payload; id?: string; queue?: string; onFailure?: 'fail-parent' | 'ignore' }>;
}

export interface FlowResponse {
  queue: string;
  parent: { id: string };
  children: Array<{ queue: string; id: string }>;
  /** `duplicate`: the parent id exists (nothing written). */
  verdict: 'enqueued' | 'duplicate';
}
