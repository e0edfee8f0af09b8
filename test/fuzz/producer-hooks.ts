// The producer fuzz: POST /v1/webhooks/:source, signed and hostile deliveries, and their plan.
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { bodyArb, bytesOf, headersOf, printable, type Body } from './arbitraries.js';
import { jk, model, sha256 } from './model.js';
import { checkRow, intact, trimHttp, violation, type Plan, type Req } from './oracle.js';
import { MAX_PAYLOAD, SOURCES, SOURCE_NAMES, STD_NEW, STD_OLD, TOLERANCE, WT, admin, type SourceName } from './setup.js';
import { contentTypeArb, extraHeaderArb } from './producer-common.js';

// ---------------------------------------------------------------- producer: POST /v1/webhooks/:source

type Mutation = 'valid' | 'tamperBody' | 'tamperSig' | 'wrongSecret' | 'noSig' | 'junkSig' | 'stale' | 'future' | 'extraSigs' | 'flood';
export interface HookCase {
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
export const hookArb: fc.Arbitrary<HookCase> = fc.record({
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

export function planHook(c: HookCase): Plan {
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
