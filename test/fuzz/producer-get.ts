// The producer fuzz: GET /v1/queues/:queue/jobs/:id, its cases and its plan: the detail
// (group, runAt, parent, parentQueue) as the model knows the job.
import fc from 'fast-check';
import { headersOf } from './arbitraries.js';
import { jk, model } from './model.js';
import { ID_RULE, intact, param, violation, type Plan, type Req } from './oracle.js';
import { reach } from './placement.js';
import { WT } from './setup.js';
import { type AuthV, type IdV, type Seg, authArb, authHeader, extraHeaderArb, gates, idArb, idOf, segArb } from './producer-common.js';

// ---------------------------------------------------------------- producer: GET /v1/queues/:queue/jobs/:id

export interface GetCase {
  t: 'get';
  auth: AuthV;
  queue: Seg;
  id: IdV;
  head: boolean;
  extra: [string, string] | undefined;
}
export const getArb: fc.Arbitrary<GetCase> = fc.record({
  t: fc.constant('get' as const),
  auth: authArb,
  queue: segArb,
  id: idArb,
  head: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  extra: extraHeaderArb,
});

export function planGet(c: GetCase): Plan {
  const q0 = param(c.queue.seg);
  const id = idOf(c.id, q0);
  const idSeg = c.id.t === 'raw' ? encodeURIComponent(id) : id;
  const path = `/v1/queues/${c.queue.seg}/jobs/${idSeg}`;
  const auth = authHeader(c.auth);
  const req: Req = { method: c.head ? 'HEAD' : 'GET', path, headers: headersOf([['Authorization', auth]], c.extra) };
  const base = { label: 'producer GET /v1/queues/:queue/jobs/:id', req, service: 'producer' as const, writes: () => false };
  if (!intact(path) || c.queue.seg === '' || idSeg === '') return { ...base, valkey: undefined };
  const g = gates(auth, c.queue.seg, 'read');
  if ('status' in g) return { ...base, status: g.status, code: c.head ? undefined : g.code, valkey: false };
  if (!ID_RULE.test(param(idSeg))) return { ...base, status: 400, code: c.head ? undefined : 'invalid_id', valkey: false };
  // the wrong-type queue's pending key is a string: the state read refuses it (WRONGTYPE → 409)
  if (g.q === WT) return { ...base, status: 409, code: c.head ? undefined : 'conflict', valkey: true };
  const known = model.exists(g.q, id);
  if (!known) return { ...base, status: 404, code: c.head ? undefined : 'not_found', valkey: true };
  // a flow's job: a child pending (its parent, and the parent's queue when another), a parent awaiting its children
  const flowRow = model.flowRows.get(jk(g.q, id));
  if (flowRow) {
    const state = flowRow.kind === 'parent' ? 'awaiting_children' : 'pending';
    const want =
      flowRow.kind === 'parent'
        ? { id, queue: g.q, state, attempts: 0 }
        : { id, queue: g.q, state, attempts: 0, parent: flowRow.parent, ...(flowRow.parentQueue === undefined ? {} : { parentQueue: flowRow.parentQueue }) };
    return {
      ...base,
      status: 200,
      valkey: true,
      async check(ans) {
        if (c.head) return;
        if (!sameJson(ans.json, want)) violation(base, ans, `expected ${JSON.stringify(want)}`);
        reach(`get 200 a flow ${flowRow.kind}`);
      },
    };
  }
  // the state by the set that holds the id; a job waiting in its lane (in none of the sets)
  // reads pending by its row: state pending and a group; its detail: the group, the due time
  const place = model.placeOf(g.q, id);
  if (place.due === undefined && place.group !== undefined) reach('get 200 a job in a lane');
  const state = place.due === undefined ? 'pending' : 'scheduled';
  const want = {
    id,
    queue: g.q,
    state,
    attempts: 0,
    ...(place.group === undefined ? {} : { group: place.group }),
    ...(place.due === undefined ? {} : { runAt: place.due }),
  };
  return {
    ...base,
    status: 200,
    valkey: true,
    async check(ans) {
      if (c.head) return;
      if (!sameJson(ans.json, want)) violation(base, ans, `expected ${JSON.stringify(want)}`);
      if (state === 'scheduled') reach('get 200 scheduled');
    },
  };
}

/** A JSON value as text with every object's keys sorted: equal texts, the same value. */
const canon = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canon).join(',')}]`
    : typeof v === 'object' && v !== null
      ? `{${Object.keys(v)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);
/** The same JSON value, object keys in any order. */
export const sameJson = (got: unknown, want: unknown): boolean => canon(got) === canon(want);
