// The producer fuzz: POST /v1/queues/:queue/batch, its cases, a reference reading of its body, and its plan.
import fc from 'fast-check';
import { bytesOf, hostileId, printable, validId } from './arbitraries.js';
import { jk, model, type Place } from './model.js';
import { ID_RULE, B64_RULE, checkRow, expectOf, intact, param, violation, type Plan } from './oracle.js';
import type { Answer } from '../support/answer.js';
import { goodPlaceArb, landing, laneOf, placeArb, placeRule, placeValues, reach, type Placed, type PlaceV } from './placement.js';
import { MAX_BATCH, MAX_ITEMS, MAX_PAYLOAD, WT } from './setup.js';
import {
  type AuthV,
  type IdV,
  type Seg,
  authArb,
  authHeader,
  checkKnown,
  contentTypeArb,
  extraHeaderArb,
  gates,
  idArb,
  idOf,
  segArb,
  postOf,
} from './producer-common.js';
import { kindOf } from './producer-jobs.js';

// ---------------------------------------------------------------- producer: POST /v1/queues/:queue/batch

export type ItemV =
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
export const placedItemArb: fc.Arbitrary<ItemV> = fc.oneof(
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

export interface BatchCase {
  t: 'batch';
  auth: AuthV;
  queue: Seg;
  doc: DocV;
  contentType: string | undefined;
  extra: [string, string] | undefined;
}
export const batchArb: fc.Arbitrary<BatchCase> = fc.record({
  t: fc.constant('batch' as const),
  auth: authArb,
  queue: segArb,
  doc: docArb,
  contentType: contentTypeArb,
  extra: extraHeaderArb,
});

export function planBatch(c: BatchCase): Plan {
  const path = `/v1/queues/${c.queue.seg}/batch`;
  const auth = authHeader(c.auth);
  const sent = Date.now();
  const body = docBytes(c.doc, param(c.queue.seg), sent);
  const req = postOf(path, auth, c.contentType, c.extra, body);
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
