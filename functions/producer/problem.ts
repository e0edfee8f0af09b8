// Every error the producer answers is an RFC 9457 problem document, made here: a stable
// `type` (and the same `code`), a title, and a detail that says what to fix.
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export type ProblemCode =
  | 'unauthorized'
  | 'forbidden_queue'
  | 'forbidden_action'
  | 'invalid_queue'
  | 'invalid_id'
  | 'invalid_payload'
  | 'invalid_batch'
  | 'invalid_flow'
  | 'job_exists'
  | 'payload_too_large'
  | 'not_found'
  | 'not_allowed'
  | 'conflict'
  | 'unavailable'
  | 'not_replicated'
  | 'upstream_auth'
  | 'misconfigured'
  | 'invalid_signature'
  | 'invalid_delivery'
  | 'invalid_idempotency_key'
  | 'invalid_delay'
  | 'invalid_not_before'
  | 'invalid_group'
  | 'idempotency_conflict'
  | 'wire_mismatch'
  | 'client_closed'
  | 'job_active'
  | 'job_in_flow'
  | 'job_locked'
  | 'not_scheduled'
  | 'invalid_body'
  | 'invalid_query'
  | 'invalid_name'
  | 'schedule_exists'
  | 'internal';

/** Each code's title; a Record, so the compiler holds its keys to exactly the union above. */
export const TITLES: Record<ProblemCode, string> = {
  unauthorized: 'Missing or unknown token',
  forbidden_queue: 'This token may not use this queue',
  forbidden_action: 'This token may not do this',
  invalid_queue: 'Invalid queue name',
  invalid_id: 'Invalid job id',
  invalid_payload: 'Invalid payload',
  invalid_batch: 'Invalid batch',
  invalid_flow: 'Invalid flow',
  job_exists: 'A job of this flow already exists',
  payload_too_large: 'Payload too large',
  not_found: 'Not found',
  not_allowed: 'Method not allowed',
  conflict: 'The queue is in a state that refuses jobs',
  unavailable: 'Valkey is unavailable',
  not_replicated: 'The write reached too few replicas in time',
  upstream_auth: 'The producer cannot authenticate to its Valkey path',
  misconfigured: 'The producer is misconfigured',
  invalid_signature: 'The webhook signature does not verify',
  invalid_delivery: 'The webhook delivery lacks what identifies it',
  invalid_idempotency_key: 'Invalid Idempotency-Key',
  invalid_delay: 'Invalid Emq-Delay',
  invalid_not_before: 'Invalid Emq-Not-Before',
  invalid_group: 'Invalid Emq-Group',
  idempotency_conflict: 'This Idempotency-Key was used with another payload',
  wire_mismatch: 'Valkey speaks another EchoMQ wire version',
  client_closed: 'The client closed the connection before its body ended',
  job_active: 'The job is claimed by a worker',
  job_in_flow: 'The job belongs to a flow that is not done',
  job_locked: 'The job is locked',
  not_scheduled: 'The job is not scheduled',
  invalid_body: 'Invalid request body',
  invalid_query: 'Invalid query parameter',
  invalid_name: 'Invalid schedule name',
  schedule_exists: 'A schedule of this name holds another period or template',
  internal: 'Internal error',
};

/** Every problem code, at run time (the OpenAPI document lists them; its test checks it does). */
export const PROBLEM_CODES = Object.keys(TITLES) as ProblemCode[];

export class Problem extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    /** What a fixed detail stands for (an upstream's words, a URL): the operator's log only, never an answer. */
    readonly hidden?: string,
  ) {
    super(detail);
  }
}

/** The problem document's text (application/problem+json). */
export const problemJson = (p: Problem): string =>
  JSON.stringify({ type: `urn:emq:problem:${p.code}`, code: p.code, title: TITLES[p.code], status: p.status, detail: p.detail, ...p.extra });

/** The headers a problem's answer carries beyond its Content-Type. */
export function problemHeaders(p: Problem): Record<string, string> {
  if (p.status === 503) return { 'Retry-After': '1' };
  if (p.status === 401) return { 'WWW-Authenticate': 'Bearer' };
  return {};
}
