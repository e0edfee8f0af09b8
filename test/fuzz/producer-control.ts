// The producer fuzz: the control routes (issue 25, docs/api.md "Acting on jobs, lanes and
// queues"): DELETE, PATCH and POST …/promote of one job; GET a queue, POST …/pause and
// …/resume; GET and PUT a lane's settings. Each plan predicts from the model (what the fuzz
// wrote and set): the refusals in the documented order (401, 403 forbidden_action for a token
// whose `can` lacks the route's capability, the queue, the route's own), then the answer
// Valkey's state decides, and whether it writes; every 2xx is checked against Valkey.
import fc from 'fast-check';
import { hostileId, headersOf, validId } from './arbitraries.js';
import { jk, model } from './model.js';
import { ID_RULE, KEY_RULE, checkRow, expectOf, intact, param, trimHttp, violation, type Plan, type Req } from './oracle.js';
import {
  type DelayV,
  type GroupV,
  type TimeV,
  delayArb,
  delayText,
  groupArb,
  groupRule,
  groupText,
  headerBytes,
  placeRule,
  reach,
  timeArb,
  timeValue,
} from './placement.js';
import { WT, admin } from './setup.js';
import { sameJson } from './producer-get.js';
import {
  type AuthV,
  type IdV,
  type JsonDoc,
  type KeyV,
  type Seg,
  NOT_UTF8,
  RAW_JSON,
  authHeader,
  ctlAuthArb,
  docBytes,
  extraHeaderArb,
  idOf,
  isObject,
  keyArb,
  keyOf,
  readJson,
  ctlSegArb,
  answered,
  gated,
  jsonReq,
  refuse,
  type Base,
} from './producer-common.js';

/** A path the URL parser rewrites (a queue `..`), or a parameter left empty: another route (405) or none; any refusal, nothing written. */
const unrouted = (base: Base): Plan => ({ ...base, valkey: undefined, writes: () => false });

// ---------------------------------------------------------------- one job: DELETE, PATCH, POST …/promote

/** A job id: one the model holds (of the queue when it has some; `due`: a scheduled one), else fresh or hostile. */
export type CtlIdV = IdV | { t: 'due' | 'flow'; n: number; alt: string };
export const ctlIdArb: fc.Arbitrary<CtlIdV> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('known' as const), n: fc.nat(), alt: validId }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('due' as const), n: fc.nat(), alt: validId }) },
  // a flow's job, so a short run still meets a DELETE of one (409 job_in_flow)
  { weight: 2, arbitrary: fc.record({ t: fc.constant('flow' as const), n: fc.nat(), alt: validId }) },
  { weight: 1, arbitrary: validId.map((id) => ({ t: 'fresh' as const, id })) },
  { weight: 2, arbitrary: hostileId.map((value) => ({ t: 'raw' as const, value })) },
);
/** The id a case names: a scheduled job of the queue for `due`, a flow's job for `flow` (else any it knows). */
function ctlIdOf(v: CtlIdV, queue: string): string {
  if (v.t !== 'due' && v.t !== 'flow') return idOf(v as IdV, queue);
  const ids =
    v.t === 'due'
      ? [...model.places].filter(([k, p]) => p.due !== undefined && k.startsWith(`${queue} `)).map(([k]) => k.slice(queue.length + 1))
      : [...model.flowRows.keys()].filter((k) => k.startsWith(`${queue} `)).map((k) => k.slice(queue.length + 1));
  return ids.length > 0 ? ids[v.n % ids.length]! : idOf({ t: 'known', n: v.n, alt: v.alt }, queue);
}

/** A new due time's duration: mostly valid, admission's hostile ones, and the ones the brief names. */
const ctlDelayArb: fc.Arbitrary<DelayV> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.nat(3_600), fc.constantFrom('ms', 's', 'm')).map(([n, u]) => ({ t: 'raw' as const, text: `${n}${u}` })) },
  { weight: 2, arbitrary: delayArb },
  { weight: 1, arbitrary: fc.constantFrom('0s', '-1m', '1.5h', '999999999d', '', '١٠s', '1m ', '30d', '31d').map((text) => ({ t: 'raw' as const, text })) },
);
/** A new due time: mostly Unix ms within the next hour or the last, else any of admission's. */
const ctlTimeArb: fc.Arbitrary<TimeV> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -3_600_000, max: 3_600_000 }).map((rel): TimeV => ({ t: 'unix', when: { rel }, zeros: 0, number: false })) },
  { weight: 2, arbitrary: timeArb },
);

