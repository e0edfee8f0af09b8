// The typed client's repeatables (issue 26): the EchoMQ library's registry of recurring jobs,
// fired by EchoMQ.Pump where a host runs it; occurrences land in flat pending. Registering,
// cancelling and moving need a token whose `can` holds `control`.
import type { Payload } from '../shared/enqueue.js';
import { toBase64 } from '../shared/base64.js';

export interface ScheduleInfo {
  queue: string;
  name: string;
  everyMs: number;
  /** Unix ms the Pump next finds it due; null while paused. */
  nextRunAt: number | null;
  paused: boolean;
  /** With `payload: true`: its template as text, or `payloadBase64` when it is not UTF-8. */
  payload?: string;
  payloadBase64?: string;
}

/** A cron schedule this producer fires itself (its EMQ_CRONS), as GET /v1/schedules lists it. */
export interface CronInfo {
  name: string;
  /** Cloudflare's Cron Trigger dialect, UTC. */
  cron: string;
  queue: string;
  group?: string;
  delay?: string;
  /** Unix ms of its next fire. */
  nextFireAt?: number;
}

type Send = (target: string, init: RequestInit) => Promise<{ status: number; body: unknown }>;

/** A duration as the producer reads it: `30s`, `5m`..., or a number of ms. */
const duration = (d: string | number) => (typeof d === 'number' ? `${d}ms` : d);

/** The calls, given the client's `send`, its queue path and its "null on 404 not_found" wrapper. */
export function scheduleCalls(
  send: Send,
  queuePath: (queue: string) => string,
  orNull: <T>(call: Promise<{ body: unknown }>) => Promise<T | null>,
  base: string,
) {
  const path = (queue: string, name?: string) => `${queuePath(queue)}/schedules${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
  return {
    /** The cron schedules the producer fires itself, on the queues this token may use, each with its next fire. */
    crons: async () => ((await send(`${base}/v1/schedules`, { method: 'GET' })).body as { schedules: CronInfo[] }).schedules,

    /**
     * Registers `name`: `template` every `every` (first after `firstIn`, default at once).
     * `exists` when it holds the same period and template; ProducerError 409 schedule_exists
     * when it holds others (cancel first).
     */
    registerSchedule: async (
      queue: string,
      name: string,
      { every, template, firstIn }: { every: string | number; template: Payload; firstIn?: string | number },
    ) => {
      const payload = typeof template === 'string' ? { payload: template } : { payloadBase64: toBase64(template) };
      const body = JSON.stringify({ every: duration(every), ...payload, ...(firstIn !== undefined && { firstIn: duration(firstIn) }) });
      return (await send(path(queue, name), { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body })).body as {
        queue: string;
        name: string;
        verdict: 'registered' | 'exists';
      };
    },
    /** A page of the registry (pass `cursor` back for the next; a name may appear on two pages). */
    schedules: async (queue: string, page: { cursor?: string; count?: number } = {}) => {
      const query = new URLSearchParams();
      if (page.cursor !== undefined) query.set('cursor', page.cursor);
      if (page.count !== undefined) query.set('count', String(page.count));
      const search = query.size > 0 ? `?${query}` : '';
      return (await send(`${path(queue)}${search}`, { method: 'GET' })).body as { queue: string; schedules: ScheduleInfo[]; cursor?: string };
    },
    /** One registration (with its template when asked), or null. */
    schedule: (queue: string, name: string, options: { payload?: boolean } = {}) =>
      orNull<ScheduleInfo>(send(`${path(queue, name)}${options.payload ? '?payload=1' : ''}`, { method: 'GET' })),
    /** Cancels it; null: no such schedule. */
    cancelSchedule: (queue: string, name: string) =>
      orNull<{ queue: string; name: string; verdict: 'cancelled' }>(send(path(queue, name), { method: 'DELETE' })),
    /** The Pump stops finding it due / finds it due at its next period / on its next sweep; null: no such schedule. */
    pauseSchedule: (queue: string, name: string) => orNull<ScheduleInfo>(send(`${path(queue, name)}/pause`, { method: 'POST' })),
    resumeSchedule: (queue: string, name: string) => orNull<ScheduleInfo>(send(`${path(queue, name)}/resume`, { method: 'POST' })),
    runScheduleNow: (queue: string, name: string) => orNull<ScheduleInfo>(send(`${path(queue, name)}/run-now`, { method: 'POST' })),
  };
}
