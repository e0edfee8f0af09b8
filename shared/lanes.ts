// enqueueGrouped / enqueueGroupedMany / enqueueGroupedOnce: grouped admission on the
// library's wire (its fair lanes). The row carries `group`; the id joins the group's lane
// emq:{q}:g:<group>:pending, and the group is put on the ring (with a wake) when it can be
// served now, exactly as the library's @genqueue. The flat pending set is never touched.
import type { Connection } from './connection.js';
import { evalsha, runScript } from './dispatch.js';
import { EmqError, fromReply } from './errors.js';
import { BatchError, checkPayload, sendMinted, verdictOf, type JobResult, type Payload, type Verdict } from './enqueue.js';
import { checkTtlSeconds, replyOf, sendOnce, type OnceOptions } from './enqueue-once.js';
import { mintId } from './ids.js';
import { dedupIdOf, dedupKey, genqueueKeys, validateGroup, validateId } from './keyspace.js';
import { genqueueOnceScript, genqueueScript } from './scripts.js';

/**
 * Enqueues one job into its group's lane (`group`: a branded id of any namespace, e.g. a
 * tenant's `PRT…`). Resolves to `enqueued`, or `duplicate` when the id exists (nothing
 * written). Refusals throw typed errors before anything is sent (queue, id, group, payload)
 * or after the script refused (kind, layout, wrong type); a transport failure throws
 * ConnectionError, and the same call may be retried safely: the id makes it idempotent.
 */
export async function enqueueGrouped(connection: Connection, queue: string, group: string, id: string, payload: Payload): Promise<Verdict> {
  const keys = genqueueKeys(queue)(id, group);
  checkPayload(payload);
  const verdict = verdictOf(await runScript(connection, genqueueScript, keys, [id, group, payload]), '@genqueue');
  if (verdict instanceof EmqError) throw verdict;
  return verdict;
}

/** A job for enqueueGroupedMany: its group, and an id or none (one is minted). */
export interface GroupedJobInput {
  id?: string | undefined;
  group: string;
  payload: Payload;
}

/**
 * Enqueues many grouped jobs of one queue (any mix of groups) as one pipeline. As
 * enqueueMany: every job is checked before anything is sent (an error names its index),
 * each stays atomic on its own, a verdict per job in order, minted ids that collide with
 * another minter's are minted again, TRYAGAIN is retried, and if any job fails, BatchError
 * says which landed.
 */
export async function enqueueGroupedMany(
  connection: Connection,
  queue: string,
  jobs: readonly GroupedJobInput[],
  mint: () => string = mintId,
): Promise<JobResult[]> {
  const keysOf = genqueueKeys(queue);
  const minted = jobs.map((job) => job.id === undefined);
  const ids = jobs.map(({ id, group, payload }, index) => {
    try {
      const chosen = id ?? mint();
      keysOf(chosen, group);
      checkPayload(payload);
      return chosen;
    } catch (err) {
      if (err instanceof Error) err.message = `job ${index}: ${err.message}`;
      throw err;
    }
  });
  if (jobs.length === 0) return [];
  const commandOf = (i: number) => evalsha(genqueueScript, keysOf(ids[i]!, jobs[i]!.group), [ids[i]!, jobs[i]!.group, jobs[i]!.payload]);
  const outcomes = await sendMinted(connection, genqueueScript, ids, minted, commandOf, (o) => verdictOf(o) === 'duplicate', mint);
  const results = ids.map((id, i) => {
    const verdict = verdictOf(outcomes[i]!, '@genqueue');
    return verdict instanceof EmqError ? { id, error: verdict } : { id, verdict };
  });
  if (results.some((r) => 'error' in r)) throw new BatchError(results);
  return results as JobResult[];
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
