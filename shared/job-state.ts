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
