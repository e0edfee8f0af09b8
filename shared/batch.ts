// admitMany: a batch of one queue's jobs, each placed by its own options (flat, into a lane,
// or scheduled), sent as one pipeline whatever the mix. enqueueMany, enqueueGroupedMany and
// scheduleMany are admitMany of one kind of job.
import type { Connection, Outcome, ScriptCommand } from './connection.js';
import { dispatch, evalsha } from './dispatch.js';
import { EmqError, fromReply } from './errors.js';
import { BatchError, MINT_TRIES, admissionOf, checkPayload, collisionError, type JobInput, type JobResult } from './enqueue.js';
import { checkTtlSeconds, replyOf } from './enqueue-once.js';
import { mintId, remint } from './ids.js';
import { dedupIdOf, dedupKey, enqueueKeys, genqueueKeys, scheduleKeys, validateGroup } from './keyspace.js';
import { scheduleArgs, type ScheduleOptions, type ScheduleResult } from './schedule.js';
import { enqueueOnceScript, enqueueScript, genqueueOnceScript, genqueueScript, scheduleOnceScript, scheduleScript, type Script } from './scripts.js';

export type AdmitVerdict = 'enqueued' | 'scheduled' | 'duplicate';

/**
 * A job's dedup key (enqueueOnce's scope, key, compare and ttlSeconds): the job goes through
 * its script's -once twin, so a later use of the key, even after the job completed and its
 * row is gone, answers that job as `duplicate`.
 */
export interface BatchOnce {
  scope: string;
  key: string;
  compare: boolean;
  ttlSeconds: number;
}

/**
 * A job for admitMany. With `at` or `inMs` it is scheduled (@schedule; with `group`, it joins
 * that lane when due); else with `group` it joins that lane now (@genqueue); else it goes flat
 * into the queue's pending set (@enqueue). Without an id, one is minted. With `once`, the
 * script's -once twin behind that dedup key.
 */
export interface AdmitInput extends JobInput, ScheduleOptions {
  once?: BatchOnce | undefined;
}

export interface AdmitResult {
  id: string;
  verdict: AdmitVerdict;
}

/** One job's call as first sent (`call`), and what it takes to send it again under another id. */
interface Placed {
  script: Script;
  name: string;
  landed: 'enqueued' | 'scheduled';
  keys: (id: string) => string[];
  /** The call under the job's first id, its keys checked once (the arguments after the id are kept for a resend). */
  call: ScriptCommand;
  /** The job's dedup key when it goes through a -once twin (which replies [flag, id]). */
  dedup?: string;
}

/**
 * Admits many jobs of one queue, any mix of flat, lane and scheduled, as one pipeline (one
 * round trip in steady state; after a script flush, one more with each script's first call as
 * EVAL). Every job is checked before anything is sent (an error names its index), and each
 * stays atomic on its own. Resolves to a verdict per job in order: `enqueued` (flat or lane),
 * `scheduled`, or `duplicate` when the id exists (nothing written; also for a later copy of
 * an id inside the batch). A minted id answered `duplicate` collided with another minter's
 * job: it is minted again and resent, at most MINT_TRIES times. Jobs a cluster answers
 * TRYAGAIN are sent again, bounded. If any job fails, throws BatchError with every job's
 * outcome, so the caller knows exactly which landed.
 */
export function admitMany(connection: Connection, queue: string, jobs: readonly AdmitInput[], mint: () => string = mintId): Promise<AdmitResult[]> {
  return admit(connection, queue, jobs, mint);
}

type Kind = 'flat' | 'lane' | 'scheduled';

