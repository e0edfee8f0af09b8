// pauseQueue: the library's Admin.pause / Admin.resume, as a script a gateway can admit to a
// control scope only. A paused queue still admits jobs; only the library's claims stop.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { InvalidArgumentError, ProtocolError, fromReply } from './errors.js';
import { metaKey } from './keyspace.js';
import { queuePauseScript } from './scripts.js';

/**
 * Pauses (`paused: true`: the meta hash's `paused` field set to `1`) or resumes (the field
 * deleted) claiming on the whole queue, exactly as the library's Admin verbs. Idempotent.
 * Admission continues while a queue is paused: enqueue still answers `enqueued`.
 */
export async function pauseQueue(connection: Connection, queue: string, paused: boolean): Promise<{ queue: string; paused: boolean }> {
  const meta = metaKey(queue); // checks the queue
  if (typeof paused !== 'boolean') throw new InvalidArgumentError(`paused must be true or false, got ${typeof paused}`);
  const outcome = await runScript(connection, queuePauseScript, [meta], [paused ? 'pause' : 'resume']);
  if (!outcome.ok) throw fromReply(outcome.error);
  if (Number(outcome.value) !== 1) throw new ProtocolError(`@queue-pause replied ${String(outcome.value).slice(0, 200)}; expected 1`);
  return { queue, paused };
}
