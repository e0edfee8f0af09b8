// The producer Worker's endpoints: for each, the cases (arbitraries) and the plan (the
// request and its oracle, from the model), and the regression examples replayed first.
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { bodyArb, bytesOf, headerJunk, headersOf, hostileId, printable, rawSegArb, validId, type Alter, type Body } from './arbitraries.js';
import { jk, model, sha256, type FlowRow, type Place } from './model.js';
import { ID_RULE, KEY_RULE, QUEUE_RULE, B64_RULE, checkRow, expectOf, intact, isUtf8, param, trimHttp, violation, type Plan, type Req } from './oracle.js';
import type { Answer } from '../support/answer.js';
import { goodPlaceArb, headerBytes, landing, laneOf, placeArb, placeRule, placeValues, reach, type Placed, type PlaceV } from './placement.js';
import {
  ALL,
  MAX_BATCH,
  MAX_ITEMS,
  MAX_PAYLOAD,
  SOME,
  SOURCES,
  SOURCE_NAMES,
  STD_NEW,
  STD_OLD,
  TOLERANCE,
  WT,
  admin,
  type SourceName,
  type Who,
} from './setup.js';

// ---------------------------------------------------------------- the producer: auth, queues, ids

type AuthV =
  | { t: 'ok'; who: Who }
  | { t: 'variant'; who: Who; scheme: string; sep: string; trail: string; alter: Alter }
  | { t: 'none' }
  | { t: 'raw'; value: string };
const authArb: fc.Arbitrary<AuthV> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ t: fc.constant('ok' as const), who: fc.constantFrom<Who>('all', 'all', 'some') }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('variant' as const),
      who: fc.constantFrom<Who>('all', 'some'),
      scheme: fc.constantFrom('bearer', 'BEARER', 'Bearer', 'Token', 'Basic', 'Bearer:', ''),
      sep: fc.constantFrom(' ', '  ', '\t', '', ' \t '),
      trail: fc.constantFrom('', ' ', '\t', ' x', ','),
      alter: fc.constantFrom<Alter>('none', 'none', 'append', 'chop', 'upper'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('raw' as const), value: printable }) },
);

const tokenOf = (who: Who) => (who === 'all' ? ALL : SOME);
function authHeader(a: AuthV): string | undefined {
  if (a.t === 'none') return undefined;
  if (a.t === 'raw') return a.value;
  if (a.t === 'ok') return `Bearer ${tokenOf(a.who)}`;
  const t = tokenOf(a.who);
  const token = a.alter === 'append' ? `${t}x` : a.alter === 'chop' ? t.slice(0, -1) : a.alter === 'upper' ? t.toUpperCase() : t;
  return `${a.scheme}${a.sep}${token}${a.trail}`;
}
/** Whose token the Authorization header carries: `Bearer <token>`, the scheme in any case. */
function callerOf(header: string | undefined): Who | undefined {
  if (header === undefined) return undefined;
  const token = /^bearer[\t ]+(\S+)[\t ]*$/i.exec(trimHttp(header))?.[1];
  return token === ALL ? 'all' : token === SOME ? 'some' : undefined;
}
// fz-a.* is one segment under fz-a: fz-a.x, never fz-a.x.y (functions/producer/queue-patterns.ts)
const allows = (who: Who, q: string) => who === 'all' || /^fz-a\.[A-Za-z0-9_-]+$/.test(q) || q === 'fz-b';

interface Seg {
  seg: string;
}
// fz-a.lane and fz-a.lx have default lanes (EMQ_QUEUE_GROUPS: the exact entry, a prefix)
const CLEAN_QUEUES = ['fz-a.1', 'fz-a.x_y', 'fz-b', 'fz-c', WT, `fz-a.${'z'.repeat(123)}`, 'fz-a.lane', 'fz-a.lx', 'fz-a.1.2'];
const segArb: fc.Arbitrary<Seg> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...CLEAN_QUEUES).map((seg) => ({ seg })) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,130}$/).map((q) => ({ seg: encodeURIComponent(q) })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom('fz{a}', 'fz:a', 'fz a', 'fzé', 'fz\u0000', 'fz/a', '*', 'fz-a.*', '%', 'a'.repeat(129), 'fz-b\n', 'ﬀ', 'fz-b?x=1', 'fz-b#x'),
        fc.string({ unit: 'grapheme', maxLength: 12 }),
      )
      .map((q) => ({ seg: encodeURIComponent(q) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('%', '%ZZ', '%FF', '%2F', '%2e%2E', '..', '.', '%2541', 'fz-b%00', 'fz-%61.1', '%E2%82', '').map((seg) => ({ seg })),
  },
);

type IdV = { t: 'fresh'; id: string } | { t: 'known'; n: number; alt: string } | { t: 'raw'; value: string } | { t: 'again'; n: number; alt: string };
const idArb: fc.Arbitrary<IdV> = fc.oneof(
  { weight: 3, arbitrary: validId.map((id) => ({ t: 'fresh' as const, id })) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('known' as const), n: fc.nat(), alt: validId }) },
  { weight: 2, arbitrary: hostileId.map((value) => ({ t: 'raw' as const, value })) },
);
/** An id: fresh, one the model knows (of this queue if it can), hostile, or (a batch item) one an earlier item of the batch sent. */
function idOf(v: IdV, queue?: string, earlier: readonly string[] = []): string {
  if (v.t === 'fresh') return v.id;
  if (v.t === 'raw') return v.value;
  if (v.t === 'again') return earlier.length > 0 ? earlier[v.n % earlier.length]! : v.alt;
  const pool = queue === undefined ? model.known : model.known.filter((k) => k.queue === queue);
  const from = pool.length > 0 ? pool : model.known;
  return from.length > 0 ? from[v.n % from.length]!.id : v.alt;
}

type KeyV = { t: 'pool'; n: number } | { t: 'raw'; value: string };
const keyArb: fc.Arbitrary<KeyV> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('pool' as const), n: fc.nat(4) }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(printable, headerJunk, fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'k\tk', 'ключ', `k${'\u00ff'}`))
      .map((value) => ({ t: 'raw' as const, value })),
  },
);
const keyOf = (k: KeyV) => (k.t === 'pool' ? `key-${k.n}` : k.value);

const contentTypeArb = fc.option(
  fc.constantFrom('application/json', 'text/plain; charset=utf-8', 'application/octet-stream', 'multipart/form-data; boundary=x', 'x/y', ''),
  { nil: undefined },
);
const extraHeaderArb = fc.option(
  fc.tuple(
    fc.constantFrom(
      'X-Fuzz',
      'Accept',
      'Accept-Encoding',
      'Content-Encoding',
      'Cookie',
      'X-Forwarded-For',
      'Range',
      'If-None-Match',
      'Upstash-Encoding',
      'Emq-Region',
      'CF-Connecting-IP',
    ),
    headerJunk,
  ),
  { nil: undefined },
);

/** The producer's refusal for auth and queue, before anything route-specific. */
function gates(auth: string | undefined, seg: string): { status: number; code: string } | { who: Who; q: string } {
  const who = callerOf(auth);
  if (!who) return { status: 401, code: 'unauthorized' };
  const q = param(seg);
  if (!QUEUE_RULE.test(q)) return { status: 400, code: 'invalid_queue' };
  if (!allows(who, q)) return { status: 403, code: 'forbidden_queue' };
  return { who, q };
}

// ---------------------------------------------------------------- producer: POST /v1/queues/:queue/jobs

interface JobsCase {
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
const jobsArb: fc.Arbitrary<JobsCase> = fc.record({
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

function planJobs(c: JobsCase): Plan {
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
const kindOf = (placed: Placed, group: string | undefined) =>
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

// ---------------------------------------------------------------- producer: POST /v1/queues/:queue/batch

type ItemV =
  | { t: 'text'; payload: string; id: IdV | undefined; place?: PlaceV | undefined }
  | { t: 'b64'; bytes: Uint8Array; id: IdV | undefined; place?: PlaceV | undefined }
  | { t: 'badtype'; field: 'group' | 'delay' | 'notBefore'; value: unknown }
  | { t: 'sized'; size: number; b64: boolean }
  | { t: 'json'; value: unknown }
  | { t: 'badb64'; how: 'unpadded' | 'urlsafe' | 'spaced' | 'raw'; bytes: Uint8Array; raw: string }
  | { t: 'lone' }
  | { t: 'badid'; id: unknown };
type DocV =
  | { t: 'items'; items: ItemV[] }
  | { t: 'json'; value: unknown }
  | { t: 'text'; text: string }
  | { t: 'bytes'; bytes: Uint8Array }
  | { t: 'many'; n: number; b64: boolean }
  | { t: 'huge'; extra: number };

/** A batch item's id: as a job's, or the id an earlier item of the same batch sent. */
const itemIdArb: fc.Arbitrary<IdV> = fc.oneof(
  { weight: 8, arbitrary: idArb },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('again' as const), n: fc.nat(), alt: validId }) },
);
const itemPlaceArb = fc.option(placeArb, { nil: undefined });
/** A group, delay or notBefore of another JSON type than a string (a number is a notBefore's Unix ms). */
const badTypeArb = fc.record({
  t: fc.constant('badtype' as const),
  field: fc.constantFrom('group' as const, 'delay' as const, 'notBefore' as const),
  value: fc.oneof(
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }),
    fc.record({ at: fc.nat() }),
    fc.constantFrom(1.5, -1, -0, 0, 1e21, 1e15, 1.7e12, 2 ** 53, 1767225600000, 3e4, '30s', 'PRT0KHTOWnGLuC'),
  ),
});
const itemArb: fc.Arbitrary<ItemV> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant('text' as const),
      payload: fc.string({ unit: 'grapheme', maxLength: 40 }),
      id: fc.option(itemIdArb, { nil: undefined }),
      place: itemPlaceArb,
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant('b64' as const),
      bytes: fc.uint8Array({ maxLength: 60 }),
      id: fc.option(itemIdArb, { nil: undefined }),
      place: itemPlaceArb,
    }),
  },
  { weight: 1, arbitrary: badTypeArb },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('sized' as const), size: fc.constantFrom(MAX_PAYLOAD, MAX_PAYLOAD + 1, 30_000), b64: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('json' as const),
      value: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.record({ payload: fc.jsonValue({ maxDepth: 1 }) }),
        fc.record({ payloadBase64: fc.jsonValue({ maxDepth: 1 }) }),
        fc.record({ payload: fc.string(), payloadBase64: fc.base64String() }),
        fc.record({ payload: fc.string(), extra: fc.jsonValue({ maxDepth: 1 }) }),
        fc.constantFrom(
          {},
          { id: 'x' },
          { payload: 'x', __proto__x: 1 },
          JSON.parse('{"payload":"x","__proto__":1}') as unknown,
          { payload: null },
          { payloadBase64: null, payload: 'x' },
        ),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('badb64' as const),
      how: fc.constantFrom('unpadded' as const, 'urlsafe' as const, 'spaced' as const, 'raw' as const),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }),
      raw: printable,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'lone' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('badid' as const), id: fc.oneof(hostileId, fc.jsonValue({ maxDepth: 1 })) }) },
);
const cleanItemArb: fc.Arbitrary<ItemV> = fc.oneof(
  fc.record({ t: fc.constant('text' as const), payload: fc.string({ unit: 'grapheme', maxLength: 40 }), id: fc.option(idArb, { nil: undefined }) }),
  fc.record({ t: fc.constant('b64' as const), bytes: fc.uint8Array({ maxLength: 60 }), id: fc.option(idArb, { nil: undefined }) }),
);
/** Items of a placement batch: valid ones of every landing and hostile ones, ids repeated within the batch too. */
const placedItemArb: fc.Arbitrary<ItemV> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      t: fc.constant('text' as const),
      payload: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.nat(2).map((n) => `pooled ${n}`),
      ),
      id: fc.option(itemIdArb, { nil: undefined, freq: 2 }),
      // one bad item refuses the batch: mostly valid ones, so that batches land
      place: fc.oneof({ weight: 6, arbitrary: goodPlaceArb }, { weight: 1, arbitrary: placeArb }),
    }),
  },
  { weight: 1, arbitrary: badTypeArb },
);
const docArb: fc.Arbitrary<DocV> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('items' as const), items: fc.array(cleanItemArb, { minLength: 1, maxLength: 8 }) }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('items' as const), items: fc.array(itemArb, { minLength: 1, maxLength: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('text' as const),
      text: fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.constantFrom(
          '',
          '[]',
          '[{"payload":"x"}',
          '\ufeff[{"payload":"x"}]',
          '[{"payload":"\\ud800"}]',
          '[{"payload":"x"}] ',
          'null',
          '{"payload":"x"}',
          '[[]]',
          '[{"payloadBase64":"QQ=="}]',
        ),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => ({ t: 'bytes' as const, bytes: Uint8Array.from([0x5b, 0x22, ...b, 0xff, 0x22, 0x5d]) })),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('many' as const), n: fc.constantFrom(MAX_ITEMS, MAX_ITEMS + 1), b64: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('huge' as const), extra: fc.constantFrom(-1, 0, 1, 1000) }) },
);

