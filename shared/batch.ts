// admitMany: a batch of one queue's jobs, each placed by its own options (flat, into a lane,
// or scheduled), sent as one pipeline whatever the mix. enqueueMany, enqueueGroupedMany and
// scheduleMany are admitMany of one kind of job.
import type { Connection, Outcome, ScriptCommand } from './connection.js';
import { dispatch, evalsha } from './dispatch.js';
import { EmqError } from './errors.js';
import { BatchError, MINT_TRIES, admissionOf, checkPayload, collisionError, type JobInput, type JobResult } from './enqueue.js';
import { mintId, remint } from './ids.js';
import { enqueueKeys, genqueueKeys, scheduleKeys, validateGroup } from './keyspace.js';
import { scheduleArgs, type ScheduleOptions, type ScheduleResult } from './schedule.js';
import { enqueueScript, genqueueScript, scheduleScript, type Script } from './scripts.js';

export type AdmitVerdict = 'enqueued' | 'scheduled' | 'duplicate';

/**
 * A job for admitMany. With `at` or `inMs` it is scheduled (@schedule; with `group`, it joins
 * that lane when due); else with `group` it joins that lane now (@genqueue); else it goes flat
 * into the queue's pending set (@enqueue). Without an id, one is minted.
 */
export interface AdmitInput extends JobInput, ScheduleOptions {}

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
  const placed = jobs.map((job, index): Placed => {
    try {
      const id = job.id ?? mint();
      ids.push(id);
      const kind = only ?? (job.at !== undefined || job.inMs !== undefined ? 'scheduled' : job.group !== undefined ? 'lane' : 'flat');
      if (kind === 'scheduled') {
        const keys = later(id);
        const [mode, value] = scheduleArgs(job);
        if (job.group !== undefined) validateGroup(job.group);
        checkPayload(job.payload);
        const args = job.group === undefined ? [id, mode, value, job.payload] : [id, mode, value, job.group, job.payload];
        return { script: scheduleScript, name: '@schedule', landed: 'scheduled', keys: later, call: evalsha(scheduleScript, keys, args) };
      }
      const { group } = job;
      if (kind === 'lane') {
        const keys = lane(id, group as string);
        checkPayload(job.payload);
        const call = evalsha(genqueueScript, keys, [id, group as string, job.payload]);
        return { script: genqueueScript, name: '@genqueue', landed: 'enqueued', keys: (id) => lane(id, group as string), call };
      }
      const keys = flat(id);
      checkPayload(job.payload);
      return { script: enqueueScript, name: '@enqueue', landed: 'enqueued', keys: flat, call: evalsha(enqueueScript, keys, [id, job.payload]) };
    } catch (err) {
      if (err instanceof Error) err.message = `job ${index}: ${err.message}`;
      throw err;
    }
  });
  if (jobs.length === 0) return [];

  const scripts = [...new Set(placed.map((p) => p.script))];
  const minted = jobs.map((job) => job.id === undefined);
  const commandOf = (i: number) => {
    const { call, script, keys } = placed[i]!;
    const id = ids[i]!;
    // a reminted id: its keys are built (and checked) for it, the arguments after the id kept
    return id === call.args[0] ? call : evalsha(script, keys(id), [id, ...call.args.slice(1)]);
  };
  // one id under two scripts: their calls must run in the batch's order, which a NOSCRIPT
  // answered to the first (resent after the rest ran) would break
  const ordered = scripts.length > 1 && crossesScripts(ids, placed);
  const outcomes = await sendMinted(connection, scripts, ids, minted, commandOf, (o) => admissionOf(o) === 'duplicate', mint, ordered);

  let failed = false;
  const results = ids.map((id, i): AdmitResult | { id: string; error: EmqError } => {
    const verdict = admissionOf(outcomes[i]!, placed[i]!.name);
    if (verdict instanceof EmqError) {
      failed = true;
      return { id, error: verdict };
    }
    return { id, verdict: verdict === 'enqueued' ? placed[i]!.landed : verdict };
  });
  if (failed) throw new BatchError<AdmitVerdict>(results);
  return results as AdmitResult[];
}

/** Whether some id is sent under two scripts (a job scheduled, then the same id flat). */
function crossesScripts(ids: readonly string[], placed: readonly Placed[]): boolean {
  const scriptOf = new Map<string, Script>();
  for (let i = 0; i < ids.length; i++) {
    const before = scriptOf.get(ids[i]!);
    if (before === undefined) scriptOf.set(ids[i]!, placed[i]!.script);
    else if (before !== placed[i]!.script) return true;
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
  collided: (outcome: Outcome) => boolean,
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
    for (let i = 0; i < outcomes.length; i++) if (minted[i] && collided(outcomes[i]!)) again.push(i);
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
