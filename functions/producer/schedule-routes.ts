// The library's repeatable jobs over HTTP (issue 26): EchoMQ.Repeat's registry, through its own
// @repeat_register and @repeat_cancel texts and our reads and moves (shared/schedules.ts):
//   PUT    /v1/queues/:queue/schedules/:name   {every, payload | payloadBase64, firstIn?} (control)
//          → 201 registered | 200 exists (same every and template) | 409 schedule_exists
//   GET    /v1/queues/:queue/schedules         the registry, a page (?cursor= &count=)    (read)
//   GET    /v1/queues/:queue/schedules/:name   one, ?payload=1 with its template          (read)
//   DELETE /v1/queues/:queue/schedules/:name   @repeat_cancel → 200 cancelled              (control)
//   POST   …/schedules/:name/pause | resume | run-now: the registry's score alone moves  (control)
// Occurrences land in flat pending, as the library's Pump writes them, and only where a host
// runs EchoMQ.Pump for the queue.
import {
  cancelSchedule,
  SCHEDULE_PAGE_MAX,
  isScheduleCursor,
  listSchedules,
  pauseSchedule,
  readSchedule,
  registerSchedule,
  resumeSchedule,
  runScheduleNow,
  validateScheduleName,
  type ScheduleView,
} from '../../shared/index.js';
import { parseDuration } from '../../shared/duration.js';
import { itemPayload, jsonOf } from './batch.js';
import { json, type Answer, type Call, type Service } from './call.js';
import { Problem } from './problem.js';
import { payloadField } from '../../shared/base64.js';
import { pageCount, requestBody, queueOf, via } from './queue-routes.js';

/** The route's schedule name, valid. */
function nameOf(call: Call): string {
  const name = call.request.param('name') ?? '';
  try {
    validateScheduleName(name);
  } catch (err) {
    throw new Problem(400, 'invalid_name', (err as Error).message);
  }
  return name;
}

const missing = (name: string, queue: string) => new Problem(404, 'not_found', `no schedule ${name} in queue "${queue}"`);

/** A registration as JSON answers it; its template only when asked. */
function shown(queue: string, view: ScheduleView, template: boolean) {
  const { name, everyMs, nextRunAt, paused } = view;
  return { queue, name, everyMs, nextRunAt, paused, ...(template && view.template !== undefined && payloadField(view.template)) };
}

/** A duration field of the body in admission's syntax (`30s`, `5m`...), within `max` ms. */
function durationOf(value: unknown, what: string, max: number, least: number): number {
  const refuse = (detail: string) => new Problem(400, 'invalid_body', `${what}: ${detail}`);
  if (typeof value !== 'string') throw refuse('a duration: a whole number with a unit ms, s, m, h or d (e.g. "1h")');
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (err) {
    throw refuse((err as Error).message);
  }
  if (ms < least || ms > max) throw refuse(`from ${least} ms to ${max} ms (EMQ_MAX_DELAY)`);
  return ms;
}

export async function putSchedule(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const name = nameOf(call);
  const { maxPayloadBytes, maxDelayMs } = service.settings();
  // a template's JSON: its payload base64'd is a third larger, and room for the rest
  const body = await requestBody(call, Math.ceil((maxPayloadBytes * 4) / 3) + 1_024, 'the schedule');
  const value = jsonOf(body)?.value;
  const refuse = (detail: string) => new Problem(400, 'invalid_body', detail);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw refuse('the body must be a JSON object: {"every": "1h", "payload" | "payloadBase64": ..., "firstIn"?: "5m"}');
  const { every, payload, payloadBase64, firstIn, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw refuse(`unknown field ${JSON.stringify(unknown.slice(0, 64))}: a schedule takes every, payload or payloadBase64, and firstIn`);
  const everyMs = durationOf(every, 'every', maxDelayMs, 1);
  const firstInMs = firstIn === undefined ? undefined : durationOf(firstIn, 'firstIn', maxDelayMs, 0);
  const template = itemPayload(payload, payloadBase64, refuse);
  if (template.length > maxPayloadBytes) throw new Problem(413, 'payload_too_large', `the template is larger than ${maxPayloadBytes} bytes`);
  const verdict = await registerSchedule(via(call, service, queue), queue, name, {
    everyMs,
    template,
    maxDelayMs,
    maxPayloadBytes,
    ...(firstInMs !== undefined && { firstInMs }),
  });
  if (verdict === 'conflict') {
    throw new Problem(409, 'schedule_exists', `schedule ${name} holds another period or template: delete it first`);
  }
  return json(call, verdict === 'registered' ? 201 : 200, { queue, name, verdict });
}

export async function getSchedules(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const { request } = call;
  const cursor = request.query('cursor');
  const count = pageCount(call, SCHEDULE_PAGE_MAX, 100);
  // ZSCAN's cursor is 64-bit: a larger one is the server's error, not a page (a 502 before)
  if (cursor !== undefined && !isScheduleCursor(cursor)) throw new Problem(400, 'invalid_query', 'cursor must be the cursor a page answered');
  const page = await listSchedules(via(call, service, queue), queue, { cursor, count });
  return json(call, 200, { queue, schedules: page.schedules.map((s) => shown(queue, s, false)), ...(page.cursor !== undefined && { cursor: page.cursor }) });
}

export async function getSchedule(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const name = nameOf(call);
  const view = await readSchedule(via(call, service, queue), queue, name);
  if (!view) throw missing(name, queue);
  return json(call, 200, shown(queue, view, call.request.query('payload') === '1'));
}

export async function deleteSchedule(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const name = nameOf(call);
  if ((await cancelSchedule(via(call, service, queue), queue, name)) === 'absent') throw missing(name, queue);
  return json(call, 200, { queue, name, verdict: 'cancelled' });
}

const moving =
  (move: typeof pauseSchedule) =>
  async (call: Call, service: Service): Promise<Answer> => {
    const queue = queueOf(call);
    const name = nameOf(call);
    const view = await move(via(call, service, queue), queue, name);
    if (!view) throw missing(name, queue);
    return json(call, 200, shown(queue, view, false));
  };

export const pauseRoute = moving(pauseSchedule);
export const resumeRoute = moving(resumeSchedule);
export const runNowRoute = moving(runScheduleNow);