/** The document's text or bytes; `ids` resolved against the model now, placements against `now`. */
function docBytes(d: DocV, queue: string, now: number): Buffer {
  const earlier: string[] = [];
  const idField = (v: IdV | undefined) => {
    if (!v) return {};
    const id = idOf(v, queue, earlier);
    earlier.push(id);
    return { id };
  };
  const item = (it: ItemV): unknown => {
    switch (it.t) {
      case 'text':
        return { payload: it.payload, ...idField(it.id), ...(it.place ? placeValues(it.place, now) : {}) };
      case 'b64':
        return { payloadBase64: Buffer.from(it.bytes).toString('base64'), ...idField(it.id), ...(it.place ? placeValues(it.place, now) : {}) };
      case 'badtype':
        return { payload: 'p', [it.field]: it.value };
      case 'sized': {
        const b = bytesOf({ t: 'sized', size: it.size, fill: 'ascii' });
        return it.b64 ? { payloadBase64: b.toString('base64') } : { payload: b.toString('latin1') };
      }
      case 'json':
        return it.value;
      case 'badb64': {
        const b64 = Buffer.from(it.bytes).toString('base64');
        const v =
          it.how === 'unpadded'
            ? b64.replace(/=+$/, '')
            : it.how === 'urlsafe'
              ? b64.replace(/\+/g, '-').replace(/\//g, '_')
              : it.how === 'spaced'
                ? `${b64.slice(0, 2)} ${b64.slice(2)}`
                : it.raw;
        return { payloadBase64: v };
      }
      case 'lone':
        return { payload: 'a\ud800b' };
      case 'badid':
        return { payload: 'p', id: it.id };
    }
  };
  switch (d.t) {
    case 'items':
      return Buffer.from(JSON.stringify(d.items.map(item)));
    case 'json':
      return Buffer.from(JSON.stringify(d.value));
    case 'text':
      return Buffer.from(d.text, 'utf8');
    case 'bytes':
      return Buffer.from(d.bytes);
    case 'many':
      return Buffer.from(
        // base64: bytes that are not UTF-8, so over REST the batch needs base64 arguments to stay one request
        JSON.stringify(
          Array.from({ length: d.n }, (_, i) => (d.b64 ? { payloadBase64: Buffer.from([0xff, i & 0xff, i >> 8]).toString('base64') } : { payload: `#${i}` })),
        ),
      );
    case 'huge': {
      const head = '[{"payload":"';
      const tail = '"}]';
      return Buffer.from(head + 'h'.repeat(MAX_BATCH + d.extra - head.length - tail.length) + tail);
    }
  }
}

interface RefJob {
  id: string | undefined;
  bytes: Buffer;
  placed: Placed;
}
const ITEM_FIELDS = ['payload', 'payloadBase64', 'id', 'group', 'delay', 'notBefore'];
/** The batch format (docs/api.md): the jobs it holds, or the refusal with the first bad item's index. */
function referenceBatch(body: Buffer, now: number): { jobs: RefJob[] } | { index?: number } {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body));
  } catch {
    return {};
  }
  if (!Array.isArray(doc) || doc.length === 0 || doc.length > MAX_ITEMS) return {};
  const jobs: RefJob[] = [];
  for (const [index, it] of doc.entries()) {
    if (it === null || typeof it !== 'object' || Array.isArray(it)) return { index };
    const o = it as Record<string, unknown>;
    if (Object.keys(o).some((k) => !ITEM_FIELDS.includes(k))) return { index };
    // group and delay: strings; notBefore: a string, or a number (Unix ms, as JavaScript writes it)
    const { group, delay, notBefore } = o;
    if ((group !== undefined && typeof group !== 'string') || (delay !== undefined && typeof delay !== 'string')) return { index };
    if (notBefore !== undefined && typeof notBefore !== 'string' && typeof notBefore !== 'number') return { index };
    const placed = placeRule(
      { group: group as string | undefined, delay: delay as string | undefined, notBefore: notBefore === undefined ? undefined : String(notBefore) },
      now,
    );
    if ('refused' in placed) {
      reach(`batch 400 ${placed.refused}`);
      return { index };
    }
    let bytes: Buffer;
    if (typeof o.payload === 'string' && o.payloadBase64 === undefined) {
      if (!o.payload.isWellFormed()) return { index };
      bytes = Buffer.from(o.payload, 'utf8');
    } else if (typeof o.payloadBase64 === 'string' && o.payload === undefined) {
      if (!B64_RULE.test(o.payloadBase64)) return { index };
      bytes = Buffer.from(o.payloadBase64, 'base64');
    } else return { index };
    if (bytes.length > MAX_PAYLOAD) return { index };
    if (o.id !== undefined && (typeof o.id !== 'string' || !ID_RULE.test(o.id))) return { index };
    jobs.push({ id: o.id as string | undefined, bytes, placed });
  }
  return { jobs };
}

interface BatchCase {
  t: 'batch';
  auth: AuthV;
  queue: Seg;
  doc: DocV;
  contentType: string | undefined;
  extra: [string, string] | undefined;
}
const batchArb: fc.Arbitrary<BatchCase> = fc.record({
  t: fc.constant('batch' as const),
  auth: authArb,
  queue: segArb,
  doc: docArb,
  contentType: contentTypeArb,
  extra: extraHeaderArb,
});

function planBatch(c: BatchCase): Plan {
  const path = `/v1/queues/${c.queue.seg}/batch`;
  const auth = authHeader(c.auth);
  const sent = Date.now();
  const body = docBytes(c.doc, param(c.queue.seg), sent);
  const req: Req = {
    method: 'POST',
    path,
    headers: headersOf(
      [
        ['Authorization', auth],
        ['Content-Type', c.contentType],
      ],
      c.extra,
    ),
    body,
  };
  const base = { label: 'producer POST /v1/queues/:queue/batch', req, service: 'producer' as const };
  if (!intact(path) || c.queue.seg === '') return { ...base, valkey: undefined, writes: () => false };
  const refuse = (status: number, code: string, valkey = false): Plan => ({ ...base, status, code, valkey, writes: () => false });
  const g = gates(auth, c.queue.seg);
  if ('status' in g) return refuse(g.status, g.code);
  const { q } = g;
  if (body.length > MAX_BATCH) return refuse(413, 'payload_too_large');
  const ref = referenceBatch(body, sent);
  if (!('jobs' in ref)) return { ...refuse(400, 'invalid_batch'), index: ref.index };
  // in request order: an id the model knows, or an earlier item's that landed, is a duplicate
  const seen = new Set<string>();
  const expected = ref.jobs.map((j) => {
    const dup = j.id !== undefined && (model.exists(q, j.id) || seen.has(j.id));
    const scheduled = j.placed.at !== undefined || j.placed.inMs !== undefined;
    const group = j.placed.group ?? laneOf(q);
    const flat = !scheduled && group === undefined;
    // the wrong-type queue: a flat job that is no duplicate fails, writing nothing (a later item of its id is no duplicate of it)
    const fails = q === WT && flat && !dup;
    if (j.id !== undefined && !fails) seen.add(j.id);
    return {
      ...j,
      group,
      flat,
      fails,
      kind: kindOf(j.placed, group),
      verdict: dup ? 'duplicate' : scheduled ? 'scheduled' : 'enqueued',
    };
  });
  // the wrong-type queue: a flat job that is no duplicate fails (409); the lane and schedule
  // items in the same pipeline land, and the problem's results say which
  if (expected.some((e) => e.fails)) {
    const partial = expected.some((e) => !e.flat && e.verdict !== 'duplicate');
    if (partial) reach('batch 409 wrong-type queue, its lane or schedule items landed and named');
    const refusalCheck = async (ans: Answer) => {
      const done = Date.now();
      const results = (ans.json as { results?: Array<Record<string, unknown>> } | undefined)?.results;
      if (!Array.isArray(results) || results.length !== expected.length) return violation(base, ans, `expected ${expected.length} results in the problem`);
      for (const [i, e] of expected.entries()) {
        const r = results[i]!;
        const failed = e.fails;
        const want = failed ? 'code=conflict' : `verdict=${e.verdict}`;
        const got = 'code' in r ? `code=${String(r.code)}` : `verdict=${String(r.verdict)}`;
        if (got !== want || typeof r.id !== 'string' || !ID_RULE.test(r.id) || (e.id !== undefined && r.id !== e.id)) {
          violation(base, ans, `result ${i}: expected ${want}${e.id ? ` for ${e.id}` : ''}`);
        }
        if (!failed && e.verdict !== 'duplicate') {
          const place = await checkRow(base, ans, q, r.id as string, e.bytes, landing(q, e.placed, sent, done));
          model.addJob(q, r.id as string, e.bytes, place);
        }
      }
    };
    return { ...refuse(409, 'conflict', true), partial, refusalCheck };
  }
  const writes = expected.some((e) => e.verdict !== 'duplicate');
  return {
    ...base,
    status: 200,
    valkey: true,
    writes: () => writes,
    async check(ans) {
      const done = Date.now();
      const j = ans.json as { queue?: unknown; results?: Array<{ id?: unknown; verdict?: unknown }> };
      if (j?.queue !== q || !Array.isArray(j.results) || j.results.length !== expected.length)
        violation(base, ans, `expected ${expected.length} results for queue ${q}`);
      const landed = new Map<string, { bytes: Buffer; place: Place }>();
      for (const [i, e] of expected.entries()) {
        const r = j.results[i]!;
        if (
          Object.keys(r).sort().join(',') !== 'id,verdict' ||
          typeof r.id !== 'string' ||
          !ID_RULE.test(r.id) ||
          r.verdict !== e.verdict ||
          (e.id !== undefined && r.id !== e.id)
        ) {
          violation(base, ans, `result ${i}: expected ${JSON.stringify({ id: e.id, verdict: e.verdict, kind: e.kind })}`);
        }
        if (e.verdict !== 'duplicate') {
          const place = await checkRow(base, ans, q, r.id, e.bytes, landing(q, e.placed, sent, done));
          landed.set(r.id, { bytes: e.bytes, place });
          reach(`batch 200 ${e.kind}`);
        } else {
          // the job as it first landed: before this batch, or by an earlier item of it
          const before = landed.get(r.id);
          if (!before && model.flowRows.has(jk(q, r.id))) {
            await checkKnown(base, ans, q, r.id);
            reach('batch 200 duplicate of a flow job');
            continue;
          }
          const stored = before?.bytes ?? model.jobs.get(jk(q, r.id))!;
          await checkRow(base, ans, q, r.id, stored, expectOf(before?.place ?? model.placeOf(q, r.id)));
          if (before) reach(`batch 200 duplicate of an earlier item${before.place.group !== undefined || before.place.due !== undefined ? ', placed' : ''}`);
        }
      }
      for (const [id, { bytes, place }] of landed) model.addJob(q, id, bytes, place);
    },
  };
}

