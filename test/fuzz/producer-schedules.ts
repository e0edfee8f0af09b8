// The producer fuzz: the library's repeatables over HTTP (issue 26, docs/api.md "The library's
// repeatables"): PUT, GET and DELETE …/schedules/:name, GET …/schedules, POST …/pause,
// …/resume and …/run-now. Names, periods and bodies valid and hostile; each plan predicts from
// the model of the registry (every registration's period, template and exact score), and every
// 2xx is checked against Valkey's registry and record.
import fc from 'fast-check';
import { jk, model, type Repeatable } from './model.js';
import { B64_RULE, intact, param, violation, type Plan } from './oracle.js';
import { delayRule, reach } from './placement.js';
import { MAX_PAYLOAD, admin, type Capability } from './setup.js';
import { sameJson } from './producer-get.js';
import { countArb } from './producer-control.js';
import {
  type AuthV,
  type JsonDoc,
  type Seg,
  NOT_UTF8,
  RAW_JSON,
  authHeader,
  ctlAuthArb,
  docBytes,
  extraHeaderArb,
  isObject,
  readJson,
  ctlSegArb,
  answered,
  gated,
  jsonReq,
  refuse,
  type Base,
} from './producer-common.js';

/** A paused registration's score: this plus its next run (docs/api.md). */
const PAUSED = 1e15;
/** PUT's body cap: a template base64'd, and room for the rest. */
const BODY_CAP = Math.ceil((MAX_PAYLOAD * 4) / 3) + 1_024;
const NAME_RULE = /^[A-Za-z0-9._-]{1,255}$/;

// ---------------------------------------------------------------- the values sent

/** Names the fuzz reuses (registered, then read, moved, cancelled, registered again). */
const NAME_POOL = ['daily', 'a', 'x.y_z-1', 'N'.repeat(255), '0', '-', '_.', 'a..b'];
export type NameV = { t: 'pool'; n: number } | { t: 'held'; n: number } | { t: 'text'; text: string } | { t: 'seg'; seg: string };
export const nameArb: fc.Arbitrary<NameV> = fc.oneof(
  { weight: 6, arbitrary: fc.nat().map((n) => ({ t: 'held' as const, n })) },
  { weight: 8, arbitrary: fc.nat(NAME_POOL.length - 1).map((n) => ({ t: 'pool' as const, n })) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/).map((text) => ({ t: 'text' as const, text })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom('N'.repeat(256), 'a:b', '{a}', 'daily{x}', 'é', 'a b', 'a/b', '١٢', 'ﬀ', 'a\u0000', 'daily\n', '*', 'a%b', ' daily', 'DAILY\u0301'),
        fc.string({ unit: 'grapheme', maxLength: 10 }),
      )
      .map((text) => ({ t: 'text' as const, text })),
  },
  { weight: 1, arbitrary: fc.constantFrom('%', '%ZZ', '%2F', 'daily%2e', '%64aily', '%E2%82').map((seg) => ({ t: 'seg' as const, seg })) },
);
/** A registration the model holds in the queue (`held`; else a pooled name), a pooled name, any other, or a raw segment. */
function nameSeg(v: NameV, queue: string): string {
  if (v.t === 'seg') return v.seg;
  if (v.t === 'text') return encodeURIComponent(v.text);
  const held = [...model.repeats.keys()].filter((k) => k.startsWith(`${queue} `));
  const name = v.t === 'held' && held.length > 0 ? held[v.n % held.length]!.slice(queue.length + 1) : NAME_POOL[v.n % NAME_POOL.length]!;
  return encodeURIComponent(name);
}

