// `emq job`, `emq queue`, `emq group`: an operator's reads and control over Valkey directly
// (VALKEY_URL or --url, as `emq enqueue`), through the same verbs as the producer's routes
// (shared/: job-remove, job-promote, job-reschedule, queue-info, queue-pause, group-control).
// Each prints one JSON line; a verb's refusal (not found, active, in a flow, locked, not
// scheduled) is a RefusalError: exit 2, nothing written.
import { parseArgs } from 'node:util';
import { connectGlide } from '../shared/connections/glide.js';
import { parseDuration, parseTime } from '../shared/duration.js';
import {
  cancelSchedule,
  listSchedules,
  pauseSchedule,
  readSchedule,
  registerSchedule,
  resumeSchedule,
  runScheduleNow,
  validateScheduleName,
  type ScheduleView,
  JOB_LIST_STATES,
  jobDetail,
  listJobs,
  pauseQueue,
  promoteJob,
  queueInfo,
  readGroup,
  removeJob,
  rescheduleJob,
  setGroup,
  validateGroup,
  validateId,
  validateQueue,
  type Connection,
  type GroupChange,
  type JobListState,
} from '../shared/index.js';
import { listQueues } from '../shared/queue-list.js';
import { readStdin } from './stdin.js';
import { enqueueConfigFrom } from './config.js';

export const CONTROL_USAGE = `  emq job show <queue> <id> [--payload]        a job: state, attempts, lane, due time, flow parent, last error
  emq job rm <queue> <id>                       remove a pending, scheduled or dead job
  emq job promote <queue> <id>                  a scheduled job due now
  emq job reschedule <queue> <id> (--delay <D> | --not-before <T>)
  emq queue stats <queue> [--cursor <G>] [--count <n>]
                                                counts, paused, and the groups (a page)
  emq queue list [--cursor <c>] [--count <n>]  a page of the queues that exist, with their counts: one
                                                SCAN step of COUNT n (default 1000); cursor null: done
  emq queue jobs <queue> [--state pending|scheduled|dead] [--group <G>] [--limit <n>] [--cursor <c>]
                                                a page of its jobs: pending newest first (a lane with
                                                --group), scheduled soonest first, dead newest first
  emq queue pause <queue> | emq queue resume <queue>
                                                claims stop (admission goes on) / go on
  emq group show <queue> <group>
  emq group set <queue> <group> [--limit <n>] [--weight <n>] [--pause | --resume]
  emq schedule put <queue> <name> --every <D> [--first-in <D>]
                                                a repeatable of the library (EchoMQ.Repeat), stdin's
                                                bytes its template; fired by EchoMQ.Pump, flat
  emq schedule ls <queue> [--cursor <c>] [--count <n>] | emq schedule show <queue> <name>
  emq schedule rm|pause|resume|run-now <queue> <name>
      each takes --url (default $VALKEY_URL)`;

/** What a verb refused: the CLI says `refused (<code>)` and exits 2, as for a RefusalError. */
export class CliRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (code: string, message: string) => new CliRefusal(code, message);

function whole(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2 ** 31 - 1) throw new RangeError(`--${name} must be a whole number from 1 to ${2 ** 31 - 1}`);
  return Number(value);
}

