// One fire of cron schedules (EMQ_CRONS: crons.ts): a job per schedule, admitted as POST …/jobs
// admits one (jobs.ts: flat, into its lane or the queue's default lane, or due `delay` after
// the fire's minute), behind a dedup key made from (schedule name, the fire's minute), so a
// retried trigger, two regions or several `emq producer` replicas firing the same minute make
// one job; every later attempt is a `duplicate` of it. Each schedule's attempt is recorded like
// a request (functions/http/request-record.ts): method CRON, route `scheduled`, the schedule's
// name, its verdict; its summary goes to the same sinks (log line, metrics, data points).
// The Worker (worker.ts, its `scheduled` handler) and `emq producer` (cron-timers.ts) fire it.
import type { Connection } from '../../shared/index.js';
import { type Observer, scoped } from '../../shared/observe.js';
import { startRequest, tell } from '../http/request-record.js';
import type { Config } from './config.js';
import type { RequestSink } from './core.js';
import { minuteOf } from './cron-syntax.js';
import type { CronSchedule } from './crons.js';
import { reportedProblem } from './error-problems.js';
import { admit, withDefaultLane, type Admitted } from './jobs.js';
import type { Placement } from './placement.js';

/** The route the log line, the metrics and the data points name a fire by. */
export const CRON_ROUTE = 'scheduled';
export const CRON_METHOD = 'CRON';
/** A fire's dedup key lives a day (or EMQ_DEDUPE_TTL_SECONDS, if shorter): far past any retry or replica's clock skew, and a per-minute schedule keeps at most 1,440 keys. */
const FIRE_TTL_SECONDS = 86_400;

export interface FireOptions {
  config: Config;
  /** The connection that takes the queue's jobs (its home region's). */
  connection: (queue: string) => Connection;
  mint: () => string;
  observer?: Observer | undefined;
  sinks: readonly RequestSink[];
  /** Handed to the sinks with each summary (the Worker's bindings). */
  env?: unknown;
}

export type Fired = { name: string; queue: string } & (Admitted | { code: string });

/** The dedup scope and key of a schedule's fire in the minute holding `scheduledTime`. */
export const fireKey = (name: string, scheduledTime: number) => ({ scope: `cron:${name}`, key: String(minuteOf(scheduledTime)) });

/** Fires `schedules` for the minute holding `scheduledTime`, each on its own; never rejects (a failure is its Fired's code, logged). */
export function fire(schedules: readonly CronSchedule[], scheduledTime: number, options: FireOptions): Promise<Fired[]> {
  return Promise.all(schedules.map((s) => fireOne(s, scheduledTime, options)));
}

async function fireOne(schedule: CronSchedule, scheduledTime: number, { config, connection, mint, observer, sinks, env }: FireOptions): Promise<Fired> {
  const { name, queue, payload, group, delay } = schedule;
  const record = startRequest(undefined, undefined, observer);
  let fired: Fired;
  let status: number;
  try {
    const valkey = scoped(connection(queue), { headers: record.headers, observer: record });
    const { key, scope } = fireKey(name, scheduledTime);
    // due `delay` after the fire's minute, so every replica asks for the same time
    const placement: Placement = withDefaultLane(queue, { group, ...(delay && { at: Number(key) + delay.ms }) }, config.groupOf);
    const once = { scope, key, compare: false, ttlSeconds: Math.min(config.dedupeTtlSeconds, FIRE_TTL_SECONDS) };
    const { id, verdict } = await admit(valkey, queue, { payload, placement }, mint, once);
    fired = { name, queue, id, verdict };
    status = verdict === 'duplicate' ? 200 : 201;
  } catch (err) {
    const p = reportedProblem(err, CRON_METHOD, `${CRON_ROUTE} ${name}`, record.id);
    record.code = p.code;
    fired = { name, queue, code: p.code };
    status = p.status;
  }
  const summary = record.summary(CRON_METHOD, CRON_ROUTE, status, queue);
  summary.schedule = name;
  tell(sinks, summary, env);
  return fired;
}