export interface JobCtlCase {
  t: 'job-ctl';
  verb: 'delete' | 'patch' | 'promote';
  auth: AuthV;
  queue: Seg;
  id: CtlIdV;
  /** DELETE's Idempotency-Key. */
  key: KeyV | undefined;
  /** PATCH's Emq-Delay and Emq-Not-Before, and which it sends. */
  delay: DelayV;
  notBefore: TimeV;
  sends: 'delay' | 'notBefore' | 'both' | 'neither';
  /** An Emq-Group on a PATCH, which it does not read. */
  group: GroupV | undefined;
  extra: [string, string] | undefined;
}
export const jobCtlArb: fc.Arbitrary<JobCtlCase> = fc.record({
  t: fc.constant('job-ctl' as const),
  verb: fc.constantFrom('delete' as const, 'patch' as const, 'patch' as const, 'promote' as const),
  auth: ctlAuthArb,
  queue: ctlSegArb,
  id: ctlIdArb,
  key: fc.option(keyArb, { nil: undefined, freq: 2 }),
  delay: ctlDelayArb,
  notBefore: ctlTimeArb,
  sends: fc.constantFrom('delay' as const, 'delay' as const, 'notBefore' as const, 'notBefore' as const, 'both' as const, 'neither' as const),
  group: fc.option(groupArb, { nil: undefined, freq: 4 }),
  extra: extraHeaderArb,
});

const METHOD = { delete: 'DELETE', patch: 'PATCH', promote: 'POST' } as const;

export function planJobCtl(c: JobCtlCase): Plan {
  const q0 = param(c.queue.seg);
  const id = ctlIdOf(c.id, q0);
  const idSeg = c.id.t === 'raw' ? encodeURIComponent(id) : id;
  const path = `/v1/queues/${c.queue.seg}/jobs/${idSeg}${c.verb === 'promote' ? '/promote' : ''}`;
  const auth = authHeader(c.auth);
  const sent = Date.now();
  const key = c.verb === 'delete' && c.key !== undefined ? keyOf(c.key) : undefined;
  const delay = c.verb === 'patch' && (c.sends === 'delay' || c.sends === 'both') ? headerBytes(delayText(c.delay)) : undefined;
  const notBefore = c.verb === 'patch' && (c.sends === 'notBefore' || c.sends === 'both') ? headerBytes(String(timeValue(c.notBefore, sent))) : undefined;
  const req: Req = {
    method: METHOD[c.verb],
    path,
    headers: headersOf(
      [
        ['Authorization', auth],
        ['Idempotency-Key', key],
        ['Emq-Delay', delay],
        ['Emq-Not-Before', notBefore],
        ['Emq-Group', c.verb === 'patch' && c.group !== undefined ? headerBytes(groupText(c.group)) : undefined],
      ],
      c.extra,
    ),
  };
  const base: Base = { label: `producer ${METHOD[c.verb]} /v1/queues/:queue/jobs/:id${c.verb === 'promote' ? '/promote' : ''}`, req, service: 'producer' };
  if (!intact(path) || c.queue.seg === '' || idSeg === '') return unrouted(base);
  const g = gated(base, auth, c.queue.seg, 'control');
  if ('plan' in g) return g.plan;
  const { who, q } = g;
  if (!ID_RULE.test(param(idSeg))) return refuse(base, 400, 'invalid_id');
  if (c.verb === 'delete') {
    const k = key === undefined ? undefined : trimHttp(key);
    if (k !== undefined && !KEY_RULE.test(k)) return refuse(base, 400, 'invalid_idempotency_key');
    return planDelete(base, q, id, k === undefined ? undefined : `${who} ${q} ${k}`);
  }
  if (c.verb === 'promote') return planPromote(base, q, id);
  // PATCH: admission's rules for the two headers as the server sees them (fetch trims them); neither is a refusal too
  const seen = (v: string | undefined) => (v === undefined ? undefined : trimHttp(v));
  const placed = placeRule({ delay: seen(delay), notBefore: seen(notBefore) }, sent);
  if ('refused' in placed) {
    reach(`patch 400 ${placed.refused}`);
    return refuse(base, 400, placed.refused);
  }
  if (placed.at === undefined && placed.inMs === undefined) return refuse(base, 400, 'invalid_delay');
  return planPatch(base, q, id, placed, sent);
}

