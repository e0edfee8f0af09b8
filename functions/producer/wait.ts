// ?wait=N on the routes that write jobs (POST …/jobs, …/batch, …/flows, the webhooks): once the
// admission script answered, the node that took the write (the queue's slot's primary) WAITs
// until N replicas have it, so an acknowledged job survives a failover of that primary. Over
// glide the producer sends the WAIT on the same connection (shared/connections/glide-wire.ts);
// over REST the gateway does, asked by Emq-Wait (functions/gateway/wait.ts). Fewer replicas in
// time: 503 not_replicated (error-problems.ts); the job may have landed, and the same request
// again (same ids or Idempotency-Key) is safe.
import type { WaitFor } from '../../shared/index.js';
import type { Call, Service } from './call.js';
import { Problem } from './problem.js';

/** The most replicas a request may ask for (the gateway's bound too). */
export const WAIT_MAX_REPLICAS = 16;

/** The request's `?wait=N` (0 or absent: none) and `?wait_timeout_ms=T` (1 to EMQ_WAIT_MAX_MS, default it); a bad one is 400 invalid_query. */
export function waitOf(call: Call, service: Service): WaitFor | undefined {
  const { request } = call;
  const replicas = request.query('wait');
  const timeout = request.query('wait_timeout_ms');
  if (replicas === undefined && timeout === undefined) return undefined;
  const n = replicas !== undefined && /^[0-9]{1,2}$/.test(replicas) ? Number(replicas) : -1;
  if (n < 0 || n > WAIT_MAX_REPLICAS) throw new Problem(400, 'invalid_query', `wait must be a whole number of replicas from 0 to ${WAIT_MAX_REPLICAS}`);
  const { waitMaxMs } = service.settings();
  const ms = timeout === undefined ? waitMaxMs : /^[1-9][0-9]{0,8}$/.test(timeout) ? Number(timeout) : 0;
  if (ms < 1 || ms > waitMaxMs) throw new Problem(400, 'invalid_query', `wait_timeout_ms must be a whole number from 1 to ${waitMaxMs} (EMQ_WAIT_MAX_MS)`);
  return n === 0 ? undefined : { replicas: n, timeoutMs: ms };
}
