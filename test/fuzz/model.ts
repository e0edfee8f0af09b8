// The model of what the fuzz has written so far: the jobs (and their exact payload bytes),
// the idempotency markers, the webhook deliveries, and the rows flows wrote (and the flows, to
// send again); and what the control routes set: jobs removed, queues and lanes paused, lane
// limits and weights, repeatables. The plans (producer-cases.ts, gateway-cases.ts,
// producer-control.ts, producer-schedules.ts) predict from it and their checks update it after
// a 2xx; startParts() empties it, and so does the outage file once Valkey comes back empty.
import { createHash } from 'node:crypto';
import type { Who } from './setup.js';

export const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
export const jk = (queue: string, id: string) => `${queue} ${id}`;

/** Where a job landed: its lane (none: flat) and, when scheduled, its run-at score in Unix ms. */
export interface Place {
  group?: string | undefined;
  due?: number | undefined;
}

/** A row a flow wrote: a child (pending, its parent, the parent's queue when another, its policy) or a held parent (its count). */
export type FlowRow =
  | { kind: 'child'; payload: Buffer; parent: string; parentQueue: string | undefined; policy: 'fp' | 'id' }
  | { kind: 'parent'; payload: Buffer; n: number };

/** A lane's settings as PUT …/groups/:group left them (no verb removes a limit or a weight). */
export interface LaneSet {
  limit?: number | undefined;
  weight?: number | undefined;
  paused: boolean;
}

/** A repeatable: its period, its template's bytes, and its registry score exactly (paused: PAUSED_SCORE + its next run). */
export interface Repeatable {
  everyMs: number;
  template: Buffer;
  /** Its next run, Unix ms (kept while paused). */
  next: number;
  paused: boolean;
}

export const model = {
  jobs: new Map<string, Buffer>(), // queue id → the payload stored
  places: new Map<string, Place>(), // queue id → where it landed (absent: flat, due now)
  known: [] as Array<{ queue: string; id: string }>,
  idem: new Map<string, { id: string; fp: string; group: string | undefined }>(), // who queue key → the job, the payload's digest, its lane
  deliveries: new Map<string, string>(), // source and what dedupes it (a signed id, else the body's digest) → the job it made
  gwIds: [] as string[], // ids the gateway fuzz enqueued (to send again)
  flowRows: new Map<string, FlowRow>(), // queue id → the row a flow wrote
  flowDocs: [] as Array<{ seg: string; who: Who; body: Buffer }>, // flows that landed, as sent (to send again)
  gone: new Set<string>(), // queue id → removed by DELETE (an Idempotency-Key that parked it still answers it)
  pausedQueues: new Set<string>(),
  lanes: new Map<string, LaneSet>(), // queue group → its settings
  repeats: new Map<string, Repeatable>(), // queue name → the registration
  addJob(queue: string, id: string, payload: Buffer, place: Place = {}) {
    if (!this.jobs.has(jk(queue, id))) this.known.push({ queue, id });
    this.gone.delete(jk(queue, id));
    this.jobs.set(jk(queue, id), payload);
    this.places.set(jk(queue, id), place);
  },
  addFlowRow(queue: string, id: string, row: FlowRow) {
    if (!this.exists(queue, id)) this.known.push({ queue, id });
    this.flowRows.set(jk(queue, id), row);
  },
  /** Whether a row of this id is in the queue: a job's or a flow's. */
  exists(queue: string, id: string): boolean {
    return this.jobs.has(jk(queue, id)) || this.flowRows.has(jk(queue, id));
  },
  placeOf(queue: string, id: string): Place {
    return this.places.get(jk(queue, id)) ?? {};
  },
  /** A job removed (DELETE …/jobs/:id): it is no longer known. */
  removeJob(queue: string, id: string) {
    this.jobs.delete(jk(queue, id));
    this.places.delete(jk(queue, id));
    this.known = this.known.filter((k) => k.queue !== queue || k.id !== id);
    this.gone.add(jk(queue, id));
  },
  laneOf(queue: string, group: string): LaneSet {
    return this.lanes.get(jk(queue, group)) ?? { paused: false };
  },
  /** The jobs waiting in a lane now (laned and due). */
  lanePending(queue: string, group: string): number {
    let n = 0;
    for (const [k, p] of this.places) if (p.group === group && p.due === undefined && k.startsWith(`${queue} `)) n++;
    return n;
  },
  reset() {
    this.jobs.clear();
    this.places.clear();
    this.known = [];
    this.idem.clear();
    this.deliveries.clear();
    this.gwIds = [];
    this.flowRows.clear();
    this.flowDocs = [];
    this.gone.clear();
    this.pausedQueues.clear();
    this.lanes.clear();
    this.repeats.clear();
  },
};
