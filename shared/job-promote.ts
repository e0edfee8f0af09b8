// promoteJob: one scheduled job made due now, with exactly the library's @promote writes for
// that id (lua/job-promote.lua): to its group's lane with the ring and wake rule, or to the
// pending set; state pending.
import type { Connection } from './connection.js';
import { KEY_ROUNDS, flagged, oneOf } from './control-reply.js';
import { runScript } from './dispatch.js';
import { ProtocolError, fromReply } from './errors.js';
import { jobKey } from './keyspace.js';
import { jobPromoteScript } from './scripts.js';

/**
 * Promotes one scheduled job: `promoted`, or (nothing written) `not_scheduled` when the row
 * exists and the schedule set does not hold the id, `absent` when there is no row. Throws
 * typed errors for a bad queue or id (nothing sent) or the script's refusals.
 */
export async function promoteJob(connection: Connection, queue: string, id: string): Promise<'promoted' | 'not_scheduled' | 'absent'> {
  const row = jobKey(queue, id); // checks the queue and the id
  const base = `emq:{${queue}}:`;
  let group = '';
  for (let round = 0; round <= KEY_ROUNDS; round++) {
    const keys = [row, `${base}schedule`, `${base}pending`];
    if (group !== '') keys.push(...[`g:${group}:pending`, 'ring', 'paused', 'glimit', 'gactive', 'wake'].map((k) => base + k));
    const outcome = await runScript(connection, jobPromoteScript, keys, [id, group]);
    if (!outcome.ok) throw fromReply(outcome.error);
    const [flag, [a]] = flagged('job-promote', outcome.value);
    if (flag === 1) return 'promoted';
    if (flag === 0) return oneOf('job-promote', a, ['not_scheduled', 'absent'] as const);
    group = a ?? ''; // the row names a lane: the script checked it is a branded id
  }
  throw new ProtocolError(`@job-promote asked ${KEY_ROUNDS + 1} times for other keys; the row's group keeps changing`);
}
