// enqueueGrouped / enqueueGroupedMany / enqueueGroupedOnce: grouped admission on the
// library's wire (its fair lanes). The row carries `group`; the id joins the group's lane
// emq:{q}:g:<group>:pending, and the group is put on the ring (with a wake) when it can be
// served now, exactly as the library's @genqueue. The flat pending set is never touched.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { EmqError, fromReply } from './errors.js';
import { admissionOf, checkPayload, type Payload, type Verdict } from './enqueue.js';
import { checkTtlSeconds, replyOf, sendOnce, type OnceOptions } from './enqueue-once.js';
import { mintId } from './ids.js';
import { dedupIdOf, dedupKey, genqueueKeys, validateGroup, validateId } from './keyspace.js';
import { genqueueOnceScript, genqueueScript } from './scripts.js';

/**
 * Enqueues one job into its group's lane (`group`: a branded id of any namespace, e.g. a
 * tenant's `PRT…`). Resolves to `enqueued`, or `duplicate` when the id exists (nothing
 * written). Refusals throw typed errors before anything is sent (queue, id, group, payload)
 * or after the script refused (kind, layout, wrong type); a transport failure throws
 * ConnectionError, and the same call may be retried safely while the job exists (the id dedups until its job completes; enqueueOnce dedups beyond).
 */
export async function enqueueGrouped(connection: Connection, queue: string, group: string, id: string, payload: Payload): Promise<Verdict> {
  const keys = genqueueKeys(queue)(id, group);
  checkPayload(payload);
  const verdict = admissionOf(await runScript(connection, genqueueScript, keys, [id, group, payload]), '@genqueue');
  if (verdict instanceof EmqError) throw verdict;
  return verdict;
}

/** enqueueGroupedOnce's options: enqueueOnce's (scope, key, payload, compare, ttlSeconds, id, mint) and the group. */
export interface GroupedOnceOptions extends OnceOptions {
  group: string;
}

/**
 * Enqueues `payload` into `group`'s lane unless (scope, key) was used within its lifetime,
 * in which case it answers the job that use made (`duplicate`; with `compare`, another
 * payload or another group is a ConflictError and nothing is written). As enqueueOnce
 * otherwise: a minted id that names another minter's job is minted again.
 */
export async function enqueueGroupedOnce(connection: Connection, queue: string, options: GroupedOnceOptions): Promise<{ id: string; verdict: Verdict }> {
  const { scope, key, group, payload, compare, ttlSeconds, id: given, mint = mintId } = options;
  const keysOf = genqueueKeys(queue);
  validateGroup(group);
  checkPayload(payload);
  checkTtlSeconds(ttlSeconds);
  if (given !== undefined) validateId(given);
  const dedup = dedupKey(queue, await dedupIdOf(scope, key));
  const { flag, id } = await sendOnce(given, mint, '@genqueue-once', async (id) => {
    const outcome = await runScript(
      connection,
      genqueueOnceScript,
      [...keysOf(id, group), dedup],
      [id, compare ? '1' : '0', String(ttlSeconds), group, payload],
    );
    if (!outcome.ok) throw fromReply(outcome.error);
    return replyOf(outcome.value, id, '@genqueue-once');
  });
  return { id, verdict: flag === 1 ? 'enqueued' : 'duplicate' };
}