/** Runs `emq <noun> <verb> …`; `usage` makes the CLI's usage error. */
export async function controlCommand(noun: string, argv: string[], usage: (message: string) => Error): Promise<void> {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      url: { type: 'string' },
      payload: { type: 'boolean' },
      delay: { type: 'string' },
      'not-before': { type: 'string' },
      cursor: { type: 'string' },
      count: { type: 'string' },
      limit: { type: 'string' },
      weight: { type: 'string' },
      pause: { type: 'boolean' },
      resume: { type: 'boolean' },
      every: { type: 'string' },
      'first-in': { type: 'string' },
      state: { type: 'string' },
      group: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const wants = noun === 'queue' && verb === 'list' ? 0 : noun === 'queue' || (noun === 'schedule' && verb === 'ls') ? 1 : 2;
  const second = { job: 'an id', group: 'a group' }[noun] ?? 'a name';
  if (positionals.length !== wants) {
    throw usage(`${noun} ${verb ?? ''} takes ${wants === 0 ? 'no queue' : wants === 1 ? 'a queue' : `a queue and ${second}`}`);
  }
  const [queue, other] = positionals as [string, string];
  if (wants > 0) validateQueue(queue);
  if (noun === 'job') validateId(other);
  if (noun === 'group') validateGroup(other);
  if (noun === 'schedule' && wants === 2) validateScheduleName(other);
  const template = noun === 'schedule' && verb === 'put' ? await readStdin() : undefined;
  const run = plan(noun, verb, queue, other, { ...values, template }, usage);
  const { url, wireVersion } = enqueueConfigFrom(process.env, values.url);
  if (!url) throw usage('no server: pass --url or set VALKEY_URL');
  const connection = await connectGlide({ url, wireVersion });
  try {
    process.stdout.write(`${JSON.stringify(await run(connection))}\n`);
  } finally {
    await connection.close();
  }
}

type Values = Record<string, string | boolean | Uint8Array | undefined>;

const ms = (name: string, value: string | undefined) => {
  if (value === undefined) return undefined;
  try {
    return parseDuration(value);
  } catch (err) {
    throw new RangeError(`--${name}: ${(err as Error).message}`);
  }
};

/** A schedule command's call (a RefusalError-like CliRefusal when the verb finds none). */
function schedulePlan(verb: string | undefined, queue: string, name: string, values: Values, usage: (m: string) => Error): (c: Connection) => Promise<unknown> {
  const none = () => new CliRefusal('not_found', `no schedule ${name} in queue "${queue}"`);
  const found = <T>(view: T | null) => {
    if (view === null) throw none();
    return view;
  };
  const shown = ({ template, ...view }: ScheduleView) => ({
    queue,
    ...view,
    ...(template !== undefined && { templateBase64: Buffer.from(template).toString('base64') }),
  });
  switch (verb) {
    case 'put': {
      const everyMs = ms('every', values.every as string | undefined);
      if (everyMs === undefined) throw usage('schedule put takes --every <duration>');
      const firstInMs = ms('first-in', values['first-in'] as string | undefined);
      const template = values.template as Uint8Array;
      return async (c) => {
        const verdict = await registerSchedule(c, queue, name, { everyMs, template, ...(firstInMs !== undefined && { firstInMs }) });
        if (verdict === 'conflict') throw new CliRefusal('schedule_exists', `schedule ${name} holds another period or template: rm it first`);
        return { queue, name, verdict };
      };
    }
    case 'ls': {
      const count = whole('count', values.count as string | undefined);
      const cursor = values.cursor as string | undefined;
      return async (c) => {
        const page = await listSchedules(c, queue, { cursor, count });
        return { queue, schedules: page.schedules.map(shown), ...(page.cursor !== undefined && { cursor: page.cursor }) };
      };
    }
    case 'show':
      return async (c) => shown(found(await readSchedule(c, queue, name)));
    case 'rm':
      return async (c) => {
        if ((await cancelSchedule(c, queue, name)) === 'absent') throw none();
        return { queue, name, verdict: 'cancelled' };
      };
    case 'pause':
      return async (c) => shown(found(await pauseSchedule(c, queue, name)));
    case 'resume':
      return async (c) => shown(found(await resumeSchedule(c, queue, name)));
    case 'run-now':
      return async (c) => shown(found(await runScheduleNow(c, queue, name)));
    default:
      throw usage(`unknown command "schedule ${verb ?? ''}"`);
  }
}

