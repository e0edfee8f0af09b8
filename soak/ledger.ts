// What the soak's producers sent and what the Worker answered: every job with its verb, fate,
// queue, payload digest, the time it was acknowledged, its due time (a scheduled job) and its
// flow, and each control call's outcome. The verifier holds the completion log against it.
import { digest } from './library/consumer.js';

export const VERBS = ['flat', 'batch', 'idem', 'group', 'delay', 'notbefore', 'gdelay', 'flow', 'xflow', 'cancel', 'promote', 'reschedule', 'webhook'] as const;
export type Verb = (typeof VERBS)[number];
/** ok: done at the first attempt; once: fails the first; dead: fails every attempt (the dead set). */
export type Fate = 'ok' | 'once' | 'dead';

export interface SentJob {
  id: string;
  queue: string;
  verb: Verb;
  fate: Fate;
  /** The payload's digest, as the consumer logs it (byte-exactness). */
  digest: string;
  acked: boolean;
  /** When the acknowledgement arrived (ms, this host's clock, which is Valkey's). */
  ackedAt?: number;
  group?: string;
  /** No claim before this (server ms): a scheduled job's due time, or a lower bound of it. */
  dueAfter?: number;
  /** Its flow parent; on a parent, its children. */
  parent?: string;
  children?: string[];
  /** A flow member: completes, never dies. Also: the parent is the flow's role. */
  role?: 'parent' | 'child';
  /** removed: DELETE answered 200; maybe: a try may have removed it (a later one answered 404); kept: 409 or never removed. */
  cancel?: 'removed' | 'maybe' | 'kept';
  /** A scheduled job whose promote or reschedule never got through: it may still wait at the end. */
  mayStayScheduled?: boolean;
}

export interface Ledger {
  jobs: Map<string, SentJob>;
  requests: number;
  retries: number;
  /** 200 duplicate after a retry (the first try had landed). */
  duplicates: number;
  /** Idempotency-Key sent again on purpose: answered the same id (ok) or not (mismatch). */
  idemReuse: { ok: number; mismatch: number };
  /** Webhook deliveries acknowledged; of them sent twice at once; redelivered later (after the job completed); answers naming another job or no duplicate. */
  webhooks: { deliveries: number; concurrent: number; redelivered: number; afterCompletion: number; mismatch: number };
  /** Control calls by verb and answer: `cancel 200`, `cancel 409 job_active`, … */
  control: Map<string, number>;
  bad5xx: Map<number, { count: number; sample: string }>;
  refused: string[];
  gaveUp: number;
  longestOutageMs: number;
}

export function newLedger(): Ledger {
  return {
    jobs: new Map(),
    requests: 0,
    retries: 0,
    duplicates: 0,
    idemReuse: { ok: 0, mismatch: 0 },
    webhooks: { deliveries: 0, concurrent: 0, redelivered: 0, afterCompletion: 0, mismatch: 0 },
    control: new Map(),
    bad5xx: new Map(),
    refused: [],
    gaveUp: 0,
    longestOutageMs: 0,
  };
}

export const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

/** A payload: its tag (`<verb>~<fate>~<unique>|`) and random bytes after it. */
export function payloadOf(verb: Verb, fate: Fate, unique: string): { bytes: Uint8Array; digest: string } {
  const head = new TextEncoder().encode(`${verb}~${fate}~${unique}|`);
  const tail = crypto.getRandomValues(new Uint8Array(Math.floor(Math.random() * 256)));
  const bytes = new Uint8Array(head.length + tail.length);
  bytes.set(head);
  bytes.set(tail, head.length);
  return { bytes, digest: digest(bytes) };
}
