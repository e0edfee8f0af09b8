// The producer fuzz: POST /v1/queues/:queue/jobs, its cases and its plan.
import fc from 'fast-check';
import { bodyArb, bytesOf, headersOf, type Body } from './arbitraries.js';
import { jk, model, sha256 } from './model.js';
import { ID_RULE, KEY_RULE, checkRow, expectOf, intact, param, trimHttp, violation, type Plan, type Req } from './oracle.js';
import { headerBytes, landing, laneOf, placeArb, placeRule, placeValues, reach, type Placed, type PlaceV } from './placement.js';
import { MAX_PAYLOAD, WT, type Who } from './setup.js';
import {
  type AuthV,
  type IdV,
  type KeyV,
  type Seg,
  authArb,
  authHeader,
  checkKnown,
  contentTypeArb,
  extraHeaderArb,
  gates,
  idArb,
  idOf,
  keyArb,
  keyOf,
  segArb,
} from './producer-common.js';

// ---------------------------------------------------------------- producer: POST /v1/queues/:queue/jobs

export interface JobsCase {
  t: 'jobs';
  auth: AuthV;
  queue: Seg;
  id: IdV | undefined;
  key: KeyV | undefined;
  contentType: string | undefined;
  body: Body;
  extra: [string, string] | undefined;
  /** Emq-Group, Emq-Delay, Emq-Not-Before (./placement.ts). */
  place: PlaceV;
}
export const jobsArb: fc.Arbitrary<JobsCase> = fc.record({
  t: fc.constant('jobs' as const),
  auth: authArb,
  queue: segArb,
  id: fc.option(idArb, { nil: undefined, freq: 2 }),
  key: fc.option(keyArb, { nil: undefined, freq: 2 }),
  contentType: contentTypeArb,
  body: bodyArb(MAX_PAYLOAD),
  extra: extraHeaderArb,
  place: fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: placeArb }),
});

export function planJobs(c: JobsCase): Plan {
  const path = `/v1/queues/${c.queue.seg}/jobs`;
  const auth = authHeader(c.auth);
  const q0 = param(c.queue.seg);
  const given = c.id === undefined ? undefined : idOf(c.id, q0);
  const key = c.key === undefined ? undefined : keyOf(c.key);
  const body = bytesOf(c.body);
  const sent = Date.now();
  const pv = placeValues(c.place, sent);
  const sendable = (v: string | number | undefined) => (v === undefined ? undefined : headerBytes(String(v)));
  const req: Req = {
    method: 'POST',
    path,
    headers: headersOf(
      [
        ['Authorization', auth],
        ['Emq-Job-Id', given],
        ['Idempotency-Key', key],
        ['Content-Type', c.contentType],
        ['Emq-Group', sendable(pv.group)],
        ['Emq-Delay', sendable(pv.delay)],
        ['Emq-Not-Before', sendable(pv.notBefore)],
      ],
      c.extra,
    ),
    body,
  };
  const base = { label: 'producer POST /v1/queues/:queue/jobs', req, service: 'producer' as const };
  if (!intact(path) || c.queue.seg === '') return { ...base, valkey: undefined, writes: () => false };
  const refuse = (status: number, code: string, valkey = false): Plan => ({ ...base, status, code, valkey, writes: () => false });
  const g = gates(auth, c.queue.seg);
  if ('status' in g) return refuse(g.status, g.code);
  const { who, q } = g;
  const id = given === undefined ? undefined : trimHttp(given);
  if (id !== undefined && !ID_RULE.test(id)) return refuse(400, 'invalid_id');
  const k = key === undefined ? undefined : trimHttp(key);
  if (k !== undefined && !KEY_RULE.test(k)) return refuse(400, 'invalid_idempotency_key');
  // the placement headers as the server sees them (fetch trims them), checked before the body is read
  const seen = (v: string | number | undefined) => (v === undefined ? undefined : trimHttp(headerBytes(String(v))));
  const placed = placeRule({ group: seen(pv.group), delay: seen(pv.delay), notBefore: seen(pv.notBefore) }, sent);
  if ('refused' in placed) {
    reach(`jobs 400 ${placed.refused}`);
    return refuse(400, placed.refused);
  }
  if (body.length > MAX_PAYLOAD) return refuse(413, 'payload_too_large');
  return planJobsByModel(base, q, who, id, k, body, placed, sent);
}

/** What a landing is called in the tallies. */
export const kindOf = (placed: Placed, group: string | undefined) =>
  `${placed.at !== undefined ? 'scheduled at' : placed.inMs !== undefined ? 'scheduled in' : group !== undefined ? 'lane' : 'flat'}${
    group !== undefined && (placed.at !== undefined || placed.inMs !== undefined) ? ', grouped' : ''
  }${placed.group === undefined && group !== undefined ? ' (default lane)' : ''}`;