/** admitMany; with `only`, every job is placed as that kind (so a lane job without a group is refused, not sent flat). */
async function admit(connection: Connection, queue: string, jobs: readonly AdmitInput[], mint: () => string, only?: Kind): Promise<AdmitResult[]> {
  const flat = enqueueKeys(queue);
  const lane = genqueueKeys(queue);
  const later = scheduleKeys(queue);
  const ids: string[] = [];
  const dedupIds = await Promise.all(jobs.map((job) => (job.once === undefined ? undefined : dedupIdOf(job.once.scope, job.once.key))));
  const placed = jobs.map((job, index): Placed => {
    try {
      const id = job.id ?? mint();
      ids.push(id);
      const kind = only ?? (job.at !== undefined || job.inMs !== undefined ? 'scheduled' : job.group !== undefined ? 'lane' : 'flat');
      const { group, once } = job;
      let place: Omit<Placed, 'call'> & { args: unknown[] };
      if (kind === 'scheduled') {
        const [mode, value] = scheduleArgs(job);
        if (group !== undefined) validateGroup(group);
        const args = group === undefined ? [mode, value, job.payload] : [mode, value, group, job.payload];
        place = { script: scheduleScript, name: '@schedule', landed: 'scheduled', keys: later, args };
      } else if (kind === 'lane') {
        place = { script: genqueueScript, name: '@genqueue', landed: 'enqueued', keys: (id) => lane(id, group as string), args: [group, job.payload] };
      } else {
        place = { script: enqueueScript, name: '@enqueue', landed: 'enqueued', keys: flat, args: [job.payload] };
      }
      checkPayload(job.payload);
      if (once === undefined) {
        const { args, ...rest } = place;
        return { ...rest, call: evalsha(rest.script, rest.keys(id), [id, ...args] as ScriptCommand['args']) };
      }
      // the -once twin: the same keys and the dedup key last; compare and TTL after the id
      checkTtlSeconds(once.ttlSeconds);
      const dedup = dedupKey(queue, dedupIds[index]!);
      const script = ONCE.get(place.script)!;
      const keys = (id: string) => [...place.keys(id), dedup];
      const args = [id, once.compare ? '1' : '0', String(once.ttlSeconds), ...place.args] as ScriptCommand['args'];
      return { script, name: `${place.name}-once`, landed: place.landed, keys, dedup, call: evalsha(script, keys(id), args) };
    } catch (err) {
      if (err instanceof Error) err.message = `job ${index}: ${err.message}`;
      throw err;
    }
  });
  if (jobs.length === 0) return [];

  const scripts = [...new Set(placed.map((p) => p.script))];
  const minted = jobs.map((job) => job.id === undefined);
  /** A -once twin's reply ([flag, id]), checked: 2 is an id that names a job we did not send. */
  const onceReply = (i: number, outcome: Outcome): { flag: 0 | 1 | 2; id: string } | EmqError => {
    if (!outcome.ok) return fromReply(outcome.error);
    try {
      return replyOf(outcome.value, ids[i]!, placed[i]!.name);
    } catch (err) {
      return err as EmqError;
    }
  };
  const commandOf = (i: number) => {
    const { call, script, keys } = placed[i]!;
    const id = ids[i]!;
    // a reminted id: its keys are built (and checked) for it, the arguments after the id kept
    return id === call.args[0] ? call : evalsha(script, keys(id), [id, ...call.args.slice(1)]);
  };
  // one id under two scripts: their calls must run in the batch's order, which a NOSCRIPT
  // answered to the first (resent after the rest ran) would break
  const ordered = scripts.length > 1 && crossesScripts(ids, placed);
  const collided = (o: Outcome, i: number) => {
    if (placed[i]!.dedup === undefined) return admissionOf(o) === 'duplicate';
    const reply = onceReply(i, o);
    return !(reply instanceof EmqError) && reply.flag === 2;
  };
  const outcomes = await sendMinted(connection, scripts, ids, minted, commandOf, collided, mint, ordered);

  let failed = false;
  const results = ids.map((id, i): AdmitResult | { id: string; error: EmqError } => {
    const { dedup, name, landed } = placed[i]!;
    if (dedup !== undefined) {
      const reply = onceReply(i, outcomes[i]!);
      if (reply instanceof EmqError) {
        failed = true;
        return { id, error: reply };
      }
      // 0: the key's job (its id, maybe not this one); 2: a given id that names a job already
      return reply.flag === 1 ? { id, verdict: landed } : { id: reply.id, verdict: 'duplicate' };
    }
    const verdict = admissionOf(outcomes[i]!, name);
    if (verdict instanceof EmqError) {
      failed = true;
      return { id, error: verdict };
    }
    return { id, verdict: verdict === 'enqueued' ? landed : verdict };
  });
  if (failed) throw new BatchError<AdmitVerdict>(results);
  return results as AdmitResult[];
}

