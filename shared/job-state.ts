// jobState: a producer's read-back of one job, as the EchoMQ library reads it (by which of
// the queue's sets holds the id): is it there, what state, how many attempts.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { ProtocolError, fromReply, replyText } from './errors.js';
import { jobKey } from './keyspace.js';
import { jobStateScript } from './scripts.js';

/** The states @job-state answers: the set that holds the id, or a flow parent held out of every set. */
export const JOB_STATES = ['pending', 'active', 'scheduled', 'dead', 'awaiting_children'] as const;

export interface JobState {
  state: string;
  attempts: number;
}

/**
 * The job's state (`pending`, `active`, `scheduled`, `dead` or `awaiting_children`) and
 * attempts, or null when no set holds it and it is no flow parent. Never returns the payload.
 */
export async function jobState(connection: Connection, queue: string, id: string): Promise<JobState | null> {
  const row = jobKey(queue, id); // checks the queue and the id
  const base = `emq:{${queue}}:`;
  const keys = [row, `${base}pending`, `${base}active`, `${base}schedule`, `${base}dead`];
  const outcome = await runScript(connection, jobStateScript, keys, [id]);
  if (!outcome.ok) throw fromReply(outcome.error);
  if (outcome.value === null) return null;
  const [state, attempts] = Array.isArray(outcome.value) && outcome.value.length === 2 ? outcome.value.map(replyText) : [];
  if (state === undefined || !(JOB_STATES as readonly string[]).includes(state) || attempts === undefined || !/^\d{1,15}$/.test(attempts)) {
    const shown = JSON.stringify(outcome.value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v instanceof Uint8Array ? replyText(v) : v));
    throw new ProtocolError(`@job-state replied ${shown?.slice(0, 200)}; expected [state, attempts]`);
  }
  return { state, attempts: Number(attempts) };
}

/** A job as a reader shows it: jobState's two fields and, each only when the row has it, what else it says. */
export interface JobDetail {
  state: string;
  attempts: number;
  /** The group (lane) the row names. */
  group?: string;
  /** A scheduled job's due time: its schedule score, Unix ms. */
  runAt?: number;
  /** A flow child's parent id, and the parent's queue when it is another. */
  parent?: string;
  parentQueue?: string;
  /** A dead job's last error, as the library's retry recorded it. */
  lastError?: string;
  /** The payload's bytes, exactly as stored: only when asked for. */
  payload?: Uint8Array;
}

const DETAIL_NAMES: Readonly<Record<string, keyof JobDetail>> = {
  group: 'group',
  run_at: 'runAt',
  parent: 'parent',
  parent_queue: 'parentQueue',
  last_error: 'lastError',
  payload: 'payload',
};

/**
 * jobState and the row's fields a reader shows (group, runAt, parent, parentQueue,
 * lastError), with `payload: true` the payload's bytes too; null as jobState. Reads only.
 */
export async function jobDetail(connection: Connection, queue: string, id: string, options: { payload?: boolean } = {}): Promise<JobDetail | null> {
  const row = jobKey(queue, id); // checks the queue and the id
  const base = `emq:{${queue}}:`;
  const keys = [row, `${base}pending`, `${base}active`, `${base}schedule`, `${base}dead`];
  const outcome = await runScript(connection, jobStateScript, keys, [id, options.payload ? 'payload' : 'detail']);
  if (!outcome.ok) throw fromReply(outcome.error);
  if (outcome.value === null) return null;
  const reply = Array.isArray(outcome.value) ? outcome.value : [];
  const bad = (why: string) => new ProtocolError(`@job-state replied ${why}; expected [state, attempts, name, value, ...]`);
  const [state, attempts] = reply.slice(0, 2).map(replyText);
  if (
    reply.length % 2 !== 0 ||
    state === undefined ||
    !(JOB_STATES as readonly string[]).includes(state) ||
    attempts === undefined ||
    !/^\d{1,15}$/.test(attempts)
  ) {
    throw bad(`${reply.length} elements, state ${JSON.stringify(state)}`);
  }
  const detail: JobDetail = { state, attempts: Number(attempts) };
  for (let i = 2; i < reply.length; i += 2) {
    const name = DETAIL_NAMES[replyText(reply[i]) ?? ''];
    const value = reply[i + 1];
    if (name === undefined || detail[name] !== undefined) throw bad(`a field ${JSON.stringify(replyText(reply[i]))?.slice(0, 40)} unknown or twice`);
    if (name === 'payload') {
      // bytes exactly: a view of the reply's bytes (glide hands a Buffer, REST a Uint8Array)
      if (!(value instanceof Uint8Array)) throw bad('a payload that is not bytes');
      detail.payload = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    } else if (name === 'runAt') {
      const ms = Number(replyText(value));
      if (!Number.isSafeInteger(ms)) throw bad(`a run_at of ${JSON.stringify(replyText(value))?.slice(0, 40)}`);
      detail.runAt = ms;
    } else {
      const text = replyText(value);
      if (text === undefined) throw bad(`a ${name} that is not text`);
      detail[name as 'group' | 'parent' | 'parentQueue' | 'lastError'] = text;
    }
  }
  return detail;
}
