// removeJob: the library's remove_job, hardened (lua/job-remove.lua): a waiting job (pending,
// flat or in its lane; scheduled; dead) is removed with the library's writes and its lane's;
// a claimed, locked or flowing job is refused with nothing written.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { ProtocolError, fromReply } from './errors.js';
import { KEY_ROUNDS, flagged, oneOf } from './control-reply.js';
import { dedupKey, jobKey } from './keyspace.js';
import { jobRemoveScript } from './scripts.js';

export type RemoveOutcome =
  | { removed: true; state: 'pending' | 'scheduled' | 'dead' }
  | { removed: false; reason: 'absent' | 'job_active' | 'job_in_flow' | 'job_locked' };

const STATES = ['pending', 'scheduled', 'dead'] as const;
const REASONS = ['absent', 'job_active', 'job_in_flow', 'job_locked'] as const;

/**
 * Removes one job. Resolves `{removed: true, state}` (what it was) or `{removed: false,
 * reason}` (nothing written): `absent`, `job_active` (claimed), `job_locked` (the library's
 * lock), `job_in_flow` (a flow parent or child whose flow is not done). With `dedupId`, its
 * key (`emq:{q}:de:<dedupId>`) is deleted too, only when it holds this id. Throws typed
 * errors for a bad queue, id or dedup id (nothing sent) or the script's refusals.
 */
export async function removeJob(connection: Connection, queue: string, id: string, options: { dedupId?: string } = {}): Promise<RemoveOutcome> {
  const row = jobKey(queue, id); // checks the queue and the id
  const did = options.dedupId ?? '';
  const dedup = did === '' ? `emq:{${queue}}:de:` : dedupKey(queue, did);
  const base = `emq:{${queue}}:`;
  const fixed = [
    row,
    `${base}pending`,
    `${base}active`,
    `${base}schedule`,
    `${base}dead`,
    `${row}:logs`,
    `${row}:lock`,
    `${row}:dependencies`,
    dedup,
    `${base}ring`,
  ];
  let [group, parent] = ['', ''];
  for (let round = 0; round <= KEY_ROUNDS; round++) {
    const keys = [...fixed];
    if (group !== '') keys.push(`${base}g:${group}:pending`);
    if (parent !== '') keys.push(`${base}job:${parent}`, `${base}job:${parent}:dependencies`);
    const outcome = await runScript(connection, jobRemoveScript, keys, [id, did, group, parent]);
    if (!outcome.ok) throw fromReply(outcome.error);
    const [flag, [a, b]] = flagged('job-remove', outcome.value);
    if (flag === 1) return { removed: true, state: oneOf('job-remove', a, STATES) };
    if (flag === 0) return { removed: false, reason: oneOf('job-remove', a, REASONS) };
    // the row names a lane or a parent: the script checked both are branded ids
    [group, parent] = [a ?? '', b ?? ''];
  }
  throw new ProtocolError(`@job-remove asked ${KEY_ROUNDS + 1} times for other keys; the row's group or parent keeps changing`);
}