/** A duration as JSON text: admission's syntax, mostly from a small pool (so that a PUT meets its own registration again). */
const durationValue = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('1h', '5m', '1h', '30d', '1ms', '0s').map((d) => JSON.stringify(d)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(100_000), fc.constantFrom('ms', 's', 'm', 'h', 'd')).map(([n, u]) => JSON.stringify(`${n}${u}`)) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('-1m', '1.5h', '999999999d', '', '١٠s', '31d', '1h ', '2592000001ms', 'PT1H', '１h', '1H', '01h', '1e3ms', '9007199254740993ms')
      .map((d) => JSON.stringify(d)),
  },
  { weight: 1, arbitrary: fc.constantFrom('3600000', 'null', 'true', '["1h"]', '{}') },
);
/** A template as JSON text: a few pooled payloads (the same template again), others, and hostile ones. */
const payloadValue = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('tick', 'tock', '', 'ünïcødé ✓').map((p) => JSON.stringify(p)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((p) => JSON.stringify(p)) },
  { weight: 1, arbitrary: fc.constantFrom('"\\ud800"', '"a\\udc00b"', '1', 'null', '{"a":1}', '["tick"]') },
  { weight: 1, arbitrary: fc.constantFrom(MAX_PAYLOAD, MAX_PAYLOAD + 1, BODY_CAP + 1).map((n) => JSON.stringify('p'.repeat(n))) },
);
const b64Value = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('dGljaw==', '/w==', '', 'AAEC').map((p) => JSON.stringify(p)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => JSON.stringify(Buffer.from(b).toString('base64'))) },
  { weight: 1, arbitrary: fc.constantFrom('"abc"', '"===="', '"YQ"', '"dGljaw"', '"dGl jaw=="', '"dGljaw==\\n"', '"-_8="', '5', 'null') },
  { weight: 1, arbitrary: fc.constantFrom(MAX_PAYLOAD, MAX_PAYLOAD + 1).map((n) => JSON.stringify(Buffer.alloc(n, 0xff).toString('base64'))) },
);
const schedField: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(fc.constant('firstIn'), durationValue) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('name', 'Every', 'first_in', 'template', '__proto__', 'group'), durationValue) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('payloadBase64'), b64Value) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('payload'), payloadValue) },
);
/** Mostly {every, payload | payloadBase64, firstIn?} (a field may come twice, or be missing), else other fields, raw text, bytes. */
export const schedDocArb: fc.Arbitrary<JsonDoc> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .tuple(
        fc.option(durationValue, { nil: undefined, freq: 12 }),
        fc.oneof(
          { weight: 3, arbitrary: fc.tuple(fc.constant('payload'), payloadValue) },
          { weight: 1, arbitrary: fc.tuple(fc.constant('payloadBase64'), b64Value) },
        ),
        fc.option(schedField, { nil: undefined, freq: 3 }),
      )
      .map(([every, template, more]) => ({
        t: 'fields' as const,
        fields: [...(every === undefined ? [] : [['every', every] as [string, string]]), template, ...(more === undefined ? [] : [more])],
      })),
  },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_JSON).map((text) => ({ t: 'raw' as const, text })) },
  { weight: 1, arbitrary: fc.constantFrom(...NOT_UTF8).map((bytes) => ({ t: 'bytes' as const, bytes })) },
);

const cursorArb = fc.oneof(
  fc.constantFrom(
    '0',
    '00',
    '1',
    '7',
    '18446744073709551615',
    '18446744073709551616',
    '99999999999999999999',
    '100000000000000000000',
    '-1',
    'abc',
    '',
    ' 0',
    '٠',
  ),
  fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }).map(String),
);

export type SchedVerb = 'put' | 'get' | 'delete' | 'list' | 'pause' | 'resume' | 'run-now';
export interface SchedCase {
  t: 'sched';
  verb: SchedVerb;
  auth: AuthV;
  queue: Seg;
  name: NameV;
  body: JsonDoc;
  count: string | undefined;
  cursor: string | undefined;
  /** GET one with ?payload=1. */
  template: boolean;
  extra: [string, string] | undefined;
}
export const schedArb: fc.Arbitrary<SchedCase> = fc.record({
  t: fc.constant('sched' as const),
  verb: fc.constantFrom<SchedVerb>('put', 'put', 'put', 'put', 'get', 'get', 'delete', 'list', 'pause', 'resume', 'run-now'),
  auth: ctlAuthArb,
  queue: ctlSegArb,
  name: nameArb,
  body: schedDocArb,
  count: fc.option(countArb, { nil: undefined, freq: 2 }),
  cursor: fc.option(cursorArb, { nil: undefined, freq: 2 }),
  template: fc.boolean(),
  extra: extraHeaderArb,
});