// ---------------------------------------------------------------- producer: GET /v1/queues/:queue/jobs/:id

interface GetCase {
  t: 'get';
  auth: AuthV;
  queue: Seg;
  id: IdV;
  head: boolean;
  extra: [string, string] | undefined;
}
const getArb: fc.Arbitrary<GetCase> = fc.record({
  t: fc.constant('get' as const),
  auth: authArb,
  queue: segArb,
  id: idArb,
  head: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  extra: extraHeaderArb,
});

function planGet(c: GetCase): Plan {
  const q0 = param(c.queue.seg);
  const id = idOf(c.id, q0);
  const idSeg = c.id.t === 'raw' ? encodeURIComponent(id) : id;
  const path = `/v1/queues/${c.queue.seg}/jobs/${idSeg}`;
  const auth = authHeader(c.auth);
  const req: Req = { method: c.head ? 'HEAD' : 'GET', path, headers: headersOf([['Authorization', auth]], c.extra) };
  const base = { label: 'producer GET /v1/queues/:queue/jobs/:id', req, service: 'producer' as const, writes: () => false };
  if (!intact(path) || c.queue.seg === '' || idSeg === '') return { ...base, valkey: undefined };
  const g = gates(auth, c.queue.seg);
  if ('status' in g) return { ...base, status: g.status, code: c.head ? undefined : g.code, valkey: false };
  if (!ID_RULE.test(param(idSeg))) return { ...base, status: 400, code: c.head ? undefined : 'invalid_id', valkey: false };
  // the wrong-type queue's pending key is a string: the state read refuses it (WRONGTYPE → 409)
  if (g.q === WT) return { ...base, status: 409, code: c.head ? undefined : 'conflict', valkey: true };
  const known = model.exists(g.q, id);
  if (!known) return { ...base, status: 404, code: c.head ? undefined : 'not_found', valkey: true };
  // a flow's job: a child pending, a parent awaiting its children
  const flowRow = model.flowRows.get(jk(g.q, id));
  if (flowRow) {
    const state = flowRow.kind === 'parent' ? 'awaiting_children' : 'pending';
    return {
      ...base,
      status: 200,
      valkey: true,
      async check(ans) {
        if (c.head) return;
        if (JSON.stringify(ans.json) !== JSON.stringify({ id, queue: g.q, state, attempts: 0 }))
          violation(base, ans, `expected {id, queue, state: ${state}, attempts: 0}`);
        reach(`get 200 a flow ${flowRow.kind}`);
      },
    };
  }
  // the state by the set that holds the id; a job waiting in its lane (in none of the sets)
  // reads pending by its row: state pending and a group
  const place = model.placeOf(g.q, id);
  if (place.due === undefined && place.group !== undefined) reach('get 200 a job in a lane');
  const state = place.due === undefined ? 'pending' : 'scheduled';
  return {
    ...base,
    status: 200,
    valkey: true,
    async check(ans) {
      if (c.head) return;
      if (JSON.stringify(ans.json) !== JSON.stringify({ id, queue: g.q, state, attempts: 0 }))
        violation(base, ans, `expected {id, queue, state: ${state}, attempts: 0}`);
      if (state === 'scheduled') reach('get 200 scheduled');
    },
  };
}

// ---------------------------------------------------------------- producer: POST /v1/webhooks/:source

type Mutation = 'valid' | 'tamperBody' | 'tamperSig' | 'wrongSecret' | 'noSig' | 'junkSig' | 'stale' | 'future' | 'extraSigs' | 'flood';
interface HookCase {
  t: 'hook';
  source: { known: SourceName } | { unknown: string };
  mutation: Mutation;
  secret: number;
  body: Body;
  stripe: 'event' | 'noId' | 'idNotString' | 'notJson' | 'jsonJunk';
  jsonJunk: string;
  delivery: { t: 'pool'; n: number } | { t: 'fresh'; value: string } | { t: 'absent' };
  event: string | undefined;
  skew: number;
  junk: string;
  contentType: string | undefined;
  extra: [string, string] | undefined;
}
const hookArb: fc.Arbitrary<HookCase> = fc.record({
  t: fc.constant('hook' as const),
  source: fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...SOURCE_NAMES).map((known) => ({ known })) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constantFrom('nope', 'GH', 'constructor', '__proto__', 'gh ', 'toString'), fc.string({ maxLength: 10 }))
        .map((unknown) => ({ unknown })),
    },
  ),
  mutation: fc.constantFrom<Mutation>(
    'valid',
    'valid',
    'valid',
    'valid',
    'tamperBody',
    'tamperSig',
    'wrongSecret',
    'noSig',
    'junkSig',
    'stale',
    'future',
    'extraSigs',
    'flood',
  ),
  secret: fc.nat(3),
  // a few pooled bodies: github and hmac dedupe on the body, so a replay needs one sent before
  body: fc.oneof(
    { weight: 4, arbitrary: bodyArb(MAX_PAYLOAD) },
    { weight: 1, arbitrary: fc.nat(2).map((n) => ({ t: 'text' as const, text: `pooled body ${n}` })) },
  ),
  stripe: fc.constantFrom(
    'event' as const,
    'event' as const,
    'event' as const,
    'noId' as const,
    'idNotString' as const,
    'notJson' as const,
    'jsonJunk' as const,
  ),
  jsonJunk: fc.constantFrom('null', '[]', '"evt_1"', '1', 'true', '{"id":""}', '{"id":null}', '{"id":["evt_1"]}', '[{"id":"evt_1"}]'),
  delivery: fc.oneof(
    { weight: 4, arbitrary: fc.record({ t: fc.constant('pool' as const), n: fc.nat(3) }) },
    { weight: 4, arbitrary: fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,30}[\x21-\x7e])?$/).map((value) => ({ t: 'fresh' as const, value })) },
    { weight: 1, arbitrary: fc.constant({ t: 'absent' as const }) },
  ),
  event: fc.option(fc.stringMatching(/^[\x21-\x7e]{1,20}$/), { nil: undefined }),
  skew: fc.integer({ min: -200, max: 200 }),
  junk: printable,
  contentType: contentTypeArb,
  extra: extraHeaderArb,
});

