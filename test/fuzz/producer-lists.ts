// The producer fuzz: the listings (issue 28), GET /v1/queues and GET /v1/queues/:queue/jobs, with
// hostile query values. Each plan predicts from the documented rules alone (docs/api.md
// "Listing queues and jobs"): the gates (401, 403 forbidden_action without read, the queue's),
// then 400 invalid_query for any value outside its rule, else 200 (409 where the wrong-type
// queue's pending set is read). Nothing is ever written; every 200 is held to Valkey: each
// listed job in the set its state names, in the listing's order; each listed queue one the
// token may use, sorted, once.
import fc from 'fast-check';
import { headersOf, validId } from './arbitraries.js';
import { QUEUE_RULE, intact, violation, type Plan, type Req } from './oracle.js';
import { reach } from './placement.js';
import { WT, admin } from './setup.js';
import { type AuthV, type Seg, allows, authArb, authHeader, gates, segArb } from './producer-common.js';

export interface ListCase {
  t: 'list';
  auth: AuthV;
  /** GET /v1/queues, or GET /v1/queues/:queue/jobs. */
  jobs: boolean;
  queue: Seg;
  query: Array<[string, string]>;
}

const GROUP = 'PRT0KHTOWnGLuC';
const junk = fc.constantFrom('', ' ', 'x', '-1', '1e2', '0x10', '%', '١', 'ﬀ', '\u0000', 'a'.repeat(300));
const valueArb = (name: string): fc.Arbitrary<string> => {
  switch (name) {
    case 'state':
      return fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom('pending', 'scheduled', 'dead') },
        { weight: 1, arbitrary: fc.constantFrom('active', 'PENDING', 'dead ') },
        junk,
      );
    case 'limit':
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) }, fc.constantFrom('0', '101', '050', '100.0'), junk);
    case 'count':
      return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5000 }).map(String) }, fc.constantFrom('0', '5001', '01', '99999'), junk);
    case 'group':
      return fc.oneof({ weight: 3, arbitrary: fc.constant(GROUP) }, fc.constantFrom('lane-a', 'prt0KHTOWnGLuC'), junk);
    default:
      // a cursor: an id, a score and an id, a SCAN cursor (a cluster's form too), or junk
      return fc.oneof(
        validId,
        validId.map((id) => `1700000000000:${id}`),
        fc.bigInt({ min: 0n, max: 2n ** 65n }).map(String),
        fc.constantFrom('0', '5461:0', '16384:0', '00', `0:${'1'.repeat(20)}`),
        junk,
      );
  }
};
const queryArb = (names: readonly string[]) =>
  fc.array(
    fc.constantFrom(...names).chain((name) => valueArb(name).map((v): [string, string] => [name, v])),
    { maxLength: 4 },
  );

export const listArb: fc.Arbitrary<ListCase> = fc.boolean().chain((jobs) =>
  fc.record({
    t: fc.constant('list' as const),
    auth: authArb,
    jobs: fc.constant(jobs),
    queue: segArb,
    query: queryArb(jobs ? ['state', 'limit', 'cursor', 'group'] : ['cursor', 'count']),
  }),
);

const U64 = 2n ** 64n - 1n;
const JOB_ID = /^[A-Z]{3}[0-9A-Za-z]{11}$/;
const branded = (s: string) => JOB_ID.test(s) && s.slice(3) <= 'AzL8n0Y58m7';

/** Whether the query keeps the documented rules (the first value of each name counts, as the route reads it). */
function queryValid(jobs: boolean, first: Map<string, string>): boolean {
  if (!jobs) {
    const count = first.get('count');
    if (count !== undefined && !(/^[1-9][0-9]{0,3}$/.test(count) && Number(count) <= 5000)) return false;
    const cursor = first.get('cursor');
    // a single server's walk: a cluster's cursor (slot:cursor) is refused too
    return cursor === undefined || (/^(0|[1-9][0-9]{0,19})$/.test(cursor) && BigInt(cursor) <= U64);
  }
  const state = first.get('state') ?? 'pending';
  if (!['pending', 'scheduled', 'dead'].includes(state)) return false;
  const limit = first.get('limit');
  if (limit !== undefined && !(/^[1-9][0-9]{0,2}$/.test(limit) && Number(limit) <= 100)) return false;
  const group = first.get('group');
  if (group !== undefined && (state !== 'pending' || !branded(group))) return false;
  const cursor = first.get('cursor');
  if (cursor === undefined) return true;
  if (state === 'pending') return branded(cursor);
  const m = /^(0|[1-9][0-9]{0,14}):(.{14})$/.exec(cursor);
  return m !== null && branded(m[2]!);
}

