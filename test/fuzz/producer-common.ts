// The producer fuzz's common parts: auth, queues, ids and Idempotency-Keys, the gates every
// /v1/queues route passes first, and the check of a job the model holds.
import fc from 'fast-check';
import { headerJunk, headersOf, hostileId, printable, validId, type Alter } from './arbitraries.js';
import { jk, model, type FlowRow } from './model.js';
import { QUEUE_RULE, checkRow, expectOf, param, trimHttp, violation, type Plan, type Req } from './oracle.js';
import type { Answer } from '../support/answer.js';
import { reach } from './placement.js';
import { CAN, TOKEN_OF, WT, admin, type Capability, type Who } from './setup.js';

// ---------------------------------------------------------------- the producer: auth, queues, ids

export type AuthV =
  | { t: 'ok'; who: Who }
  | { t: 'variant'; who: Who; scheme: string; sep: string; trail: string; alter: Alter }
  | { t: 'none' }
  | { t: 'raw'; value: string };
/** Auth headers: a token's (`ok` drawn from `whos`, `okWeight` in 15; altered ones from `altered`), none, or junk. */
export const authArbOf = (whos: readonly Who[], altered: readonly Who[], okWeight = 10): fc.Arbitrary<AuthV> =>
  fc.oneof(
    { weight: okWeight, arbitrary: fc.record({ t: fc.constant('ok' as const), who: fc.constantFrom<Who>(...whos) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant('variant' as const),
        who: fc.constantFrom<Who>(...altered),
        scheme: fc.constantFrom('bearer', 'BEARER', 'Bearer', 'Token', 'Basic', 'Bearer:', ''),
        sep: fc.constantFrom(' ', '  ', '\t', '', ' \t '),
        trail: fc.constantFrom('', ' ', '\t', ' x', ','),
        alter: fc.constantFrom<Alter>('none', 'none', 'append', 'chop', 'upper'),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ t: 'none' as const }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('raw' as const), value: printable }) },
  );
/** The enqueue-and-read tokens' (every endpoint but the control routes). */
export const authArb: fc.Arbitrary<AuthV> = authArbOf(['all', 'all', 'some'], ['all', 'some']);
/** The control routes': tokens with control (of every queue, of some) and without (enqueue and read, enqueue alone). */
export const ctlAuthArb: fc.Arbitrary<AuthV> = authArbOf(
  ['ctl', 'ctl', 'ctl', 'ctl', 'ctl', 'ctl', 'ctlsome', 'ctlsome', 'all', 'some', 'enq'],
  ['ctl', 'ctlsome'],
  30,
);

export const tokenOf = (who: Who) => TOKEN_OF[who];
export function authHeader(a: AuthV): string | undefined {
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
  return (Object.keys(TOKEN_OF) as Who[]).find((who) => TOKEN_OF[who] === token);
}
// fz-a.* is one segment under fz-a: fz-a.x, never fz-a.x.y (functions/producer/queue-patterns.ts);
// the tokens of every queue: all, ctl, enq
export const allows = (who: Who, q: string) => (who !== 'some' && who !== 'ctlsome') || /^fz-a\.[A-Za-z0-9_-]+$/.test(q) || q === 'fz-b';

export interface Seg {
  seg: string;
}
// fz-a.lane and fz-a.lx have default lanes (EMQ_QUEUE_GROUPS: the exact entry, a prefix)
export const CLEAN_QUEUES = ['fz-a.1', 'fz-a.x_y', 'fz-b', 'fz-c', WT, `fz-a.${'z'.repeat(123)}`, 'fz-a.lane', 'fz-a.lx', 'fz-a.1.2'];
export const segArb: fc.Arbitrary<Seg> = fc.oneof(
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

/** The control routes' queues: mostly the clean ones (where the jobs are), else any. */
export const ctlSegArb: fc.Arbitrary<Seg> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...CLEAN_QUEUES).map((seg) => ({ seg })) },
  { weight: 1, arbitrary: segArb },
);

export type IdV = { t: 'fresh'; id: string } | { t: 'known'; n: number; alt: string } | { t: 'raw'; value: string } | { t: 'again'; n: number; alt: string };
export const idArb: fc.Arbitrary<IdV> = fc.oneof(
  { weight: 3, arbitrary: validId.map((id) => ({ t: 'fresh' as const, id })) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('known' as const), n: fc.nat(), alt: validId }) },
  { weight: 2, arbitrary: hostileId.map((value) => ({ t: 'raw' as const, value })) },
);
/** An id: fresh, one the model knows (of this queue if it can), hostile, or (a batch item) one an earlier item of the batch sent. */
export function idOf(v: IdV, queue?: string, earlier: readonly string[] = []): string {
  if (v.t === 'fresh') return v.id;
  if (v.t === 'raw') return v.value;
  if (v.t === 'again') return earlier.length > 0 ? earlier[v.n % earlier.length]! : v.alt;
  const pool = queue === undefined ? model.known : model.known.filter((k) => k.queue === queue);
  const from = pool.length > 0 ? pool : model.known;
  return from.length > 0 ? from[v.n % from.length]!.id : v.alt;
}

export type KeyV = { t: 'pool'; n: number } | { t: 'raw'; value: string };
export const keyArb: fc.Arbitrary<KeyV> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('pool' as const), n: fc.nat(4) }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(printable, headerJunk, fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'k\tk', 'ключ', `k${'\u00ff'}`))
      .map((value) => ({ t: 'raw' as const, value })),
  },
);
export const keyOf = (k: KeyV) => (k.t === 'pool' ? `key-${k.n}` : k.value);