const hmac = (key: string | Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
/** One byte of the signature changed: always another signature (a changed character might not be). */
const flip = (sig: Buffer) => {
  const out = Buffer.from(sig);
  out[out.length >> 1] = out[out.length >> 1]! ^ 0x5a;
  return out;
};

function planHook(c: HookCase): Plan {
  const name = 'known' in c.source ? c.source.known : c.source.unknown;
  const seg = encodeURIComponent(name);
  const path = `/v1/webhooks/${seg}`;
  const label = 'producer POST /v1/webhooks/:source';
  const known = 'known' in c.source ? SOURCES[c.source.known] : undefined;
  const now = Math.floor(Date.now() / 1000);
  const sent = new Map<string, string>();
  let body = bytesOf(c.body);
  const delivery = c.delivery.t === 'pool' ? `dlv-${c.delivery.n}` : c.delivery.t === 'fresh' ? c.delivery.value : undefined;
  // the intent: what this delivery is, whatever the bytes say
  let signed = c.mutation !== 'tamperBody' && c.mutation !== 'tamperSig' && c.mutation !== 'wrongSecret' && c.mutation !== 'noSig' && c.mutation !== 'junkSig';
  let stale = false;
  let id: string | undefined = delivery;
  let event = c.event ?? '';
  // the envelope fields the signature covers; github and hmac sign the body only
  let covered = ['body'];
  let invalidDelivery = delivery === undefined;
  if (known) {
    const secrets = known.secrets as readonly string[];
    const secret = c.mutation === 'wrongSecret' ? 'not-the-secret' : secrets[c.secret % secrets.length]!;
    const sign = (data: Buffer) => (c.mutation === 'tamperSig' ? flip(hmac(secret, data)) : hmac(secret, data));
    switch (known.kind) {
      case 'github': {
        const sig = `sha256=${sign(body).toString('hex')}`;
        if (c.mutation === 'junkSig') sent.set('X-Hub-Signature-256', c.junk);
        else if (c.mutation === 'flood')
          sent.set('X-Hub-Signature-256', `${sig},${'00'.repeat(600)}`); // a valid signature buried in a 1.2 KB header
        else if (c.mutation !== 'noSig') sent.set('X-Hub-Signature-256', c.mutation === 'extraSigs' ? sig.toUpperCase().replace('SHA256=', 'sha256=') : sig);
        if (delivery !== undefined) sent.set('X-GitHub-Delivery', delivery);
        if (c.event !== undefined) sent.set('X-GitHub-Event', c.event);
        break;
      }
      case 'stripe': {
        const t = String(
          now +
            (c.mutation === 'stale'
              ? -(TOLERANCE + 100 + Math.abs(c.skew) * 1000)
              : c.mutation === 'future'
                ? TOLERANCE + 100 + Math.abs(c.skew) * 1000
                : c.skew),
        );
        stale = c.mutation === 'stale' || c.mutation === 'future';
        const ev =
          c.stripe === 'notJson' || c.stripe === 'jsonJunk'
            ? undefined
            : {
                ...(c.stripe === 'noId' ? {} : { id: c.stripe === 'idNotString' ? 7 : (delivery ?? 'evt_default') }),
                ...(c.event === undefined ? {} : { type: c.event }),
                object: 'event',
              };
        body = ev ? Buffer.from(JSON.stringify(ev)) : c.stripe === 'jsonJunk' ? Buffer.from(c.jsonJunk) : Buffer.from(`not json ${body.toString('hex')}`);
        id = c.stripe === 'event' ? (delivery ?? 'evt_default') : undefined;
        invalidDelivery = c.stripe !== 'event';
        event = ev && c.event !== undefined ? c.event : '';
        covered = ev && c.event !== undefined ? ['body', 'delivery', 'event'] : ['body', 'delivery'];
        const sig = sign(Buffer.concat([Buffer.from(`${t}.`), body])).toString('hex');
        // flood: the review's repro, short v1 entries by the thousand around the valid one (15 KB)
        const header =
          c.mutation === 'extraSigs'
            ? `t=${t}, v1=${'ab'.repeat(32)},v0=${sig}, v1=${sig}`
            : c.mutation === 'flood'
              ? `t=${t},${'v1=00,'.repeat(2500)}v1=${sig}`
              : `t=${t},v1=${sig}`;
        if (c.mutation === 'junkSig') sent.set('Stripe-Signature', c.junk);
        else if (c.mutation !== 'noSig') sent.set('Stripe-Signature', header);
        break;
      }
      case 'standard': {
        const ts = String(
          now +
            (c.mutation === 'stale'
              ? -(TOLERANCE + 100 + Math.abs(c.skew) * 1000)
              : c.mutation === 'future'
                ? TOLERANCE + 100 + Math.abs(c.skew) * 1000
                : c.skew),
        );
        stale = c.mutation === 'stale' || c.mutation === 'future';
        if (c.stripe === 'event') body = Buffer.from(JSON.stringify({ ...(c.event === undefined ? {} : { type: c.event }), data: { n: body.length } }));
        else if (c.stripe === 'jsonJunk') body = Buffer.from(c.jsonJunk);
        const key = c.mutation === 'wrongSecret' ? Buffer.from('not-the-secret') : [STD_OLD, STD_NEW][c.secret % 2]!;
        const mac = createHmac('sha256', key)
          .update(`${delivery ?? ''}.${ts}.`)
          .update(body)
          .digest();
        const sig = `v1,${(c.mutation === 'tamperSig' ? flip(mac) : mac).toString('base64')}`;
        if (c.mutation === 'junkSig') sent.set('webhook-signature', c.junk);
        else if (c.mutation === 'flood') sent.set('webhook-signature', `${`v1,${Buffer.alloc(32, 7).toString('base64')} `.repeat(6)}${sig}`);
        else if (c.mutation !== 'noSig')
          sent.set('webhook-signature', c.mutation === 'extraSigs' ? `v2,${sig.slice(3)} v1,${Buffer.alloc(32, 7).toString('base64')} ${sig}` : sig);
        if (delivery !== undefined) sent.set('webhook-id', delivery);
        sent.set('webhook-timestamp', ts);
        // no webhook-id: nothing identifies what was signed, so the signature cannot verify
        if (delivery === undefined) [signed, invalidDelivery] = [false, false];
        try {
          const parsed = JSON.parse(new TextDecoder().decode(body)) as { type?: unknown };
          event = typeof parsed?.type === 'string' ? parsed.type : '';
          covered = typeof parsed?.type === 'string' ? ['body', 'delivery', 'event'] : ['body', 'delivery'];
        } catch {
          event = '';
          covered = ['body', 'delivery'];
        }
        break;
      }
      case 'hmac': {
        const mac = sign(body);
        const text = known.encoding === 'hex' ? mac.toString('hex') : mac.toString('base64');
        const prefix = 'signaturePrefix' in known ? known.signaturePrefix : '';
        if (c.mutation === 'junkSig') sent.set(known.signatureHeader, c.junk);
        else if (c.mutation === 'flood') sent.set(known.signatureHeader, `${prefix}${text}${'='.repeat(1100)}`);
        else if (c.mutation !== 'noSig') sent.set(known.signatureHeader, `${prefix}${text}`);
        if (delivery !== undefined) sent.set(known.idHeader, delivery);
        if ('eventHeader' in known && c.event !== undefined) sent.set(known.eventHeader, c.event);
        event = 'eventHeader' in known ? (c.event ?? '') : '';
        break;
      }
    }
    if (c.mutation === 'tamperBody') body = Buffer.concat([body, Buffer.from([0x20])]);
    // a flood (too long, too many or wrong-sized entries) is refused before any HMAC
    if (c.mutation === 'junkSig' || c.mutation === 'flood') signed = false;
  }
  const headers = headersOf([...sent.entries(), ['Content-Type', c.contentType]], c.extra);
  const req: Req = { method: 'POST', path, headers, body };
  const base = { label, req, service: 'producer' as const };
  const refuse = (status: number, code: string, valkey = false): Plan => ({ ...base, status, code, valkey, writes: () => false });
  if (!intact(path) || seg === '') return { ...base, valkey: undefined, writes: () => false };
  // any name's body is read under the cap; an unknown source, a bad signature and a stale
  // timestamp are one answer (finding 5, second review)
  if (body.length > MAX_PAYLOAD) return refuse(413, 'payload_too_large');
  if (!known || !signed || stale) return refuse(401, 'invalid_signature');
  if (invalidDelivery || id === undefined) return refuse(400, 'invalid_delivery');
  if (known.queue === WT) return refuse(409, 'conflict', true);
  // the duplicate key is what the signature covers: the delivery id where it is signed
  // (stripe, standard), else the body (github, hmac: a fresh unsigned id is no new delivery)
  const byBody = known.kind === 'github' || known.kind === 'hmac';
  const dk = byBody ? `${name} body ${sha256(body)}` : `${name} id ${id}`;
  const original = model.deliveries.get(dk);
  const contentType = c.contentType === undefined ? '' : trimHttp(c.contentType);
  return {
    ...base,
    status: original ? 200 : 201,
    valkey: true,
    writes: () => !original,
    async check(ans) {
      const j = ans.json as Record<string, unknown>;
      if (
        Object.keys(j ?? {})
          .sort()
          .join(',') !== 'id,queue,verdict' ||
        j.queue !== known.queue ||
        j.verdict !== (original ? 'duplicate' : 'enqueued') ||
        typeof j.id !== 'string'
      ) {
        violation(base, ans, 'expected {"id","queue","verdict"}');
      }
      if (original && j.id !== original) violation(base, ans, `a redelivery answered ${String(j.id)}, not the original ${original}`);
      const row = await admin.hgetall(`emq:{${known.queue}}:job:${String(j.id)}`);
      if (!row.payload) violation(base, ans, 'no row for the webhook job');
      if (original) {
        if (!row.payload.equals(model.jobs.get(jk(known.queue, original))!)) violation(base, ans, 'a redelivery changed the job');
        return;
      }
      const env = JSON.parse(row.payload.toString('utf8')) as Record<string, unknown>;
      const want = { v: 1, source: name, kind: known.kind, event, delivery: id, contentType, signed: covered };
      for (const [k, v] of Object.entries(want))
        if (JSON.stringify(env[k]) !== JSON.stringify(v)) violation(base, ans, `the envelope's ${k} is ${JSON.stringify(env[k])}, not ${JSON.stringify(v)}`);
      if (!Buffer.from(String(env.body), 'base64').equals(body) || Buffer.from(body).toString('base64') !== env.body)
        violation(base, ans, 'the envelope does not give the exact body back');
      if (!(Math.abs(Date.parse(String(env.receivedAt)) - Date.now()) < 60_000)) violation(base, ans, `receivedAt ${String(env.receivedAt)}`);
      await checkRow(base, ans, known.queue, j.id as string, row.payload);
      model.addJob(known.queue, j.id as string, row.payload);
      model.deliveries.set(dk, j.id as string);
    },
  };
}

// ---------------------------------------------------------------- producer: POST /v1/queues/:queue/flows

// The flow format and what lands (docs/api.md, "Flows"), read here from the document, never by
// the producer's parser (functions/producer/flow-body.ts) or addFlow (shared/flow.ts).
const FLOW_MAX_CHILDREN = 1_000;
const PARENT_FIELDS = ['payload', 'payloadBase64', 'id'];
const CHILD_FIELDS = ['payload', 'payloadBase64', 'id', 'queue', 'onFailure'];
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isQueue = (v: unknown): v is string => typeof v === 'string' && QUEUE_RULE.test(v) && v !== 'emq';
/** Over REST a flow whose children all run in its queue goes as JSON past some 100 children: the fuzz sends 1 to 8, or 400 and more. */
const JSON_CHILDREN = 400;
const PATH_CHILDREN = 12;

interface RefChild {
  id: string | undefined;
  bytes: Buffer;
  queue: string | undefined;
  policy: 'fp' | 'id';
}
interface RefFlow {
  parent: { id: string | undefined; bytes: Buffer };
  children: RefChild[];
}

/** A job's payload: exactly one of payload (text with a UTF-8 form) and payloadBase64 (standard, padded). */
function refPayload(o: Record<string, unknown>): Buffer | undefined {
  if (typeof o.payload === 'string' && !('payloadBase64' in o)) return o.payload.isWellFormed() ? Buffer.from(o.payload, 'utf8') : undefined;
  if (typeof o.payloadBase64 === 'string' && !('payload' in o)) return B64_RULE.test(o.payloadBase64) ? Buffer.from(o.payloadBase64, 'base64') : undefined;
  return undefined;
}
const badId = (id: unknown) => id !== undefined && (typeof id !== 'string' || !ID_RULE.test(id));

/** The flow a body holds, or the refusal (400 invalid_flow) with the first bad child's index. */
function referenceFlow(body: Buffer): { flow: RefFlow } | { index?: number } {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body));
  } catch {
    return {};
  }
  if (!isObject(doc) || Object.keys(doc).some((k) => k !== 'parent' && k !== 'children')) return {};
  const { parent, children } = doc;
  if (!isObject(parent) || Object.keys(parent).some((k) => !PARENT_FIELDS.includes(k))) return {};
  const parentBytes = refPayload(parent);
  if (!parentBytes || parentBytes.length > MAX_PAYLOAD || badId(parent.id)) return {};
  if (!Array.isArray(children) || children.length === 0 || children.length > FLOW_MAX_CHILDREN) return {};
  const ids = new Set<unknown>([parent.id]);
  const out: RefChild[] = [];
  for (const [index, child] of children.entries()) {
    // a child with children of its own: a field a child does not have
    if (!isObject(child) || Object.keys(child).some((k) => !CHILD_FIELDS.includes(k))) return { index };
    if (child.queue !== undefined && !isQueue(child.queue)) return { index };
    if (child.onFailure !== undefined && child.onFailure !== 'fail-parent' && child.onFailure !== 'ignore') return { index };
    const bytes = refPayload(child);
    if (!bytes || bytes.length > MAX_PAYLOAD || badId(child.id) || (child.id !== undefined && ids.has(child.id))) return { index };
    ids.add(child.id);
    out.push({ id: child.id as string | undefined, bytes, queue: child.queue, policy: child.onFailure === 'ignore' ? 'id' : 'fp' });
  }
  return { flow: { parent: { id: parent.id as string | undefined, bytes: parentBytes }, children: out } };
}