/** The call a command makes, checked whole before it connects. */
function plan(
  noun: string,
  verb: string | undefined,
  queue: string,
  second: string,
  values: Values,
  usage: (m: string) => Error,
): (c: Connection) => Promise<unknown> {
  if (noun === 'schedule') return schedulePlan(verb, queue, second, values, usage);
  const id = second;
  const missing = () => refuse('not_found', `no job ${id} in queue "${queue}"`);
  switch (`${noun} ${verb}`) {
    case 'job show':
      return async (c) => {
        const found = await jobDetail(c, queue, id, { payload: values.payload === true });
        if (!found) throw missing();
        const { payload, ...rest } = found;
        return { id, queue, ...rest, ...(payload !== undefined && { payloadBase64: Buffer.from(payload).toString('base64') }) };
      };
    case 'job rm':
      return async (c) => {
        const outcome = await removeJob(c, queue, id);
        if (outcome.removed) return { id, queue, verdict: 'removed', state: outcome.state };
        throw outcome.reason === 'absent' ? missing() : refuse(outcome.reason, `job ${id} was not removed: ${outcome.reason}`);
      };
    case 'job promote':
      return async (c) => {
        const outcome = await promoteJob(c, queue, id);
        if (outcome === 'promoted') return { id, queue, verdict: 'promoted' };
        throw outcome === 'absent' ? missing() : refuse('not_scheduled', `job ${id} is not scheduled`);
      };
    case 'job reschedule': {
      const delay = values.delay as string | undefined;
      const notBefore = values['not-before'] as string | undefined;
      if ((delay === undefined) === (notBefore === undefined)) throw usage('job reschedule takes --delay or --not-before');
      const at = delay !== undefined ? { delayMs: parseDuration(delay) } : { runAtMs: parseTime(notBefore!) };
      return async (c) => {
        const outcome = await rescheduleJob(c, queue, id, at);
        if (outcome.rescheduled) return { id, queue, verdict: 'rescheduled', runAt: outcome.runAt };
        throw outcome.reason === 'absent' ? missing() : refuse('not_scheduled', `job ${id} is not scheduled`);
      };
    }
    case 'queue stats': {
      const count = whole('count', values.count as string | undefined);
      const cursor = values.cursor as string | undefined;
      if (cursor !== undefined) validateGroup(cursor);
      return (c) => queueInfo(c, queue, { ...(cursor !== undefined && { cursor }), ...(count !== undefined && { count }) });
    }
    case 'queue list': {
      const count = whole('count', values.count as string | undefined);
      const cursor = values.cursor as string | undefined;
      return async (c) => {
        const page = await listQueues(c, { ...(cursor !== undefined && { cursor }), ...(count !== undefined && { count }) });
        return { queues: page.queues, cursor: page.cursor ?? null };
      };
    }
    case 'queue jobs': {
      const state = (values.state ?? 'pending') as JobListState;
      if (!JOB_LIST_STATES.includes(state)) throw usage(`--state must be one of ${JOB_LIST_STATES.join(', ')}`);
      const limit = whole('limit', values.limit as string | undefined);
      const cursor = values.cursor as string | undefined;
      const group = values.group as string | undefined;
      if (group !== undefined) validateGroup(group);
      return async (c) => {
        const options = { state, ...(limit !== undefined && { limit }), ...(cursor !== undefined && { cursor }), ...(group !== undefined && { group }) };
        const page = await listJobs(c, queue, options);
        return { queue, state, jobs: page.jobs, cursor: page.cursor ?? null };
      };
    }
    case 'queue pause':
    case 'queue resume':
      return (c) => pauseQueue(c, queue, verb === 'pause');
    case 'group show':
      return (c) => readGroup(c, queue, second);
    case 'group set': {
      if (values.pause && values.resume) throw usage('group set takes --pause or --resume, not both');
      const limit = whole('limit', values.limit as string | undefined);
      const weight = whole('weight', values.weight as string | undefined);
      const change: GroupChange = {
        ...(limit !== undefined && { limit }),
        ...(weight !== undefined && { weight }),
        ...(values.pause === true && { paused: true }),
        ...(values.resume === true && { paused: false }),
      };
      if (Object.keys(change).length === 0) throw usage('group set takes --limit, --weight, --pause or --resume');
      return (c) => setGroup(c, queue, second, change);
    }
    default:
      throw usage(`unknown command "${noun} ${verb ?? ''}"`);
  }
}
