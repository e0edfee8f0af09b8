// `emq producer`'s clock for its cron schedules (EMQ_CRONS): one timer per schedule, armed for
// its next fire in UTC (cron-syntax.ts, the dialect Cloudflare's Cron Triggers take). A fire's
// time is its nominal minute, not the moment the timer woke, so replicas firing the same minute
// share one dedup key and make one job (cron-fire.ts). A timer that woke early sleeps the rest;
// one that woke late (a blocked event loop, a suspended host) fires that minute once and skips
// to the next fire after now. Timers are unref'd: they never keep the process alive.
import type { CronSchedule } from './crons.js';

/** setTimeout's longest delay (2^31 - 1 ms, ~24.8 days): a later fire is reached in steps. */
const MAX_TIMEOUT_MS = 2_147_483_647;

export interface CronTimers {
  /** Clears every timer and waits for the fires under way. */
  stop(): Promise<void>;
}

/** Arms a timer per schedule; `fire(schedule, minute)` is called at each fire (and must not reject). */
export function startCronTimers(schedules: readonly CronSchedule[], fire: (schedule: CronSchedule, scheduledTime: number) => Promise<unknown>): CronTimers {
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;

  const arm = (schedule: CronSchedule, at: number | undefined) => {
    if (stopped || at === undefined) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (Date.now() < at) return arm(schedule, at);
        const done = fire(schedule, at).finally(() => running.delete(done));
        running.add(done);
        arm(schedule, schedule.cron.next(Math.max(at, Date.now())));
      },
      Math.min(Math.max(at - Date.now(), 0), MAX_TIMEOUT_MS),
    );
    timer.unref();
    timers.add(timer);
  };
  for (const schedule of schedules) arm(schedule, schedule.cron.next(Date.now()));

  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(running);
    },
  };
}