/** A row as a flow wrote it, exactly its fields; a child at score 0 in its queue's pending set, a parent in none with its count. */
async function checkFlowRow(plan: { req: Req }, ans: Answer, q: string, id: string, row: FlowRow) {
  const got = await admin.hgetall(`emq:{${q}}:job:${id}`);
  const want: Record<string, Buffer | string> =
    row.kind === 'parent'
      ? { state: 'awaiting_children', attempts: '0', payload: row.payload }
      : {
          state: 'pending',
          attempts: '0',
          payload: row.payload,
          parent: row.parent,
          ...(row.parentQueue === undefined ? {} : { parent_queue: row.parentQueue }),
          parent_policy: row.policy,
        };
  const same =
    Object.keys(got).sort().join(',') === Object.keys(want).sort().join(',') &&
    Object.entries(want).every(([k, v]) => got[k]!.equals(typeof v === 'string' ? Buffer.from(v) : v));
  if (!same) {
    const shown = Object.fromEntries(Object.entries(got).map(([k, v]) => [k, v.toString('latin1').slice(0, 60)]));
    violation(plan, ans, `the row of ${q}/${id} is not the flow ${row.kind} expected: ${JSON.stringify(shown)}`);
  }
  const score = await admin.text('ZSCORE', `emq:{${q}}:pending`, id).catch((err: Error) => (/WRONGTYPE/.test(err.message) ? null : Promise.reject(err)));
  if (row.kind === 'child' && (score == null || Number(score) !== 0))
    violation(plan, ans, `the flow child ${q}/${id} is not in its pending set at 0 (${score})`);
  if (row.kind === 'parent') {
    if (score != null) violation(plan, ans, `the held parent ${q}/${id} is in the pending set`);
    const left = await admin.text('GET', `emq:{${q}}:job:${id}:dependencies`);
    if (left !== String(row.n)) violation(plan, ans, `the held parent ${q}/${id} counts ${String(left)} children, not ${row.n}`);
  }
}

/** A job the model holds, a job's or a flow's, as it landed. */
async function checkKnown(plan: { req: Req }, ans: Answer, q: string, id: string) {
  const row = model.flowRows.get(jk(q, id));
  if (row) return checkFlowRow(plan, ans, q, id, row);
  await checkRow(plan, ans, q, id, model.jobs.get(jk(q, id))!, expectOf(model.placeOf(q, id)));
}

type FPayV = { t: 'text'; s: string } | { t: 'b64'; bytes: Uint8Array } | { t: 'sized'; size: number; b64: boolean };
const fPayArb: fc.Arbitrary<FPayV> = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }).map((s) => ({ t: 'text' as const, s })) },
  { weight: 5, arbitrary: fc.uint8Array({ maxLength: 40 }).map((bytes) => ({ t: 'b64' as const, bytes })) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('sized' as const), size: fc.constantFrom(MAX_PAYLOAD, MAX_PAYLOAD + 1, 20_000), b64: fc.boolean() }),
  },
);
/** What makes a parent or a child ill-formed (or none). */
type FJunk = 'none' | 'unknown' | 'children' | 'both' | 'noPayload' | 'payloadType' | 'idType' | 'lone' | 'badb64' | 'notObject' | 'proto' | 'null';
const JUNK: FJunk[] = ['unknown', 'children', 'both', 'noPayload', 'payloadType', 'idType', 'lone', 'badb64', 'notObject', 'proto', 'null'];
type FQueueV = { t: 'none' } | { t: 'same' } | { t: 'clean'; q: string } | { t: 'raw'; v: unknown };
// the queues a flow's children run in: fz-c and fz-x.* are not the narrow token's (403); fz-wt's pending set is a string
const FLOW_QUEUES = ['fz-a.1', 'fz-a.x_y', 'fz-b', 'fz-c', WT, 'fz-a.lane', `fz-a.${'z'.repeat(123)}`, 'fz-a.f1', 'fz-a.f2', 'fz-x.1'];
const fQueueArb = (clean: boolean): fc.Arbitrary<FQueueV> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant({ t: 'none' as const }) },
    { weight: 1, arbitrary: fc.constant({ t: 'same' as const }) },
    { weight: 4, arbitrary: fc.constantFrom(...FLOW_QUEUES).map((q) => ({ t: 'clean' as const, q })) },
    {
      weight: clean ? 0 : 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom<unknown>('fz{a}', 'emq', '', 'a'.repeat(129), 'fz:a', 'fz a', '.', '..', 'fzé', 'fz-b\n', null, 5, true, ['fz-b'], {}),
          printable,
        )
        .map((v) => ({ t: 'raw' as const, v })),
    },
  );
const onFailureArb = (clean: boolean): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constantFrom('fail-parent', 'ignore') },
    { weight: clean ? 0 : 1, arbitrary: fc.constantFrom<unknown>('FAIL-PARENT', 'fp', 'id', 'retry', '', null, 1, true, ['ignore']) },
  );
const junkArb = (clean: boolean) =>
  clean ? fc.constant<FJunk>('none') : fc.oneof({ weight: 12, arbitrary: fc.constant<FJunk>('none') }, { weight: 1, arbitrary: fc.constantFrom(...JUNK) });
/** A flow's ids: none (minted), fresh, a job the model knows, hostile, or (a child) an earlier id of the same flow. */
const fIdArb = (clean: boolean, child: boolean): fc.Arbitrary<IdV | undefined> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: validId.map((id) => ({ t: 'fresh' as const, id })) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('known' as const), n: fc.nat(), alt: validId }) },
    { weight: clean ? 0 : 1, arbitrary: hostileId.map((value) => ({ t: 'raw' as const, value })) },
    { weight: child && !clean ? 1 : 0, arbitrary: fc.record({ t: fc.constant('again' as const), n: fc.nat(), alt: validId }) },
  );

interface FJobV {
  pay: FPayV;
  id: IdV | undefined;
  junk: FJunk;
}
interface FChildV extends FJobV {
  queue: FQueueV;
  onFailure: unknown;
}
type FTop = 'none' | 'unknown' | 'noChildren' | 'emptyChildren' | 'childrenNotArray' | 'parentNotObject' | 'array';
type FlowDocV =
  | { t: 'flow'; parent: FJobV; children: FChildV[]; top: FTop }
  /** A flow that landed, sent again as it was, or with another parent payload; n counts back from the latest. */
  | { t: 'resend'; n: number; alter: 'same' | 'parentPayload' }
  /** `n` children in the queue (every other one in fz-b when `across`), text; one child's payload (or the parent's, or all) not UTF-8. */
  | { t: 'many'; n: number; bin: 'none' | 'child' | 'parent' | 'all'; at: number; across: boolean }
  | { t: 'json'; value: unknown }
  | { t: 'text'; text: string }
  | { t: 'bytes'; bytes: Uint8Array }
  | { t: 'huge'; extra: number };

const fDocArb = (clean: boolean): fc.Arbitrary<FlowDocV> =>
  fc.record({
    t: fc.constant('flow' as const),
    parent: fc.record({ pay: fPayArb, id: fIdArb(clean, false), junk: junkArb(clean) }),
    children: fc.array(fc.record({ pay: fPayArb, id: fIdArb(clean, true), junk: junkArb(clean), queue: fQueueArb(clean), onFailure: onFailureArb(clean) }), {
      minLength: 1,
      maxLength: 8,
    }),
    top: clean
      ? fc.constant<FTop>('none')
      : fc.oneof(
          { weight: 10, arbitrary: fc.constant<FTop>('none') },
          { weight: 1, arbitrary: fc.constantFrom<FTop>('unknown', 'noChildren', 'emptyChildren', 'childrenNotArray', 'parentNotObject', 'array') },
        ),
  });
const resendArb: fc.Arbitrary<FlowDocV> = fc.record({
  t: fc.constant('resend' as const),
  n: fc.nat(3),
  alter: fc.constantFrom('same' as const, 'same' as const, 'parentPayload' as const),
});
const manyArb: fc.Arbitrary<FlowDocV> = fc.record({
  t: fc.constant('many' as const),
  n: fc.oneof(fc.integer({ min: JSON_CHILDREN, max: FLOW_MAX_CHILDREN }), fc.constantFrom(FLOW_MAX_CHILDREN, FLOW_MAX_CHILDREN + 1)),
  bin: fc.constantFrom('none' as const, 'child' as const, 'parent' as const, 'all' as const),
  at: fc.nat(),
  across: fc.boolean(),
});
const flowDocArb: fc.Arbitrary<FlowDocV> = fc.oneof(
  { weight: 6, arbitrary: fDocArb(true) },
  { weight: 6, arbitrary: fDocArb(false) },
  { weight: 3, arbitrary: resendArb },
  { weight: 1, arbitrary: manyArb },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('text' as const),
      text: fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.constantFrom(
          '',
          '{}',
          'null',
          '[]',
          '{"parent":{"payload":"p"},"children":[{"payload":"c"}]',
          '\ufeff{"parent":{"payload":"p"},"children":[{"payload":"c"}]}',
          '{"parent":{"payload":"p"},"children":[{"payload":"c"}]} x',
          '{"parent":{"payload":"p"},"children":[[]]}',
          '{"parent":{"payload":"\\ud800"},"children":[{"payload":"c"}]}',
          '{"parent":{"payload":"p"},"children":[{"payload":"c","children":[{"payload":"g"}]}]}',
          '{"parent":{"payload":"p","children":[{"payload":"c"}]},"children":[{"payload":"c"}]}',
          '{"parent":{"payloadBase64":"/w=="},"children":[{"payloadBase64":"AA=="}]}',
          '{"children":[{"payload":"c"}],"parent":{"payload":"p"},"parent":{"payload":"q"}}',
        ),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 20 }).map((b) => ({
      t: 'bytes' as const,
      bytes: Uint8Array.from([...Buffer.from('{"parent":{"payload":"'), ...b, 0xff, ...Buffer.from('"},"children":[{"payload":"c"}]}')]),
    })),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('huge' as const), extra: fc.constantFrom(-1, 0, 1, 1000) }) },
);