export function planList(c: ListCase): Plan {
  const search = new URLSearchParams(c.query).toString();
  const path = `/v1/queues${c.jobs ? `/${c.queue.seg}/jobs` : ''}${search ? `?${search}` : ''}`;
  const auth = authHeader(c.auth);
  const req: Req = { method: 'GET', path, headers: headersOf([['Authorization', auth]], undefined) };
  const label = c.jobs ? 'producer GET /v1/queues/:queue/jobs' : 'producer GET /v1/queues';
  const base = { label, req, service: 'producer' as const, writes: () => false as const };
  // a queue segment the URL parser rewrites, or none: another route or none (any refusal, nothing written)
  if (c.jobs && (!intact(path) || c.queue.seg === '')) return { ...base, valkey: undefined };
  // the gates: the queues route names no queue, so a queue allowed to every token stands in
  const g = gates(auth, c.jobs ? c.queue.seg : 'fz-b', 'read');
  if ('status' in g) return { ...base, status: g.status, code: g.code, valkey: false };
  const first = new Map<string, string>();
  for (const [name, value] of c.query) if (!first.has(name)) first.set(name, value);
  if (!queryValid(c.jobs, first)) {
    reach(`list 400 ${c.jobs ? 'jobs' : 'queues'}`);
    return { ...base, status: 400, code: 'invalid_query', valkey: false };
  }
  const state = first.get('state') ?? 'pending';
  const group = first.get('group');
  if (c.jobs && g.q === WT && state === 'pending' && group === undefined) return { ...base, status: 409, code: 'conflict', valkey: true };
  const plan = { ...base, status: 200, valkey: true };
  if (!c.jobs) {
    return {
      ...plan,
      async check(ans) {
        const { queues, cursor } = ans.json as { queues: Array<{ name: string; counts: Record<string, number>; paused: boolean }>; cursor: unknown };
        if (!(cursor === null || typeof cursor === 'string')) violation(plan, ans, 'cursor is neither null nor a string');
        const names = queues.map((q) => q.name);
        if (names.join('\n') !== [...new Set(names)].sort().join('\n')) violation(plan, ans, 'names not sorted, or twice on one page');
        for (const q of queues) {
          if (!QUEUE_RULE.test(q.name) || !allows(g.who, q.name)) violation(plan, ans, `a queue ${q.name} this token may not see`);
          if (Object.keys(q.counts).sort().join() !== 'active,completed,dead,failed,pending,scheduled') violation(plan, ans, 'counts has other fields');
        }
        reach(`list 200 queues${queues.length > 0 ? '' : ' (an empty page)'}`);
      },
    };
  }
  const q = g.q;
  const set = group !== undefined ? `emq:{${q}}:g:${group}:pending` : `emq:{${q}}:${state === 'scheduled' ? 'schedule' : state}`;
  return {
    ...plan,
    async check(ans) {
      const { jobs, cursor } = ans.json as { jobs: Array<{ id: string; state: string; runAt?: number }>; cursor: unknown };
      const limit = Number(first.get('limit') ?? 50);
      if (!(cursor === null || typeof cursor === 'string') || jobs.length > limit) violation(plan, ans, 'a page over its limit, or a cursor of no type');
      if (cursor !== null && jobs.length !== limit) violation(plan, ans, 'a cursor after a page that is not full');
      for (const [i, job] of jobs.entries()) {
        if (job.state !== state) violation(plan, ans, `a ${job.state} job in a ${state} listing`);
        if ((await admin.text('ZSCORE', set, job.id)) === null) violation(plan, ans, `${job.id} is not in ${set}`);
        const before = jobs[i - 1];
        if (before === undefined) continue;
        const ordered =
          state === 'scheduled'
            ? (before.runAt ?? 0) < (job.runAt ?? 0) || ((before.runAt ?? 0) === (job.runAt ?? 0) && before.id < job.id)
            : before.id > job.id;
        if (!ordered) violation(plan, ans, `${before.id} then ${job.id}: not the ${state} order`);
      }
      reach(`list 200 jobs ${state}${group !== undefined ? ' (a lane)' : ''}`);
    },
  };
}