// ---------------------------------------------------------------- the rules, from the docs

/** A duration field: admission's syntax (digits and a unit), from `least` ms to EMQ_MAX_DELAY. */
const durationRule = (v: unknown, least: number) => {
  if (typeof v !== 'string') return undefined;
  const ms = delayRule(v);
  return ms === undefined || ms < least ? undefined : ms;
};

/** PUT's body: {every, payload | payloadBase64, firstIn?}, nothing else; the template's bytes at most EMQ_MAX_PAYLOAD_BYTES. */
function registrationRule(body: Uint8Array): { everyMs: number; firstInMs: number; template: Buffer } | { refused: 400 | 413 } {
  if (body.length > BODY_CAP) return { refused: 413 };
  const v = readJson(body)?.value;
  if (!isObject(v)) return { refused: 400 };
  if (Object.keys(v).some((k) => k !== 'every' && k !== 'payload' && k !== 'payloadBase64' && k !== 'firstIn')) return { refused: 400 };
  const everyMs = durationRule(v.every, 1);
  const firstInMs = v.firstIn === undefined ? 0 : durationRule(v.firstIn, 0);
  if (everyMs === undefined || firstInMs === undefined) return { refused: 400 };
  let template: Buffer;
  if (typeof v.payload === 'string' && v.payloadBase64 === undefined) {
    if (!v.payload.isWellFormed()) return { refused: 400 };
    template = Buffer.from(v.payload, 'utf8');
  } else if (typeof v.payloadBase64 === 'string' && v.payload === undefined && B64_RULE.test(v.payloadBase64)) {
    template = Buffer.from(v.payloadBase64, 'base64');
  } else return { refused: 400 };
  return template.length > MAX_PAYLOAD ? { refused: 413 } : { everyMs, firstInMs, template };
}

// ---------------------------------------------------------------- the plans

const PATTERN: Record<SchedVerb, [string, string, Capability]> = {
  put: ['PUT', '', 'control'],
  get: ['GET', '', 'read'],
  delete: ['DELETE', '', 'control'],
  list: ['GET', '', 'read'],
  pause: ['POST', '/pause', 'control'],
  resume: ['POST', '/resume', 'control'],
  'run-now': ['POST', '/run-now', 'control'],
};

/** A registration as the routes show it (its template only when asked). */
const shown = (q: string, name: string, r: Repeatable) => ({ queue: q, name, everyMs: r.everyMs, nextRunAt: r.paused ? null : r.next, paused: r.paused });