/** The JSON of a parent or child: its payload and id, then what makes it ill-formed. */
function flowJob(pay: FPayV, id: string | undefined, junk: FJunk, more: Record<string, unknown> = {}): unknown {
  let payload: Record<string, unknown>;
  if (pay.t === 'text') payload = { payload: pay.s };
  else if (pay.t === 'b64') payload = { payloadBase64: Buffer.from(pay.bytes).toString('base64') };
  else {
    const b = bytesOf({ t: 'sized', size: pay.size, fill: pay.b64 ? 'mixed' : 'ascii' });
    payload = pay.b64 ? { payloadBase64: b.toString('base64') } : { payload: b.toString('latin1') };
  }
  const o: Record<string, unknown> = { ...payload, ...(id === undefined ? {} : { id }), ...more };
  switch (junk) {
    case 'none':
      return o;
    case 'unknown':
      return { ...o, group: 'PRT0KHTOWnGLuC' };
    case 'children':
      return { ...o, children: [{ payload: 'grandchild' }] };
    case 'both':
      return { ...o, payload: 'x', payloadBase64: 'eA==' };
    case 'noPayload':
      return { ...o, payload: undefined, payloadBase64: undefined };
    case 'payloadType':
      return { ...o, payload: undefined, payloadBase64: [1, 2] };
    case 'idType':
      return { ...o, id: 12345 };
    case 'lone':
      return { ...o, payloadBase64: undefined, payload: 'a\ud800' };
    case 'badb64':
      return { ...o, payload: undefined, payloadBase64: 'eA' };
    case 'notObject':
      return [o];
    case 'null':
      return null;
    case 'proto':
      return Object.defineProperty({ ...o }, '__proto__', { value: 1, enumerable: true });
  }
}

let altered = 0;
/** The body a doc stands for, ids resolved against the model now (a resend: planFlow takes it from the model). */
function flowBody(d: FlowDocV, queue: string): Buffer {
  switch (d.t) {
    case 'flow': {
      const parentId = d.parent.id === undefined ? undefined : idOf(d.parent.id, queue);
      const earlier: string[] = parentId === undefined ? [] : [parentId];
      const children = d.children.map((c) => {
        const cq = c.queue.t === 'clean' ? c.queue.q : c.queue.t === 'same' ? queue : c.queue.t === 'raw' ? c.queue.v : undefined;
        const id = c.id === undefined ? undefined : idOf(c.id, typeof cq === 'string' ? cq : queue, earlier);
        if (id !== undefined) earlier.push(id);
        const more = { ...(c.queue.t === 'none' ? {} : { queue: cq }), ...(c.onFailure === undefined ? {} : { onFailure: c.onFailure }) };
        return flowJob(c.pay, id, c.junk, more);
      });
      const parent = flowJob(d.parent.pay, parentId, d.parent.junk);
      const top: unknown =
        d.top === 'none'
          ? { parent, children }
          : d.top === 'unknown'
            ? { parent, children, queue: queue }
            : d.top === 'noChildren'
              ? { parent }
              : d.top === 'emptyChildren'
                ? { parent, children: [] }
                : d.top === 'childrenNotArray'
                  ? { parent, children: children[0] }
                  : d.top === 'parentNotObject'
                    ? { parent: 'the parent', children }
                    : [parent, ...children];
      return Buffer.from(JSON.stringify(top));
    }
    case 'resend':
      // sent by planFlow from the model; with nothing landed yet, a small flow
      return Buffer.from(JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: 'c' }] }));
    case 'many': {
      const children: Array<Record<string, unknown>> = Array.from({ length: d.n }, (_, i) =>
        d.bin === 'all' ? { payloadBase64: Buffer.from([0xff, i & 0xff, i >> 8]).toString('base64') } : { payload: `#${i}` },
      );
      if (d.across) children.forEach((ch, i) => i % 2 && (ch.queue = 'fz-b'));
      if (d.bin === 'child') children[d.at % d.n] = { payloadBase64: Buffer.from([0xff, d.at & 0xff]).toString('base64') };
      const parent = d.bin === 'parent' ? { payloadBase64: '/w==' } : { payload: `many ${d.n}` };
      return Buffer.from(JSON.stringify({ parent, children }));
    }
    case 'json':
      return Buffer.from(JSON.stringify(d.value) ?? '');
    case 'text':
      return Buffer.from(d.text, 'utf8');
    case 'bytes':
      return Buffer.from(d.bytes);
    case 'huge': {
      const head = '{"parent":{"payload":"';
      const tail = '"},"children":[{"payload":"c"}]}';
      return Buffer.from(head + 'h'.repeat(MAX_BATCH + d.extra - head.length - tail.length) + tail);
    }
  }
}

interface FlowCase {
  t: 'flow';
  auth: AuthV;
  queue: Seg;
  doc: FlowDocV;
  contentType: string | undefined;
  extra: [string, string] | undefined;
}
const FLOWS = 'producer POST /v1/queues/:queue/flows';
const flowArb: fc.Arbitrary<FlowCase> = fc.record({
  t: fc.constant('flow' as const),
  auth: authArb,
  queue: segArb,
  doc: flowDocArb,
  contentType: contentTypeArb,
  extra: extraHeaderArb,
});

function planFlow(c: FlowCase): Plan {
  let { seg } = c.queue;
  let auth = authHeader(c.auth);
  let body = flowBody(c.doc, param(seg));
  if (c.doc.t === 'resend' && model.flowDocs.length > 0) {
    const sent = model.flowDocs[model.flowDocs.length - 1 - (c.doc.n % model.flowDocs.length)]!;
    [seg, auth, body] = [sent.seg, `Bearer ${tokenOf(sent.who)}`, sent.body];
    if (c.doc.alter === 'parentPayload') {
      const doc = JSON.parse(body.toString('utf8')) as { parent: Record<string, unknown> };
      const { payload: _p, payloadBase64: _b, ...rest } = doc.parent;
      body = Buffer.from(JSON.stringify({ ...doc, parent: { ...rest, payload: `altered ${altered++}` } }));
    }
  }
  return planFlowBody(c, seg, auth, body);
}

function planFlowBody(c: FlowCase, seg: string, auth: string | undefined, body: Buffer): Plan {
  const path = `/v1/queues/${seg}/flows`;
  const req: Req = {
    method: 'POST',
    path,
    headers: headersOf(
      [
        ['Authorization', auth],
        ['Content-Type', c.contentType],
      ],
      c.extra,
    ),
    body,
  };
  const base = { label: FLOWS, req, service: 'producer' as const };
  if (!intact(path) || seg === '') return { ...base, valkey: undefined, writes: () => false };
  /** A refusal: its status and code, the child it names (or none), nothing written. */
  const refuse = (status: number, code: string, valkey: boolean, index?: number): Plan => ({
    ...base,
    status,
    code,
    valkey,
    writes: () => false,
    async refusalCheck(ans) {
      if (ans.json?.index !== index) violation(base, ans, index === undefined ? 'a refusal naming a child' : `expected the refusal to name child ${index}`);
    },
  });
  const g = gates(auth, seg);
  if ('status' in g) return refuse(g.status, g.code, false);
  const { who, q } = g;
  if (body.length > MAX_BATCH) {
    reach('flows 413 payload_too_large');
    return refuse(413, 'payload_too_large', false);
  }
  const ref = referenceFlow(body);
  if (!('flow' in ref)) {
    reach(`flows 400 invalid_flow${ref.index === undefined ? '' : ', a child'}`);
    return refuse(400, 'invalid_flow', false, ref.index);
  }
  const f = ref.flow;
  const forbidden = f.children.findIndex((ch) => ch.queue !== undefined && !allows(who, ch.queue));
  if (forbidden >= 0) {
    reach('flows 403 forbidden_queue, a child');
    return refuse(403, 'forbidden_queue', false, forbidden);
  }

  // Valkey decides the rest, by the model of what it holds
  const cqOf = (ch: RefChild) => ch.queue ?? q;
  const sameQueue = f.children.every((ch) => cqOf(ch) === q);
  const n = f.children.length;
  const pid = f.parent.id;
  if (sameQueue && n > PATH_CHILDREN && n < JSON_CHILDREN) throw new Error(`the fuzz sends no flow of ${n} children in one queue`);
  const kind = sameQueue ? (n >= JSON_CHILDREN ? 'in its queue, as JSON' : 'in its queue') : 'across queues';
  /** A 200 duplicate: the parent's id in use; nothing written. */
  const duplicate = (why: string): Plan => {
    reach(`flows 200 duplicate ${kind}: ${why}`);
    return { ...base, status: 200, valkey: true, writes: () => false, check: async (ans) => void (await checkFlowAnswer(base, ans, q, f, 'duplicate')) };
  };
  if (sameQueue) {
    // one call: the parent in use, then a child's row, then the pending set's type
    if (pid !== undefined && model.exists(q, pid)) return duplicate(model.flowRows.get(jk(q, pid))?.kind === 'parent' ? 'a held parent' : 'a job');
    const taken = f.children.findIndex((ch) => ch.id !== undefined && model.exists(q, ch.id));
    if (taken >= 0) {
      reach(`flows 409 job_exists ${kind}`);
      return refuse(409, 'job_exists', true, taken);
    }
    if (q === WT) {
      reach('flows 409 conflict (a pending set of another type), in its queue');
      return refuse(409, 'conflict', true);
    }
  } else {
    // every child checked first, in order: its row (this parent's child already, else taken), its pending set's type
    const there = (ch: RefChild) => {
      const row = ch.id === undefined ? undefined : model.flowRows.get(jk(cqOf(ch), ch.id));
      return row?.kind === 'child' && pid !== undefined && row.parent === pid && row.parentQueue === (cqOf(ch) === q ? undefined : q);
    };
    const outcomes = f.children.map((ch) =>
      ch.id !== undefined && model.exists(cqOf(ch), ch.id) ? (there(ch) ? 'there' : 'taken') : cqOf(ch) === WT ? 'wrong type' : 'new',
    );
    const first = outcomes.findIndex((o) => o === 'taken' || o === 'wrong type');
    if (first >= 0) {
      reach(`flows 409 ${outcomes[first] === 'taken' ? 'job_exists' : 'conflict (a pending set of another type)'} ${kind}`);
      return refuse(409, outcomes[first] === 'taken' ? 'job_exists' : 'conflict', true, first);
    }
    if (pid !== undefined && model.exists(q, pid)) {
      const held = model.flowRows.get(jk(q, pid));
      // held by an earlier send of this flow: the same payload and the same number of children
      // (its count plus the children it counted done: nothing completes here)
      const earlier = held?.kind === 'parent' && held.payload.equals(f.parent.bytes) && held.n === n;
      if (!earlier) {
        if (held?.kind === 'parent' && held.payload.equals(f.parent.bytes)) return duplicate('a held parent, another number of children');
        return duplicate(held?.kind === 'parent' ? 'a held parent, another payload' : 'a job');
      }
      if (f.children.some((ch) => ch.id === undefined)) return duplicate('a held parent, children minted');
      if (outcomes.every((o) => o === 'there')) return duplicate('the same flow');
      if (outcomes.some((o) => o === 'there')) throw new Error('the model has a child of a parent it does not hold');
      // KNOWN (documented): another flow naming a held parent, with its payload, as many children
      // and all of them new, cannot be told from this flow sent again after it was cut off before
      // any child landed (the wire keeps nothing else of a flow): it lands them. Not sent here.
      reach('flows KNOWN: another flow on a held parent with its payload, not sent');
      return planFlowBody(
        c,
        seg,
        auth,
        Buffer.from(JSON.stringify({ ...JSON.parse(body.toString('utf8')), parent: { id: pid, payload: `avoided ${altered++}` } })),
      );
    }
  }

  // lands: the parent held, every child claimable in its queue
  return {
    ...base,
    status: 201,
    valkey: true,
    writes: () => true,
    async check(ans, keysAdded) {
      const { parent, children } = await checkFlowAnswer(base, ans, q, f, 'enqueued');
      const rows: Array<[string, string, FlowRow]> = [
        [q, parent, { kind: 'parent', payload: f.parent.bytes, n }],
        ...f.children.map((ch, i): [string, string, FlowRow] => [
          cqOf(ch),
          children[i]!,
          { kind: 'child', payload: ch.bytes, parent, parentQueue: cqOf(ch) === q ? undefined : q, policy: ch.policy },
        ]),
      ];
      for (let i = 0; i < rows.length; i += 50) await Promise.all(rows.slice(i, i + 50).map(([rq, id, row]) => checkFlowRow(base, ans, rq, id, row)));
      // exactly these keys: the rows, the count, and each pending set this flow started
      if (keysAdded !== undefined) {
        const perQueue = new Map<string, number>();
        for (const ch of f.children) perQueue.set(cqOf(ch), (perQueue.get(cqOf(ch)) ?? 0) + 1);
        let started = 0;
        for (const [cq, k] of perQueue) if (Number(await admin.call('ZCARD', `emq:{${cq}}:pending`)) === k) started++;
        if (keysAdded !== n + 2 + started) violation(base, ans, `the flow added ${keysAdded} keys, not ${n + 2 + started}`);
      }
      for (const [rq, id, row] of rows) model.addFlowRow(rq, id, row);
      model.flowDocs.push({ seg, who, body });
      if (model.flowDocs.length > 64) model.flowDocs.shift();
      reach(`flows 201 ${kind}${f.children.some((ch) => ch.id === undefined) ? '' : ', every id given'}${pid === undefined ? '' : ', the parent id given'}`);
      if (f.children.some((ch) => ch.policy === 'id')) reach('flows 201 a child onFailure ignore');
      if ([f.parent.bytes, ...f.children.map((ch) => ch.bytes)].some((b) => !isUtf8(b))) reach(`flows 201 ${kind}, bytes not UTF-8`);
      // the bug this fuzz's flows found: such a child went as REST JSON after the parent was held
      if (!sameQueue && f.children.some((ch) => cqOf(ch) === q && !isUtf8(ch.bytes))) reach('flows 201 across queues, a child in its queue not UTF-8');
    },
  };
}

