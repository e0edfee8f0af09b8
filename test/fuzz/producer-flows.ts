// The producer fuzz: POST /v1/queues/:queue/flows, a reference reading of its body, its cases
// and plan, and the flows fuzz's own arbitrary and replayed examples.
import fc from 'fast-check';
import { bytesOf, hostileId, printable, validId } from './arbitraries.js';
import { jk, model, type FlowRow } from './model.js';
import { ID_RULE, QUEUE_RULE, B64_RULE, intact, isUtf8, param, violation, type Plan, type Req } from './oracle.js';
import type { Answer } from '../support/answer.js';
import { reach } from './placement.js';
import { MAX_BATCH, MAX_PAYLOAD, WT, admin } from './setup.js';
import {
  type AuthV,
  type IdV,
  type Seg,
  allows,
  authArb,
  authHeader,
  checkFlowRow,
  contentTypeArb,
  extraHeaderArb,
  gates,
  idOf,
  ok,
  okAuthArb,
  segArb,
  tokenOf,
  postOf,
} from './producer-common.js';

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

export interface FlowCase {
  t: 'flow';
  auth: AuthV;
  queue: Seg;
  doc: FlowDocV;
  contentType: string | undefined;
  extra: [string, string] | undefined;
}
const FLOWS = 'producer POST /v1/queues/:queue/flows';
export const flowArb: fc.Arbitrary<FlowCase> = fc.record({
  t: fc.constant('flow' as const),
  auth: authArb,
  queue: segArb,
  doc: flowDocArb,
  contentType: contentTypeArb,
  extra: extraHeaderArb,
});

export function planFlow(c: FlowCase): Plan {
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
  const req = postOf(path, auth, c.contentType, c.extra, body);
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

// ---------------------------------------------------------------- the flows fuzz

/** Authorized flows to clean queues: valid ones of every kind, hostile ones, and flows sent again. */
export const flowsArb: fc.Arbitrary<FlowCase> = fc.record({
  t: fc.constant('flow' as const),
  auth: okAuthArb,
  queue: fc.constantFrom('fz-a.1', 'fz-a.x_y', 'fz-b', 'fz-c', WT, 'fz-a.lane', 'fz-a.f1').map((seg) => ({ seg })),
  doc: flowDocArb,
  contentType: fc.constant(undefined),
  extra: fc.constant(undefined),
});

const flowCase = (seg: string, doc: FlowDocV, auth: AuthV = ok): FlowCase => ({
  t: 'flow',
  auth,
  queue: { seg },
  doc,
  contentType: undefined,
  extra: undefined,
});
const flowOf = (seg: string, parent: FJobV, children: FChildV[], auth: AuthV = ok) => flowCase(seg, { t: 'flow', parent, children, top: 'none' }, auth);
const given = (id: string): IdV => ({ t: 'fresh', id });
export const job = (pay: FPayV, id?: string): FJobV => ({ pay, id: id === undefined ? undefined : given(id), junk: 'none' });
const child = (pay: FPayV, queue: FQueueV = { t: 'none' }, id?: string, onFailure?: string): FChildV => ({ ...job(pay, id), queue, onFailure });
const utf8 = (s: string): FPayV => ({ t: 'text', s });
const binary = (...bytes: number[]): FPayV => ({ t: 'b64', bytes: Uint8Array.from(bytes) });
const resend = (alter: 'same' | 'parentPayload'): FlowDocV => ({ t: 'resend', n: 0, alter });

/** The flows fuzz's findings, replayed first on every run, then one flow of each outcome (so that every one is reached at any FUZZ_RUNS). */
export const FLOW_EXAMPLES: FlowCase[] = [
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