/** Each script's -once twin: the same keys with the dedup key last, and compare and TTL after the id. */
const ONCE = new Map<Script, Script>([
  [enqueueScript, enqueueOnceScript],
  [genqueueScript, genqueueOnceScript],
  [scheduleScript, scheduleOnceScript],
]);

/** Whether some id, or some dedup key, is sent under two scripts (a job scheduled, then the same id flat). */
function crossesScripts(ids: readonly string[], placed: readonly Placed[]): boolean {
  const scriptOf = new Map<string, Script>();
  const crosses = (name: string, script: Script) => {
    const before = scriptOf.get(name);
    if (before === undefined) scriptOf.set(name, script);
    return before !== undefined && before !== script;
  };
  for (let i = 0; i < ids.length; i++) {
    const { script, dedup } = placed[i]!;
    if (crosses(`id ${ids[i]}`, script) || (dedup !== undefined && crosses(`key ${dedup}`, script))) return true;
  }
  return false;
}

/**
 * Sends one call per job (`commandOf(i)` builds job i's from `ids[i]`) as one pipeline, then
 * remints the minted ids another minter had taken (`collided` says which replies mean that)
 * and sends those jobs again, at most MINT_TRIES times in all; an outcome per job, in order.
 * Updates `ids` in place with the ids the jobs were last sent under.
 */
export async function sendMinted(
  connection: Connection,
  scripts: readonly Script[],
  ids: string[],
  minted: readonly boolean[],
  commandOf: (i: number) => ScriptCommand,
  collided: (outcome: Outcome, index: number) => boolean,
  mint: () => string,
  ordered = false,
): Promise<Outcome[]> {
  const outcomes = await dispatch(
    connection,
    scripts,
    ids.map((_, i) => commandOf(i)),
    { ordered },
  );
  // collisions: minted ids another minter had taken get fresh ids, sent again
  for (let tries = 1; ; tries++) {
    const again: number[] = [];
    for (let i = 0; i < outcomes.length; i++) if (minted[i] && collided(outcomes[i]!, i)) again.push(i);
    if (again.length === 0) break;
    if (tries >= MINT_TRIES) {
      again.forEach((i) => (outcomes[i] = { ok: false, error: collisionError(MINT_TRIES).message }));
      break;
    }
    for (const i of again) ids[i] = remint(mint);
    const resent = await dispatch(connection, scripts, again.map(commandOf));
    again.forEach((i, k) => (outcomes[i] = resent[k]!));
  }
  return outcomes;
}

/**
 * Enqueues many jobs of one queue flat (into its pending set) as one pipeline: admitMany of
 * jobs with neither group nor time. A verdict per job in order (`enqueued` or `duplicate`);
 * BatchError if any failed.
 */
export async function enqueueMany(connection: Connection, queue: string, jobs: readonly JobInput[], mint: () => string = mintId): Promise<JobResult[]> {
  return (await admit(connection, queue, jobs, mint, 'flat')) as JobResult[];
}

/** A job for enqueueGroupedMany: its group, and an id or none (one is minted). */
export interface GroupedJobInput extends JobInput {
  group: string;
}

/**
 * Enqueues many grouped jobs of one queue (any mix of groups) into their lanes as one
 * pipeline: admitMany of jobs with a group and no time. As enqueueMany otherwise.
 */
export async function enqueueGroupedMany(
  connection: Connection,
  queue: string,
  jobs: readonly GroupedJobInput[],
  mint: () => string = mintId,
): Promise<JobResult[]> {
  return (await admit(connection, queue, jobs, mint, 'lane')) as JobResult[];
}

/** A job for scheduleMany: its time (and group), and an id or none (one is minted). */
export interface ScheduledJobInput extends JobInput, ScheduleOptions {}

/**
 * Schedules many jobs of one queue as one pipeline, each with its own time (exactly one of
 * `at` and `inMs`) and group: admitMany of scheduled jobs. As enqueueMany otherwise.
 */
export async function scheduleMany(
  connection: Connection,
  queue: string,
  jobs: readonly ScheduledJobInput[],
  mint: () => string = mintId,
): Promise<ScheduleResult[]> {
  return (await admit(connection, queue, jobs, mint, 'scheduled')) as ScheduleResult[];
}