/** DELETE past its gates: the model's job decides; `mk`, the caller's Idempotency-Key as the model files it. */
function planDelete(base: Base, q: string, id: string, mk: string | undefined): Plan {
  // the wrong-type queue's pending key is a string: the remove's type gate refuses any id there
  if (q === WT) return refuse(base, 409, 'conflict', true);
  // no flow's job is done here (nothing completes): a held parent and its children are refused
  if (model.flowRows.has(jk(q, id))) {
    reach('delete 409 job_in_flow');
    return refuse(base, 409, 'job_in_flow', true);
  }
  if (!model.jobs.has(jk(q, id))) return refuse(base, 404, 'not_found', true);
  const place = model.placeOf(q, id);
  const state = place.due === undefined ? 'pending' : 'scheduled';
  const freed = mk !== undefined && model.idem.get(mk)?.id === id;
  return answered(base, 200, true, async (ans) => {
    if (!sameJson(ans.json, { id, queue: q, verdict: 'removed', state })) violation(base, ans, `expected {id, queue, verdict: removed, state: ${state}}`);
    const key = (suffix: string) => `emq:{${q}}:${suffix}`;
    const left = await Promise.all([
      admin.call('EXISTS', key(`job:${id}`)),
      admin.text('ZSCORE', key('pending'), id),
      admin.text('ZSCORE', key('schedule'), id),
      place.group === undefined ? null : admin.text('ZSCORE', key(`g:${place.group}:pending`), id),
    ]);
    if (Number(left[0]) !== 0 || left.slice(1).some((s) => s != null)) violation(base, ans, `${id} is still in ${q}: ${JSON.stringify(left)}`);
    model.removeJob(q, id);
    if (freed) model.idem.delete(mk!);
    // a lane emptied leaves the ring
    if (place.group !== undefined && place.due === undefined && model.lanePending(q, place.group) === 0) {
      if ((await admin.text('LPOS', key('ring'), place.group)) != null) violation(base, ans, `the emptied lane ${place.group} is still on ${q}'s ring`);
      reach('delete 200 the lane emptied');
    }
    reach(`delete 200 ${state}${place.group === undefined ? '' : ', laned'}${freed ? ', its key freed' : ''}`);
  });
}

function planPromote(base: Base, q: string, id: string): Plan {
  if (q === WT) return refuse(base, 409, 'conflict', true);
  if (model.flowRows.has(jk(q, id))) return refuse(base, 409, 'not_scheduled', true);
  if (!model.jobs.has(jk(q, id))) return refuse(base, 404, 'not_found', true);
  const place = model.placeOf(q, id);
  if (place.due === undefined) {
    reach('promote 409 not_scheduled');
    return refuse(base, 409, 'not_scheduled', true);
  }
  return answered(base, 200, true, async (ans) => {
    if (!sameJson(ans.json, { id, queue: q, verdict: 'promoted' })) violation(base, ans, 'expected {id, queue, verdict: promoted}');
    // due now: in its lane (on the ring unless paused) or in pending, at score 0; the row pending
    const now = { group: place.group };
    model.places.set(jk(q, id), now);
    await checkRow(base, ans, q, id, model.jobs.get(jk(q, id))!, expectOf(now));
    reach(
      `promote 200${place.group === undefined ? '' : ', laned'}${place.group !== undefined && model.laneOf(q, place.group).paused ? ', its lane paused' : ''}`,
    );
  });
}

function planPatch(base: Base, q: string, id: string, placed: { at?: number | undefined; inMs?: number | undefined }, sent: number): Plan {
  if (!model.exists(q, id)) return refuse(base, 404, 'not_found', true);
  const place = model.placeOf(q, id);
  if (model.flowRows.has(jk(q, id)) || place.due === undefined) {
    reach('patch 409 not_scheduled');
    return refuse(base, 409, 'not_scheduled', true);
  }
  // ZADD XX of the score it has writes nothing
  const writes = placed.at === undefined ? 'maybe' : placed.at !== place.due;
  return answered(base, 200, writes, async (ans) => {
    const done = Date.now();
    const runAt = (ans.json as { runAt?: unknown } | undefined)?.runAt;
    if (typeof runAt !== 'number' || !sameJson(ans.json, { id, queue: q, verdict: 'rescheduled', runAt }))
      violation(base, ans, 'expected {id, queue, verdict: rescheduled, runAt}');
    // Emq-Not-Before exactly; Emq-Delay from Valkey's clock while the request ran
    const [lo, hi] = placed.at !== undefined ? [placed.at, placed.at] : [sent + placed.inMs! - 2, done + placed.inMs! + 2];
    if (runAt < lo || runAt > hi) violation(base, ans, `runAt ${runAt} is not in [${lo}, ${hi}]`);
    const now = { group: place.group, due: runAt };
    model.places.set(jk(q, id), now);
    await checkRow(base, ans, q, id, model.jobs.get(jk(q, id))!, expectOf(now));
    reach(`patch 200 rescheduled ${placed.at === undefined ? 'in' : 'at'}`);
  });
}