/** A 2xx's body: exactly {queue, parent: {id}, children: [{queue, id}], verdict}, the ids given echoed, the minted ones fresh; answers the ids. */
async function checkFlowAnswer(plan: { req: Req }, ans: Answer, q: string, f: RefFlow, verdict: 'enqueued' | 'duplicate') {
  const j = ans.json as { queue?: unknown; parent?: { id?: unknown }; children?: Array<{ queue?: unknown; id?: unknown }>; verdict?: unknown };
  const keys = (o: unknown) =>
    Object.keys(o ?? {})
      .sort()
      .join(',');
  if (keys(j) !== 'children,parent,queue,verdict' || j.queue !== q || j.verdict !== verdict || keys(j.parent) !== 'id') {
    violation(plan, ans, `expected {"queue":"${q}","parent":{"id"},"children":[…],"verdict":"${verdict}"}`);
  }
  const parent = j.parent!.id;
  if (typeof parent !== 'string' || !ID_RULE.test(parent) || (f.parent.id !== undefined && parent !== f.parent.id)) violation(plan, ans, 'a wrong parent id');
  if (!Array.isArray(j.children) || j.children.length !== f.children.length) violation(plan, ans, `expected ${f.children.length} children`);
  const ids = j.children.map((ch, i) => {
    const want = f.children[i]!;
    if (
      keys(ch) !== 'id,queue' ||
      ch.queue !== (want.queue ?? q) ||
      typeof ch.id !== 'string' ||
      !ID_RULE.test(ch.id) ||
      (want.id !== undefined && ch.id !== want.id)
    ) {
      violation(plan, ans, `child ${i}: expected {"queue":"${want.queue ?? q}","id":${want.id === undefined ? 'a minted id' : `"${want.id}"`}}`);
    }
    return ch.id as string;
  });
  if (new Set([parent, ...ids]).size !== ids.length + 1) violation(plan, ans, 'the ids of a flow are not distinct');
  if (ans.headers.get('location') !== `/v1/queues/${q}/jobs/${parent}`) violation(plan, ans, `a wrong Location: ${ans.headers.get('location')}`);
  return { parent, children: ids };
}

// ---------------------------------------------------------------- producer: any other request

interface OtherCase {
  t: 'other';
  method: string;
  prefix: string;
  segs: string[];
  auth: AuthV;
  body: Body | undefined;
}
const methodArb = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'QUERY');
const otherArb: fc.Arbitrary<OtherCase> = fc.record({
  t: fc.constant('other' as const),
  method: methodArb,
  prefix: fc.constantFrom('', '/v1', '/v1/queues', '/v1/queues/fz-b', '/v1/queues/fz-b/jobs', '/v1/webhooks', '/healthz', '/readyz', '/v2'),
  segs: fc.array(rawSegArb, { maxLength: 4 }),
  auth: authArb,
  body: fc.option(bodyArb(MAX_PAYLOAD), { nil: undefined }),
});
function planOther(c: OtherCase): Plan {
  const path = `${c.prefix}/${c.segs.join('/')}`;
  const hasBody = c.body !== undefined && c.method !== 'GET' && c.method !== 'HEAD';
  const req: Req = {
    method: c.method,
    path,
    headers: headersOf([['Authorization', authHeader(c.auth)]], undefined),
    ...(hasBody ? { body: bytesOf(c.body!) } : {}),
  };
  const base = { label: 'producer any other request', req, service: 'producer' as const };
  if ((c.method === 'GET' || c.method === 'HEAD') && (path === '/healthz' || path === '/readyz'))
    return { ...base, status: 200, valkey: path === '/readyz', writes: () => false };
  // a POST may hit a write route by chance: then it must answer like one
  return {
    ...base,
    valkey: undefined,
    writes: (ans) => (c.method === 'POST' && ans.status < 300 ? 'maybe' : false),
    async check(ans) {
      if (c.method !== 'POST') return;
      const j = ans.json as { id?: string; queue?: string; results?: Array<{ id: string }> };
      for (const id of j?.results?.map((r) => r.id) ?? (j?.id ? [j.id] : [])) {
        if (!(await admin.hgetall(`emq:{${String(j.queue)}}:job:${id}`)).payload) violation(base, ans, `a 2xx naming ${id}, which is not there`);
      }
      if (j?.queue)
        for (const id of j.results?.map((r) => r.id) ?? (j.id ? [j.id] : [])) {
          const row = await admin.hgetall(`emq:{${j.queue}}:job:${id}`);
          const due = row.state?.toString() === 'scheduled' ? Number(await admin.text('ZSCORE', `emq:{${j.queue}}:schedule`, id)) : undefined;
          model.addJob(j.queue, id, row.payload!, { group: row.group?.toString(), due });
        }
    },
  };
}

export type ProducerCase = JobsCase | BatchCase | GetCase | HookCase | FlowCase | OtherCase;
export function planProducer(c: ProducerCase): Plan {
  switch (c.t) {
    case 'jobs':
      return planJobs(c);
    case 'batch':
      return planBatch(c);
    case 'get':
      return planGet(c);
    case 'hook':
      return planHook(c);
    case 'flow':
      return planFlow(c);
    case 'other':
      return planOther(c);
  }
}
export const producerArb: fc.Arbitrary<ProducerCase> = fc.oneof(
  { weight: 4, arbitrary: jobsArb },
  { weight: 3, arbitrary: batchArb },
  { weight: 2, arbitrary: getArb },
  { weight: 4, arbitrary: hookArb },
  { weight: 2, arbitrary: flowArb },
  { weight: 1, arbitrary: otherArb },
);

// ---------------------------------------------------------------- the placement fuzz: lanes and the schedule

const okAuthArb = fc.constantFrom<AuthV>({ t: 'ok', who: 'all' }, { t: 'ok', who: 'all' }, { t: 'ok', who: 'some' });
const placeQueueArb = fc.constantFrom(...CLEAN_QUEUES, 'fz-a.lane', 'fz-a.lx', 'fz-b').map((seg) => ({ seg }));
/** A few pooled payloads: a reused Idempotency-Key then meets the same payload, and its lane decides. */
const pooledBodyArb = fc.oneof(
  { weight: 3, arbitrary: fc.nat(2).map((n) => ({ t: 'text' as const, text: `pooled ${n}` })) },
  { weight: 1, arbitrary: bodyArb(MAX_PAYLOAD) },
);
const placedJobsArb: fc.Arbitrary<JobsCase> = fc.record({
  t: fc.constant('jobs' as const),
  auth: okAuthArb,
  queue: placeQueueArb,
  id: fc.option(idArb, { nil: undefined, freq: 3 }),
  key: fc.option(fc.record({ t: fc.constant('pool' as const), n: fc.nat(4) }), { nil: undefined, freq: 2 }),
  contentType: fc.constant(undefined),
  body: pooledBodyArb,
  extra: fc.constant(undefined),
  place: placeArb,
});
const placedBatchArb: fc.Arbitrary<BatchCase> = fc.record({
  t: fc.constant('batch' as const),
  auth: okAuthArb,
  queue: placeQueueArb,
  doc: fc.array(placedItemArb, { minLength: 1, maxLength: 6 }).map((items) => ({ t: 'items' as const, items })),
  contentType: fc.constant(undefined),
  extra: fc.constant(undefined),
});
const placedGetArb: fc.Arbitrary<GetCase> = fc.record({
  t: fc.constant('get' as const),
  auth: okAuthArb,
  queue: placeQueueArb,
  id: fc.record({ t: fc.constant('known' as const), n: fc.nat(), alt: validId }),
  head: fc.constant(false),
  extra: fc.constant(undefined),
});
/** Authorized requests to clean queues, each carrying a placement (or a batch whose items do), and reads of what landed. */
export const placementArb: fc.Arbitrary<ProducerCase> = fc.oneof(
  { weight: 6, arbitrary: placedJobsArb },
  { weight: 3, arbitrary: placedBatchArb },
  { weight: 1, arbitrary: placedGetArb },
);