export const contentTypeArb = fc.option(
  fc.constantFrom('application/json', 'text/plain; charset=utf-8', 'application/octet-stream', 'multipart/form-data; boundary=x', 'x/y', ''),
  { nil: undefined },
);
export const extraHeaderArb = fc.option(
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

/** The producer's refusal for auth, the route's capability and the queue, before anything route-specific. */
export function gates(auth: string | undefined, seg: string, needs: Capability = 'enqueue'): { status: number; code: string } | { who: Who; q: string } {
  const who = callerOf(auth);
  if (!who) return { status: 401, code: 'unauthorized' };
  if (!CAN[who].includes(needs)) return { status: 403, code: 'forbidden_action' };
  const q = param(seg);
  if (!QUEUE_RULE.test(q)) return { status: 400, code: 'invalid_queue' };
  if (!allows(who, q)) return { status: 403, code: 'forbidden_queue' };
  return { who, q };
}

export const okAuthArb = fc.constantFrom<AuthV>({ t: 'ok', who: 'all' }, { t: 'ok', who: 'all' }, { t: 'ok', who: 'some' });
export const ok: AuthV = { t: 'ok', who: 'all' };

/** A row as a flow wrote it, exactly its fields; a child at score 0 in its queue's pending set, a parent in none with its count. */
export async function checkFlowRow(plan: { req: Req }, ans: Answer, q: string, id: string, row: FlowRow) {
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
export async function checkKnown(plan: { req: Req }, ans: Answer, q: string, id: string) {
  const row = model.flowRows.get(jk(q, id));
  if (row) return checkFlowRow(plan, ans, q, id, row);
  await checkRow(plan, ans, q, id, model.jobs.get(jk(q, id))!, expectOf(model.placeOf(q, id)));
}

/** A POST of `body` with the caller's Authorization and the case's Content-Type and extra header (batch, flows). */
export function postOf(path: string, auth: string | undefined, contentType: string | undefined, extra: [string, string] | undefined, body: Buffer): Req {
  return {
    method: 'POST',
    path,
    headers: headersOf(
      [
        ['Authorization', auth],
        ['Content-Type', contentType],
      ],
      extra,
    ),
    body,
  };
}

// ---------------------------------------------------------------- JSON bodies of the control routes

/**
 * A JSON body: an object written field by field (each value as JSON text, so a field may come
 * twice and a number keep its literal form: `1e3`, `-0`, `1e309`), raw text, or bytes (not UTF-8).
 */
export type JsonDoc = { t: 'fields'; fields: Array<[string, string]> } | { t: 'raw'; text: string } | { t: 'bytes'; bytes: Uint8Array };
export function docBytes(d: JsonDoc): Buffer {
  if (d.t === 'bytes') return Buffer.from(d.bytes);
  if (d.t === 'raw') return Buffer.from(d.text, 'utf8');
  return Buffer.from(`{${d.fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`, 'utf8');
}
/** Raw bodies every JSON route must refuse or read as the JSON they are. */
export const RAW_JSON = ['', '{', 'null', '[]', '"x"', '1', 'true', '{}', '{"a":1}x', '\ufeff{}', ' {} ', '[{}]', `${'['.repeat(500)}${']'.repeat(500)}`];
/** Not UTF-8: a JSON object with a byte 0xFF in a string, or a lone continuation byte. */
export const NOT_UTF8 = [Buffer.from('{"x":"\xff"}', 'latin1'), Buffer.from('{"a\x80":1}', 'latin1'), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d, 0xc0])];
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** The body as UTF-8 JSON (a BOM is a character JSON refuses), or undefined. */
export function readJson(body: Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(strictUtf8.decode(body)) };
  } catch {
    return undefined;
  }
}
/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A request with the caller's Authorization, and a JSON body when it has one (a PUT's). */
export function jsonReq(method: string, path: string, auth: string | undefined, extra: [string, string] | undefined, body?: Buffer): Req {
  const type = body === undefined ? undefined : 'application/json';
  return {
    method,
    path,
    headers: headersOf(
      [
        ['Authorization', auth],
        ['Content-Type', type],
      ],
      extra,
    ),
    ...(body === undefined ? {} : { body }),
  };
}
/** A plan's request and tally label. */
export type Base = { label: string; req: Req; service: 'producer' };
/** A refusal: its status and code, decided before Valkey (or, `valkey`, by it), nothing written. */
export const refuse = (base: Base, status: number, code: string, valkey = false): Plan => ({ ...base, status, code, valkey, writes: () => false });
/** The route's gates, in order (auth, capability, queue): the caller and queue, or the refusal's plan. */
export function gated(base: Base, auth: string | undefined, seg: string, needs: Capability): { plan: Plan } | { who: Who; q: string } {
  const g = gates(auth, seg, needs);
  if (!('status' in g)) return g;
  if (g.code === 'forbidden_action') reach(`control 403 forbidden_action (${needs})`);
  return { plan: refuse(base, g.status, g.code) };
}
/** A plan Valkey's state answers with `status`: whether it writes, and the 2xx's check against Valkey (which tells the model). */
export const answered = (
  base: { label: string; req: Req; service: 'producer' },
  status: number,
  writes: boolean | 'maybe',
  check: NonNullable<Plan['check']>,
): Plan => ({
  ...base,
  status,
  valkey: true,
  writes: () => writes,
  check,
});
