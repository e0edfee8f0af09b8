// GET /v1/schedules (read): the cron table this producer fires (EMQ_CRONS: crons.ts), each
// schedule with its next fire time, for the schedules whose queue the caller may use (a
// tenant's token sees its own). No payload: it is the operator's, and a reader needs only when.
//   → 200 {"schedules": [{"name", "cron", "queue", "group"?, "delay"?, "nextFireAt"?}]}
import { json, type Answer, type Call, type Service } from './call.js';

export async function getCronSchedules(call: Call, service: Service): Promise<Answer> {
  const now = Date.now();
  const schedules = service
    .settings()
    .crons.filter((s) => call.caller.allows(s.queue))
    .map(({ name, cron, queue, group, delay }) => ({
      name,
      cron: cron.text,
      queue,
      ...(group !== undefined && { group }),
      ...(delay !== undefined && { delay: delay.text }),
      // undefined only once it never fires again (checked to fire at start)
      nextFireAt: cron.next(now),
    }));
  return json(call, 200, { schedules });
}
