// Cron schedules fired by the producer itself, from EMQ_CRONS (a JSON var):
//   [{"name": "nightly", "cron": "0 3 * * *", "queue": "reports",
//     "payload": "<utf-8 text>" | "payloadBase64": "<base64>",
//     "group"?: "<branded id>", "delay"?: "<n><unit>"}]
// Each fire makes one job with the same admission as POST …/jobs (flat, into a lane, or
// scheduled: cron-fire.ts). Checked whole at start, like every variable: an error names
// EMQ_CRONS and the entry by position, never a payload. The expressions: cron-syntax.ts.
import { jsonText, type Vars } from '../../shared/config/parse.js';
import { parseDuration } from '../../shared/duration.js';
import { validateGroup, validateQueue } from '../../shared/index.js';
import { validateScheduleName } from '../../shared/keyspace.js';
import { itemPayload } from './batch.js';
import { cronPattern, type CronPattern } from './cron-syntax.js';

export interface CronSchedule {
  /** 1 to 255 of A-Z a-z 0-9 . _ -, unique in the table: each fire's dedup scope is `cron:<name>`. */
  name: string;
  cron: CronPattern;
  queue: string;
  payload: Uint8Array;
  /** Its jobs' lane; none: the queue's default lane (EMQ_QUEUE_GROUPS), else flat. */
  group?: string;
  /** Its jobs are due this long after the fire's minute; none: due at once. */
  delay?: { text: string; ms: number };
}

const FIELDS = new Set(['name', 'cron', 'queue', 'payload', 'payloadBase64', 'group', 'delay']);

/** EMQ_CRONS read and checked; [] when unset. `now`: an expression must fire after it. */
export function parseCrons(vars: Vars, maxPayloadBytes: number, maxDelayMs: number, now = Date.now()): CronSchedule[] {
  const json = jsonText(vars, 'EMQ_CRONS');
  if (json === undefined) return [];
  if (!Array.isArray(json.value)) throw new Error('EMQ_CRONS must be a JSON array of {"name", "cron", "queue", "payload" | "payloadBase64"}');
  const names = new Set<string>();
  return json.value.map((entry: unknown, i) => {
    const at = `EMQ_CRONS[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new Error(`${at} must be an object`);
    const { name, cron, queue, payload, payloadBase64, group, delay } = entry as Record<string, unknown>;
    const unknown = Object.keys(entry).find((key) => !FIELDS.has(key));
    if (unknown !== undefined) throw new Error(`${at} has an unknown field; fields are ${[...FIELDS].join(', ')}`);
    const check = (field: string, run: () => void) => {
      try {
        run();
      } catch (err) {
        throw new Error(`${at}.${field}: ${(err as Error).message}`);
      }
    };
    check('name', () => validateScheduleName(name));
    if (names.has(name as string)) throw new Error(`${at}.name: another entry has the same name`);
    names.add(name as string);
    let pattern: CronPattern | undefined;
    check('cron', () => {
      try {
        pattern = cronPattern(cron, now);
      } catch (err) {
        throw new Error(`the expression ${(err as Error).message}`);
      }
    });
    check('queue', () => validateQueue(queue));
    const bytes = itemPayload(payload, payloadBase64, (detail) => new Error(`${at}: ${detail}`));
    if (bytes.length > maxPayloadBytes) throw new Error(`${at}: the payload is ${bytes.length} bytes; EMQ_MAX_PAYLOAD_BYTES is ${maxPayloadBytes}`);
    const schedule: CronSchedule = { name: name as string, cron: pattern!, queue: queue as string, payload: bytes };
    if (group !== undefined) {
      check('group', () => validateGroup(group));
      schedule.group = group as string;
    }
    if (delay !== undefined) {
      let ms = 0;
      check('delay', () => {
        if (typeof delay !== 'string') throw new RangeError('a delay is a string: a whole number with a unit ms, s, m, h or d (e.g. "30s")');
        ms = parseDuration(delay);
      });
      if (ms > maxDelayMs) throw new Error(`${at}.delay: the delay is beyond EMQ_MAX_DELAY`);
      schedule.delay = { text: delay as string, ms };
    }
    return schedule;
  });
}

/** The distinct expressions of `schedules`, in their order: a Worker's `[triggers] crons`. */
export const triggersOf = (schedules: readonly CronSchedule[]): string[] => [...new Set(schedules.map((s) => s.cron.text))];