export function planSched(c: SchedCase): Plan {
  const [method, tail, needs] = PATTERN[c.verb];
  const seg = nameSeg(c.name, param(c.queue.seg));
  const query =
    c.verb === 'list'
      ? [c.count === undefined ? '' : `count=${encodeURIComponent(c.count)}`, c.cursor === undefined ? '' : `cursor=${encodeURIComponent(c.cursor)}`]
          .filter(Boolean)
          .join('&')
      : c.verb === 'get' && c.template
        ? 'payload=1'
        : '';
  const path = `/v1/queues/${c.queue.seg}/schedules${c.verb === 'list' ? '' : `/${seg}${tail}`}${query === '' ? '' : `?${query}`}`;
  const auth = authHeader(c.auth);
  const body = docBytes(c.body);
  const req = jsonReq(method, path, auth, c.extra, c.verb === 'put' ? body : undefined);
  const base: Base = {
    label: `producer ${method} /v1/queues/:queue/schedules${c.verb === 'list' ? '' : `/:name${tail}`}`,
    req,
    service: 'producer',
  };
  if (!intact(path) || c.queue.seg === '' || (c.verb !== 'list' && seg === '')) return { ...base, valkey: undefined, writes: () => false };
  const g = gated(base, auth, c.queue.seg, needs);
  if ('plan' in g) return g.plan;
  const { q } = g;
  if (c.verb === 'list') return planList(base, q, c.count, c.cursor);
  const name = param(seg);
  if (!NAME_RULE.test(name)) {
    reach(`schedules 400 invalid_name (${c.verb})`);
    return refuse(base, 400, 'invalid_name');
  }
  const held = model.repeats.get(jk(q, name));
  if (c.verb === 'put') return planPut(base, q, name, body, held);
  if (!held) return refuse(base, 404, 'not_found', true);
  if (c.verb === 'get') {
    return answered(base, 200, false, async (ans) => {
      const t = held.template;
      const utf8 = Buffer.from(t.toString('utf8'), 'utf8').equals(t);
      const want = { ...shown(q, name, held), ...(c.template ? (utf8 ? { payload: t.toString('utf8') } : { payloadBase64: t.toString('base64') }) : {}) };
      if (!sameJson(ans.json, want)) violation(base, ans, `expected ${JSON.stringify(want).slice(0, 400)}`);
      reach(`schedules 200 read${c.template ? ', with its template' : ''}${held.paused ? ', paused' : ''}`);
    });
  }
  if (c.verb === 'delete') {
    return answered(base, 200, true, async (ans) => {
      if (!sameJson(ans.json, { queue: q, name, verdict: 'cancelled' })) violation(base, ans, 'expected {queue, name, verdict: cancelled}');
      const [score, record] = await Promise.all([admin.text('ZSCORE', `emq:{${q}}:repeat`, name), admin.call('EXISTS', `emq:{${q}}:repeat:${name}`)]);
      if (score != null || Number(record) !== 0) violation(base, ans, `schedule ${name} of ${q} is still there`);
      model.repeats.delete(jk(q, name));
      reach('schedules 200 cancelled');
    });
  }
  return planMove(base, q, name, c.verb, held);
}

function planPut(base: Base, q: string, name: string, body: Buffer, held: Repeatable | undefined): Plan {
  const sent = Date.now();
  const r = registrationRule(body);
  if ('refused' in r) {
    reach(`schedules ${r.refused} ${r.refused === 400 ? 'invalid_body' : 'payload_too_large'}`);
    return refuse(base, r.refused, r.refused === 400 ? 'invalid_body' : 'payload_too_large');
  }
  if (held && (held.everyMs !== r.everyMs || !held.template.equals(r.template))) {
    reach('schedules 409 schedule_exists');
    return refuse(base, 409, 'schedule_exists', true);
  }
  const verdict = held ? 'exists' : 'registered';
  return answered(base, held ? 200 : 201, !held, async (ans) => {
    const done = Date.now();
    if (!sameJson(ans.json, { queue: q, name, verdict })) violation(base, ans, `expected {queue, name, verdict: ${verdict}}`);
    reach(`schedules ${held ? '200 exists' : '201 registered'}`);
    if (held) return;
    // the library's record and registry member: its period and template exactly, first due firstIn from the producer's clock
    const [score, record] = await Promise.all([admin.text('ZSCORE', `emq:{${q}}:repeat`, name), admin.hgetall(`emq:{${q}}:repeat:${name}`)]);
    const next = Number(score);
    if (score == null || next < sent + r.firstInMs || next > done + r.firstInMs)
      violation(base, ans, `its score ${score} is not in [${sent + r.firstInMs}, ${done + r.firstInMs}]`);
    if (record.every_ms?.toString() !== String(r.everyMs) || !record.template?.equals(r.template))
      violation(base, ans, `its record is not {every_ms: ${r.everyMs}, template: the ${r.template.length} bytes sent}`);
    model.repeats.set(jk(q, name), { everyMs: r.everyMs, template: r.template, next, paused: false });
  });
}

/** Where resume puts a paused registration at `now`: its next run when still ahead, else the first run of its period's grid at or after now. */
const resumedAt = (r: Repeatable, now: number) => (r.next >= now ? r.next : r.next + Math.ceil((now - r.next) / r.everyMs) * r.everyMs);