// ---------------------------------------------------------------- a queue: GET, POST …/pause, …/resume

/** A page's count: mostly 1 to 1000, else out of range or not plain decimal. */
export const countArb = fc.oneof(
  { weight: 3, arbitrary: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 1000 })).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('1000', '1001', '0', 'abc', '', '01', '1e3', '-1', ' 5', '١', '10000', '1.0', '0x10', '+5') },
);
/** A query value: sent encoded (the app decodes it), or absent. */
const queryOf = (pairs: Array<[string, string | undefined]>) => {
  const q = pairs.filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v!)}`);
  return q.length === 0 ? '' : `?${q.join('&')}`;
};
/** A page's count as the routes take it: 1 to 1000 in plain decimal; absent: the default. */
const countRule = (v: string | undefined, dflt: number) => (v === undefined ? dflt : /^[1-9][0-9]{0,3}$/.test(v) && Number(v) <= 1000 ? Number(v) : undefined);

export interface QueueCtlCase {
  t: 'queue-ctl';
  verb: 'get' | 'pause' | 'resume';
  auth: AuthV;
  queue: Seg;
  count: string | undefined;
  cursor: GroupV | undefined;
  extra: [string, string] | undefined;
}
export const queueCtlArb: fc.Arbitrary<QueueCtlCase> = fc.record({
  t: fc.constant('queue-ctl' as const),
  verb: fc.constantFrom('get' as const, 'get' as const, 'pause' as const, 'resume' as const),
  auth: ctlAuthArb,
  queue: ctlSegArb,
  count: fc.option(countArb, { nil: undefined, freq: 2 }),
  cursor: fc.option(groupArb, { nil: undefined, freq: 3 }),
  extra: extraHeaderArb,
});

/** A lane as GET …/groups/:group shows it, from the model: nothing claims here, so active is 0 and a lane with jobs is ringed unless paused. */
function laneView(q: string, group: string) {
  const set = model.laneOf(q, group);
  const pending = model.lanePending(q, group);
  return {
    group,
    pending,
    active: 0,
    ...(set.limit === undefined ? {} : { limit: set.limit }),
    ...(set.weight === undefined ? {} : { weight: set.weight }),
    paused: set.paused,
    ringed: pending > 0 && !set.paused,
  };
}

/** The queue as GET /v1/queues/:queue shows it, from the model: counts and a page of the groups the wire names. */
function queueView(q: string, count: number, cursor: string | undefined) {
  let [pending, scheduled] = [0, 0];
  const named = new Set<string>();
  for (const [k, p] of model.places) {
    if (!k.startsWith(`${q} `)) continue;
    if (p.due !== undefined) scheduled++;
    else if (p.group === undefined) pending++;
  }
  for (const [k, row] of model.flowRows) if (k.startsWith(`${q} `) && row.kind === 'child') pending++;
  for (const [k, p] of model.places)
    if (k.startsWith(`${q} `) && p.group !== undefined && p.due === undefined && !model.laneOf(q, p.group).paused) named.add(p.group);
  // a pause, a limit or a weight names a group whatever its lane holds
  for (const [k, set] of model.lanes)
    if (k.startsWith(`${q} `) && (set.paused || set.limit !== undefined || set.weight !== undefined)) named.add(k.slice(q.length + 1));
  const sorted = [...named].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).filter((g) => cursor === undefined || g > cursor);
  const page = sorted.slice(0, count);
  return {
    queue: q,
    paused: model.pausedQueues.has(q),
    counts: { pending, active: 0, scheduled, dead: 0, completed: 0, failed: 0 },
    groups: page.map((g) => laneView(q, g)),
    ...(sorted.length > count ? { cursor: page[page.length - 1] } : {}),
  };
}

export function planQueueCtl(c: QueueCtlCase): Plan {
  const cursor = c.cursor === undefined ? undefined : groupText(c.cursor);
  const tail =
    c.verb === 'get'
      ? queryOf([
          ['count', c.count],
          ['cursor', cursor],
        ])
      : `/${c.verb}`;
  const path = `/v1/queues/${c.queue.seg}${tail}`;
  const auth = authHeader(c.auth);
  const req = jsonReq(c.verb === 'get' ? 'GET' : 'POST', path, auth, c.extra);
  const base: Base = { label: `producer ${req.method} /v1/queues/:queue${c.verb === 'get' ? '' : `/${c.verb}`}`, req, service: 'producer' };
  if (!intact(path) || c.queue.seg === '') return unrouted(base);
  const g = gated(base, auth, c.queue.seg, c.verb === 'get' ? 'read' : 'control');
  if ('plan' in g) return g.plan;
  const { q } = g;
  if (c.verb !== 'get') {
    const was = model.pausedQueues.has(q);
    const paused = c.verb === 'pause';
    return {
      ...base,
      status: 200,
      valkey: true,
      // HSET writes the same '1' again; HDEL of a field not there writes nothing
      writes: () => paused || was,
      async check(ans) {
        const j = ans.json as Record<string, unknown>;
        const want = paused ? { queue: q, paused, note: j?.note } : { queue: q, paused };
        if (!sameJson(j, want) || (paused && typeof j.note !== 'string')) violation(base, ans, `expected {queue, paused: ${paused}${paused ? ', note' : ''}}`);
        if (paused) model.pausedQueues.add(q);
        else model.pausedQueues.delete(q);
        reach(`queue 200 ${c.verb}${paused === was ? ' again' : ''}`);
      },
    };
  }
  const count = countRule(c.count, 100);
  if (count === undefined) {
    reach('queue 400 invalid_query');
    return refuse(base, 400, 'invalid_query');
  }
  if (cursor !== undefined && !groupRule(cursor)) {
    reach('queue 400 invalid_group (cursor)');
    return refuse(base, 400, 'invalid_group');
  }
  // the read's type gate: the wrong-type queue's pending key is a string
  if (q === WT) return refuse(base, 409, 'conflict', true);
  return answered(base, 200, false, async (ans) => {
    const want = queueView(q, count, cursor);
    if (!sameJson(ans.json, want)) violation(base, ans, `expected ${JSON.stringify(want).slice(0, 800)}`);
    reach(`queue 200 read${want.groups.length > 0 ? ', with groups' : ''}${want.cursor === undefined ? '' : ', a page of more'}`);
  });
}

// ---------------------------------------------------------------- a lane: GET and PUT …/groups/:group

/** A setting's value as JSON text: whole numbers in and out of 1 to 2^31 - 1, other literals of numbers, other types. */
const settingValue = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 50 }).map(String) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '2147483647',
      '2147483648',
      '0',
      '-1',
      '-0',
      '1.5',
      '1e3',
      '1E2',
      '1.0',
      '5.000',
      '1e309',
      '-1e309',
      '9007199254740993',
      '4294967297',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('"5"', 'null', 'true', 'false', '[]', '{}', '[1]', '"1e3"') },
);
const pausedValue = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('true', 'false') },
  { weight: 1, arbitrary: fc.constantFrom('"true"', '1', '0', 'null', '[]') },
);
const settingField: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom('limit', 'weight'), settingValue) },
  { weight: 3, arbitrary: fc.tuple(fc.constant('paused'), pausedValue) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Limit', 'limits', '__proto__', 'group', 'pending', 'paused ', 'constructor', ''), settingValue) },
);
export const settingsArb: fc.Arbitrary<JsonDoc> = fc.oneof(
  { weight: 8, arbitrary: fc.array(settingField, { minLength: 1, maxLength: 4 }).map((fields) => ({ t: 'fields' as const, fields })) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_JSON).map((text) => ({ t: 'raw' as const, text })) },
  { weight: 1, arbitrary: fc.constantFrom(...NOT_UTF8).map((bytes) => ({ t: 'bytes' as const, bytes })) },
  // at the body's cap (1,024 bytes) and just past it: spaces inside a valid object
  { weight: 1, arbitrary: fc.constantFrom(1024, 1025).map((n) => ({ t: 'raw' as const, text: `{"limit":7${' '.repeat(n - 11)}}` })) },
);

/** A lane's change as the docs give it: {limit?, weight?, paused?}, at least one, nothing else; limit and weight whole, 1 to 2^31 - 1. */
function changeRule(body: Uint8Array): { limit?: number; weight?: number; paused?: boolean } | { refused: 400 | 413 } {
  if (body.length > 1_024) return { refused: 413 };
  const v = readJson(body)?.value;
  if (!isObject(v)) return { refused: 400 };
  const out: { limit?: number; weight?: number; paused?: boolean } = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'limit' || k === 'weight') {
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 1 || x > 2 ** 31 - 1) return { refused: 400 };
      out[k] = x;
    } else if (k === 'paused' && typeof x === 'boolean') out.paused = x;
    else return { refused: 400 };
  }
  return Object.keys(out).length === 0 ? { refused: 400 } : out;
}

export interface GroupCtlCase {
  t: 'group-ctl';
  verb: 'get' | 'put';
  auth: AuthV;
  queue: Seg;
  group: GroupV | { t: 'seg'; seg: string };
  body: JsonDoc;
  extra: [string, string] | undefined;
}
export const groupCtlArb: fc.Arbitrary<GroupCtlCase> = fc.record({
  t: fc.constant('group-ctl' as const),
  verb: fc.constantFrom('get' as const, 'put' as const, 'put' as const),
  auth: ctlAuthArb,
  queue: ctlSegArb,
  group: fc.oneof(
    { weight: 8, arbitrary: groupArb },
    { weight: 1, arbitrary: fc.constantFrom('%', '%ZZ', '%2F', 'PRT0KHTOWnGLuC%00', '').map((seg) => ({ t: 'seg' as const, seg })) },
  ),
  body: settingsArb,
  extra: extraHeaderArb,
});

export function planGroupCtl(c: GroupCtlCase): Plan {
  const gseg = c.group.t === 'seg' ? c.group.seg : encodeURIComponent(groupText(c.group));
  const path = `/v1/queues/${c.queue.seg}/groups/${gseg}`;
  const auth = authHeader(c.auth);
  const body = docBytes(c.body);
  const req = jsonReq(c.verb === 'get' ? 'GET' : 'PUT', path, auth, c.extra, c.verb === 'put' ? body : undefined);
  const base: Base = { label: `producer ${req.method} /v1/queues/:queue/groups/:group`, req, service: 'producer' };
  if (!intact(path) || c.queue.seg === '' || gseg === '') return unrouted(base);
  const g = gated(base, auth, c.queue.seg, c.verb === 'get' ? 'read' : 'control');
  if ('plan' in g) return g.plan;
  const { q } = g;
  const group = param(gseg);
  if (!groupRule(group)) {
    reach(`group 400 invalid_group (${c.verb})`);
    return refuse(base, 400, 'invalid_group');
  }
  if (c.verb === 'get') {
    return answered(base, 200, false, async (ans) => {
      const want = laneView(q, group);
      if (!sameJson(ans.json, want)) violation(base, ans, `expected ${JSON.stringify(want)}`);
      reach(`group 200 read${want.pending > 0 ? ', a lane with jobs' : ''}`);
    });
  }
  const change = changeRule(body);
  if ('refused' in change) {
    reach(`group ${change.refused} ${change.refused === 400 ? 'invalid_body' : 'payload_too_large'}`);
    return refuse(base, change.refused, change.refused === 400 ? 'invalid_body' : 'payload_too_large');
  }
  const was = model.laneOf(q, group);
  // HSET writes always; SADD and SREM only when they change the set
  const writes =
    change.limit !== undefined || change.weight !== undefined || (change.paused === true && !was.paused) || (change.paused === false && was.paused);
  return answered(base, 200, writes, async (ans) => {
    model.lanes.set(jk(q, group), {
      limit: change.limit ?? was.limit,
      weight: change.weight ?? was.weight,
      paused: change.paused ?? was.paused,
    });
    const want = laneView(q, group);
    if (!sameJson(ans.json, want)) violation(base, ans, `expected ${JSON.stringify(want)}`);
    const ringed = (await admin.text('LPOS', `emq:{${q}}:ring`, group)) != null;
    if (ringed !== want.ringed) violation(base, ans, `the ring ${ringed ? 'holds' : 'lacks'} ${group}`);
    reach(`group 200 set${change.paused === undefined ? '' : change.paused ? ', paused' : ', resumed'}${want.pending > 0 ? ', a lane with jobs' : ''}`);
  });
}
