// jobState: a producer's read-back of one job: is it there, what state, how many attempts.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { ProtocolError, fromReply, replyText } from './errors.js';
import { enqueueKeys } from './keyspace.js';
import { jobStateScript } from './scripts.js';

export interface JobState {
  state: string;
  attempts: number;
}

/** The job's state and attempts, or null when no such job exists. Never returns the payload. */
export async function jobState(connection: Connection, queue: string, id: string): Promise<JobState | null> {
  const [row] = enqueueKeys(queue)(id);
  const outcome = await runScript(connection, jobStateScript, [row], []);
  if (!outcome.ok) throw fromReply(outcome.error);
  if (outcome.value === null) return null;
  const [state, attempts] = Array.isArray(outcome.value) ? outcome.value.map(replyText) : [];
  if (state === undefined || attempts === undefined || !/^\d+$/.test(attempts)) {
    throw new ProtocolError(`@job-state replied ${JSON.stringify(outcome.value)}; expected [state, attempts]`);
  }
  return { state, attempts: Number(attempts) };
}