function planMove(base: Base, q: string, name: string, verb: 'pause' | 'resume' | 'run-now', held: Repeatable): Plan {
  const sent = Date.now();
  // pause and resume of one already so write nothing; run-now scores now (the same ms again: nothing)
  const writes = verb === 'pause' ? !held.paused : verb === 'resume' ? held.paused : 'maybe';
  return answered(base, 200, writes, async (ans) => {
    const done = Date.now();
    const got = ans.json as { nextRunAt?: unknown } | undefined;
    const next = got?.nextRunAt;
    let after: Repeatable;
    if (verb === 'pause') after = { ...held, paused: true };
    else if (verb === 'resume' && !held.paused) after = held;
    else {
      const [lo, hi] = verb === 'resume' ? [resumedAt(held, sent), resumedAt(held, done)] : [sent, done];
      if (typeof next !== 'number' || next < lo || next > hi) violation(base, ans, `nextRunAt is not in [${lo}, ${hi}]`);
      after = { ...held, next: next as number, paused: false };
    }
    if (!sameJson(ans.json, shown(q, name, after))) violation(base, ans, `expected ${JSON.stringify(shown(q, name, after))}`);
    // the score is all the Pump reads: paused, parked far ahead
    const score = Number(await admin.text('ZSCORE', `emq:{${q}}:repeat`, name));
    if (score !== (after.paused ? PAUSED + after.next : after.next)) violation(base, ans, `its score is ${score}`);
    model.repeats.set(jk(q, name), after);
    reach(`schedules 200 ${verb}${verb !== 'run-now' && held.paused === (verb === 'pause') ? ' again' : ''}`);
  });
}

function planList(base: Base, q: string, count: string | undefined, cursor: string | undefined): Plan {
  if (count !== undefined && !(/^[1-9][0-9]{0,3}$/.test(count) && Number(count) <= 1000)) {
    reach('schedules 400 invalid_query (count)');
    return refuse(base, 400, 'invalid_query');
  }
  // a cursor: ZSCAN's, an unsigned 64-bit number
  if (cursor !== undefined && !(/^[0-9]{1,20}$/.test(cursor) && BigInt(cursor) < 2n ** 64n)) {
    reach('schedules 400 invalid_query (cursor)');
    return refuse(base, 400, 'invalid_query');
  }
  // a cursor no page answered: the walk from there (any page of these names)
  const started = cursor === undefined || /^0+$/.test(cursor);
  return answered(base, 200, false, async (ans) => {
    const j = ans.json as { queue?: unknown; schedules?: unknown; cursor?: unknown };
    const views = Array.isArray(j?.schedules) ? (j.schedules as Array<{ name?: unknown }>) : undefined;
    if (!isObject(j) || j.queue !== q || !views || Object.keys(j).some((k) => k !== 'queue' && k !== 'schedules' && k !== 'cursor'))
      violation(base, ans, 'expected {queue, schedules, cursor?}');
    if (j.cursor !== undefined && (typeof j.cursor !== 'string' || !/^[1-9][0-9]{0,19}$/.test(j.cursor)))
      violation(base, ans, 'a cursor that is not 1 to 20 digits');
    for (const v of views) {
      const r = typeof v.name === 'string' ? model.repeats.get(jk(q, v.name)) : undefined;
      if (!r || !sameJson(v, shown(q, v.name as string, r))) violation(base, ans, `a registration the model does not hold: ${JSON.stringify(v)}`);
    }
    const names = views.map((v) => v.name as string);
    if ([...names].sort().join('\n') !== names.join('\n')) violation(base, ans, 'a page not sorted by name');
    // a whole walk in one page: every registration
    const mine = [...model.repeats.keys()].filter((k) => k.startsWith(`${q} `)).map((k) => k.slice(q.length + 1));
    if (started && j.cursor === undefined && (mine.length !== names.length || mine.some((n) => !names.includes(n))))
      violation(base, ans, `expected every registration of ${q}: ${mine.length}`);
    reach(`schedules 200 listed${names.length > 0 ? '' : ', none'}${started ? '' : ', from a cursor'}`);
  });
}