// ---------------------------------------------------------------- the bugs this fuzz found, replayed first on every run

const ok: AuthV = { t: 'ok', who: 'all' };
/** A POST …/jobs to fz-a.1, unplaced, with `over` laid on. */
const plainJob = (over: Partial<JobsCase>): ProducerCase => ({
  t: 'jobs',
  auth: ok,
  queue: { seg: 'fz-a.1' },
  id: undefined,
  key: undefined,
  contentType: undefined,
  body: { t: 'text', text: 'plain' },
  extra: undefined,
  place: {},
  ...over,
});
const hook = (over: Partial<HookCase>): HookCase => ({
  t: 'hook',
  source: { known: 'gh' },
  mutation: 'valid',
  secret: 0,
  body: { t: 'bytes', bytes: new Uint8Array([1, 2]) },
  stripe: 'event',
  jsonJunk: 'null',
  delivery: { t: 'fresh', value: 'regression' },
  event: undefined,
  skew: 0,
  junk: '',
  contentType: undefined,
  extra: undefined,
  ...over,
});
/** A POST …/jobs of `size` bytes under Idempotency-Key pool[n], in queue fz-a.1. */
const keyedJob = (n: number, size: number, fill: 'mixed' | 'ascii' | 'ff'): ProducerCase => ({
  t: 'jobs',
  auth: ok,
  queue: { seg: 'fz-a.1' },
  id: undefined,
  key: { t: 'pool', n },
  contentType: undefined,
  body: { t: 'sized', size, fill },
  extra: undefined,
  place: {},
});

export const PRODUCER_EXAMPLES: ProducerCase[] = [
  // an Idempotency-Key's payload went into the REST path (it was not @enqueue-once's last
  // argument): past 16 KiB the gateway answered 431 (a 502 here) or cut the reply (a 500);
  // then non-UTF-8 bytes past ~2.6 KB had no REST form (400) until the payload went last
  keyedJob(0, 6392, 'mixed'),
  keyedJob(1, 40_000, 'ascii'),
  keyedJob(2, 2_000, 'ff'),
  keyedJob(3, 40_000, 'ff'),
  // a webhook's envelope is @enqueue-once's payload too
  hook({ body: { t: 'sized', size: 40_000, fill: 'mixed' }, delivery: { t: 'fresh', value: 'regression-big' } }),
  hook({ source: { known: 'st' }, stripe: 'jsonJunk', jsonJunk: 'null' }),
  hook({ source: { known: 'sw' }, stripe: 'jsonJunk', jsonJunk: 'null', delivery: { t: 'fresh', value: 'regression-sw' } }),
  // each answer the property insists it saw, so that no seed can miss one
  plainJob({}),
  plainJob({ auth: { t: 'none' } }),
  plainJob({ id: { t: 'raw', value: 'JOB' } }),
  plainJob({ body: { t: 'sized', size: MAX_PAYLOAD + 1, fill: 'ascii' } }),
  {
    t: 'batch',
    auth: ok,
    queue: { seg: 'fz-a.1' },
    doc: { t: 'items', items: [{ t: 'text', payload: 'batched', id: undefined, place: {} }] },
    contentType: undefined,
    extra: undefined,
  },
];

/** A POST …/jobs to fz-a.1 with this placement. */
const placedJob = (place: PlaceV): ProducerCase => plainJob({ body: { t: 'text', text: 'pooled 0' }, place });
const repeated = { t: 'fresh' as const, id: 'JOB0KHTOWnGLuC' };
const text = (payload: string, id: IdV | undefined, place: PlaceV): ItemV => ({ t: 'text', payload, id, place });

/** The placement fuzz's findings, replayed first on every run. */
export const PLACEMENT_EXAMPLES: ProducerCase[] = [
  // Date.parse rolled a day past its month's end over (Feb 30 was scheduled for Mar 2), and
  // read hour 24 as the next midnight: both were 201 scheduled
  placedJob({ notBefore: { t: 'fixed', text: '2025-02-30T09:30:00.8Z' } }),
  placedJob({ notBefore: { t: 'fixed', text: '2025-02-29T09:30:00+01:00' } }),
  placedJob({ notBefore: { t: 'fixed', text: '2025-01-01T24:00:00Z' } }),
  // an id repeated in a batch in items of other kinds: the pipelines ran at once, and the
  // lane item landed first (enqueued) while the first, scheduled, item answered duplicate
  {
    t: 'batch',
    auth: ok,
    queue: { seg: 'fz-a.lx' },
    doc: {
      t: 'items',
      items: [
        text('first', repeated, { group: { t: 'pool', n: 0 }, delay: { t: 'unit', unit: 'm', n: 99, edge: 'n', zeros: 0 } }),
        text('second', { t: 'again', n: 0, alt: repeated.id }, {}),
        text('third', { t: 'again', n: 0, alt: repeated.id }, { group: { t: 'fresh', ns: 'WXA', s: 1n } }),
      ],
    },
    contentType: undefined,
    extra: undefined,
  },
  // one of each refusal the property insists on reaching, so that no seed misses one (a
  // clean-clone run of 60 drew no batch with a bad Emq-Delay)
  ...(
    [
      { delay: { t: 'raw', text: '5 minutes' } },
      { notBefore: { t: 'fixed', text: '2025-13-01T00:00:00Z' } },
      { group: { t: 'raw', text: 'not a group' } },
    ] satisfies PlaceV[]
  ).flatMap((place): ProducerCase[] => [
    placedJob(place),
    {
      t: 'batch',
      auth: ok,
      queue: { seg: 'fz-a.1' },
      doc: { t: 'items', items: [text('refused', undefined, place)] },
      contentType: undefined,
      extra: undefined,
    },
  ]),
];

// ---------------------------------------------------------------- the flows fuzz

/** Authorized flows to clean queues: valid ones of every kind, hostile ones, and flows sent again. */
export const flowsArb: fc.Arbitrary<ProducerCase> = fc.record({
  t: fc.constant('flow' as const),
  auth: okAuthArb,
  queue: fc.constantFrom('fz-a.1', 'fz-a.x_y', 'fz-b', 'fz-c', WT, 'fz-a.lane', 'fz-a.f1').map((seg) => ({ seg })),
  doc: flowDocArb,
  contentType: fc.constant(undefined),
  extra: fc.constant(undefined),
});

const flowCase = (seg: string, doc: FlowDocV, auth: AuthV = ok): ProducerCase => ({
  t: 'flow',
  auth,
  queue: { seg },
  doc,
  contentType: undefined,
  extra: undefined,
});
const flowOf = (seg: string, parent: FJobV, children: FChildV[], auth: AuthV = ok) => flowCase(seg, { t: 'flow', parent, children, top: 'none' }, auth);
const given = (id: string): IdV => ({ t: 'fresh', id });
const job = (pay: FPayV, id?: string): FJobV => ({ pay, id: id === undefined ? undefined : given(id), junk: 'none' });
const child = (pay: FPayV, queue: FQueueV = { t: 'none' }, id?: string, onFailure?: string): FChildV => ({ ...job(pay, id), queue, onFailure });
const utf8 = (s: string): FPayV => ({ t: 'text', s });
const binary = (...bytes: number[]): FPayV => ({ t: 'b64', bytes: Uint8Array.from(bytes) });
const resend = (alter: 'same' | 'parentPayload'): FlowDocV => ({ t: 'resend', n: 0, alter });

/** The flows fuzz's findings, replayed first on every run, then one flow of each outcome (so that every one is reached at any FUZZ_RUNS). */
export const FLOW_EXAMPLES: ProducerCase[] = [
  // a flow with a child in another queue and one in its own whose payload is not UTF-8: over
  // REST that child's call (its parent queue argument empty) went as JSON, after the parent
  // was held: 400 invalid_payload, the parent held for ever; sent again, the same
  flowOf('fz-a.f1', job(utf8('p'), 'JOB0KHTOWnGLuD'), [
    child(binary(0xff, 0), { t: 'none' }, 'JOB0KHTOWnGLuE'),
    child(utf8('c'), { t: 'clean', q: 'fz-b' }, 'JOB0KHTOWnGLuF', 'ignore'),
  ]),
  flowCase('fz-a.f1', resend('same')),
  flowCase('fz-a.f1', resend('parentPayload')),
  flowOf('fz-a.f2', job(utf8('q'), 'JOB0KHTOWnGLuG'), [
    child(binary(0xfe), { t: 'none' }, 'JOB0KHTOWnGLuH'),
    child(utf8('i'), { t: 'same' }, 'JOB0KHTOWnGLuI'),
  ]),
  flowCase('fz-a.f2', resend('same')),
  // a child id that names another job: in the parent's queue, in another; a pending set of another type
  flowOf('fz-a.f1', job(utf8('p')), [child(utf8('x')), child(utf8('y'), { t: 'none' }, 'JOB0KHTOWnGLuE')]),
  flowOf('fz-a.f1', job(utf8('p')), [child(utf8('a'), { t: 'clean', q: 'fz-b' }, 'JOB0KHTOWnGLuF')]),
  flowOf('fz-a.f1', job(utf8('p')), [child(utf8('a')), child(utf8('b'), { t: 'clean', q: WT })]),
  // a child queue the narrow token may not use; a body over EMQ_MAX_BATCH_BYTES
  flowOf('fz-a.f1', job(utf8('p')), [child(utf8('a')), child(utf8('b'), { t: 'clean', q: 'fz-c' })], { t: 'ok', who: 'some' }),
  flowCase('fz-a.f1', { t: 'huge', extra: 1 }),
  // past a request line: JSON, UTF-8 lands; a byte that is not lands too, as base64 arguments (it once refused the flow whole)
  flowCase('fz-a.f2', { t: 'many', n: JSON_CHILDREN, bin: 'none', at: 0, across: false }),
  flowCase('fz-a.f2', { t: 'many', n: JSON_CHILDREN, bin: 'child', at: 7, across: false }),
  // every payload not UTF-8, 1,000 children, in one queue and across two: over REST it was a
  // request per child (1,002 for the flow across queues); now a few, with base64 arguments
  flowCase('fz-a.f2', { t: 'many', n: FLOW_MAX_CHILDREN, bin: 'all', at: 0, across: false }),
  flowCase('fz-a.f2', { t: 'many', n: FLOW_MAX_CHILDREN, bin: 'all', at: 0, across: true }),
];