/** POST jobs past every gate: the model of what Valkey holds decides the answer. */
function planJobsByModel(
  base: { label: string; req: Req; service: 'producer' },
  q: string,
  who: Who,
  id: string | undefined,
  k: string | undefined,
  body: Buffer,
  placed: Placed,
  sent: number,
): Plan {
  const refuse = (status: number, code: string, valkey = false): Plan => ({ ...base, status, code, valkey, writes: () => false });
  const scheduled = placed.at !== undefined || placed.inMs !== undefined;
  const group = placed.group ?? laneOf(q);
  const kind = kindOf(placed, group);
  // the wrong-type queue's pending key is a string: a flat job is refused there (@enqueue-once's
  // type gate comes first; @enqueue's after its idempotency gate, so an existing id is a duplicate);
  // a lane or the schedule is none of its business
  if (q === WT && !scheduled && group === undefined && (k !== undefined || id === undefined || !model.exists(q, id))) {
    return refuse(409, 'conflict', true);
  }

  // what Valkey holds decides: the model says what
  const fp = sha256(body);
  const mk = `${who} ${q} ${k}`;
  const marker = k === undefined ? undefined : model.idem.get(mk);
  // a job's row, or a flow's (then that row stays as the flow wrote it)
  const existing = id === undefined ? undefined : (model.jobs.get(jk(q, id)) ?? model.flowRows.get(jk(q, id))?.payload);
  let status: number;
  let expectId = id;
  let stored = body;
  let writes: boolean;
  // a key whose job DELETE removed (without freeing the key) still answers that job, whatever
  // the payload and lane: its row is gone, so nothing is compared
  if (marker && model.gone.has(jk(q, marker.id))) {
    return {
      ...base,
      status: 200,
      valkey: true,
      writes: () => false,
      async check(ans) {
        const j = ans.json as Record<string, unknown>;
        if (j?.id !== marker.id || j.verdict !== 'duplicate' || j.queue !== q) violation(base, ans, `expected the removed job ${marker.id}, duplicate`);
        reach('jobs 200 duplicate of a removed job, by its key');
      },
    };
  }
  // a key reused with another payload, or another lane (the time is not compared), is another job
  if (marker && (marker.fp !== fp || marker.group !== group)) {
    reach(`jobs 422 reused key, another ${marker.fp !== fp ? 'payload' : 'group'}`);
    return refuse(422, 'idempotency_conflict', true);
  }
  if (marker) {
    [status, expectId, stored, writes] = [200, marker.id, model.jobs.get(jk(q, marker.id))!, false];
  } else if (existing) {
    // an existing job's id (with a key first used, too): that job, and nothing written (no de: key)
    [status, stored, writes] = [200, existing, false];
  } else {
    [status, writes] = [201, true];
  }
  return {
    ...base,
    status,
    valkey: true,
    writes: () => writes,
    async check(ans) {
      const done = Date.now();
      const j = ans.json as Record<string, unknown>;
      const verdict = status === 201 ? (scheduled ? 'scheduled' : 'enqueued') : 'duplicate';
      if (
        Object.keys(j ?? {})
          .sort()
          .join(',') !== 'id,queue,verdict' ||
        j.queue !== q ||
        j.verdict !== verdict ||
        typeof j.id !== 'string' ||
        !ID_RULE.test(j.id)
      ) {
        violation(base, ans, `expected {"id","queue":"${q}","verdict":"${verdict}"}`);
      }
      if (expectId !== undefined && j.id !== expectId) violation(base, ans, `expected the id ${expectId}`);
      if (ans.headers.get('location') !== `/v1/queues/${q}/jobs/${String(j.id)}`) violation(base, ans, `a wrong Location: ${ans.headers.get('location')}`);
      if (status === 201) {
        const landed = await checkRow(base, ans, q, j.id as string, body, landing(q, placed, sent, done));
        model.addJob(q, j.id as string, body, landed);
        reach(`jobs 201 ${kind}${k === undefined ? '' : ', keyed'}`);
      } else {
        // a duplicate: the job as it landed, whatever this request asked for
        if (model.flowRows.has(jk(q, j.id as string))) {
          await checkKnown(base, ans, q, j.id as string);
          reach('jobs 200 duplicate of a flow job');
        } else await checkRow(base, ans, q, j.id as string, stored, expectOf(model.placeOf(q, j.id as string)));
        if (kind !== 'flat') reach(`jobs 200 duplicate, asked ${kind}`);
      }
      if (k !== undefined && status === 201) model.idem.set(mk, { id: j.id as string, fp, group });
    },
  };
}
