// Generated from the producer's OpenAPI document (functions/producer/openapi.ts) by
// `npm run openapi-types`: do not edit. test/openapi.test.ts fails when it is not current.

export type Id = string;

export type Group = string;

export type Queue = string;

export type Verdict = 'enqueued' | 'scheduled' | 'duplicate';

export interface Enqueued {
  id: Id;
  queue: Queue;
  verdict: Verdict;
}

export interface BatchItem {
  payload?: string;
  payloadBase64?: string;
  id?: Id;
  group?: Group;
  delay?: string;
  notBefore?: string | number;
  idempotencyKey?: string;
}

export interface BatchResult {
  queue: Queue;
  results: Array<{ id: Id; verdict: Verdict }>;
}

export interface FlowJob {
  payload?: string;
  payloadBase64?: string;
  id?: Id;
}

export interface FlowChild {
  payload?: string;
  payloadBase64?: string;
  id?: Id;
  queue?: Queue;
  onFailure?: 'fail-parent' | 'ignore';
}

export interface Flow {
  parent: FlowJob;
  children: Array<FlowChild>;
}

export interface FlowResult {
  queue: Queue;
  parent: { id: Id };
  children: Array<{ queue: Queue; id: Id }>;
  verdict: 'enqueued' | 'duplicate';
}

export interface JobStatus {
  id: Id;
  queue: Queue;
  state: 'pending' | 'active' | 'scheduled' | 'dead' | 'awaiting_children';
  attempts: number;
  group?: Group;
  runAt?: number;
  parent?: Id;
  parentQueue?: Queue;
  lastError?: string;
  payload?: string;
  payloadBase64?: string;
}

export interface GroupView {
  group: Group;
  pending: number;
  active: number;
  limit?: number;
  weight?: number;
  paused: boolean;
  ringed: boolean;
}

export interface GroupChange {
  limit?: number;
  weight?: number;
  paused?: boolean;
}

export interface QueueView {
  queue: Queue;
  paused: boolean;
  counts: { pending: number; active: number; scheduled: number; dead: number; completed: number; failed: number };
  groups: Array<GroupView>;
  cursor?: Group;
}

export interface Removed {
  id: Id;
  queue: Queue;
  verdict: 'removed';
  state: 'pending' | 'scheduled' | 'dead';
}

export interface Promoted {
  id: Id;
  queue: Queue;
  verdict: 'promoted';
}

export interface Rescheduled {
  id: Id;
  queue: Queue;
  verdict: 'rescheduled';
  runAt: number;
}

export interface ScheduleRequest {
  every: string;
  firstIn?: string;
  payload?: string;
  payloadBase64?: string;
}

export interface ScheduleVerdict {
  queue: Queue;
  name: string;
  verdict: 'registered' | 'exists' | 'cancelled';
}

export interface Schedule {
  queue: Queue;
  name: string;
  everyMs: number;
  nextRunAt: number | null;
  paused: boolean;
  payload?: string;
  payloadBase64?: string;
}

export interface Schedules {
  queue: Queue;
  schedules: Array<Schedule>;
  cursor?: string;
}

export interface Paused {
  queue: Queue;
  paused: boolean;
  note?: string;
}

export interface CronSchedules {
  schedules: Array<{ name: string; cron: string; queue: Queue; group?: Group; delay?: string; nextFireAt: number }>;
}

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

export interface Problem {
  type: string;
  code: ProblemCode;
  title: string;
  status: number;
  detail: string;
  index?: number;
  expected?: string;
  found?: string;
  results?: Array<{ id: Id; verdict: Verdict } | { id: Id; code: ProblemCode }>;
  flow?: { parent: { id: Id }; children: Array<{ queue: Queue; id: Id }> };
}
