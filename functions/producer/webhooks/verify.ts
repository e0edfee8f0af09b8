// Verifying a delivery: HMAC-SHA256 with Web Crypto over the raw body bytes (crypto.subtle.verify
// compares in constant time), for each configured secret, so a rotating pair both verify.
// Each scheme yields the delivery's stable id and its event type, or a typed refusal.
import type { Source } from './sources.js';
import { fromBase64 } from '../../../shared/base64.js';

export type Refusal = { status: 400 | 401; code: 'invalid_signature' | 'stale_timestamp' | 'invalid_delivery'; detail: string };

export interface Delivery {
  id: string;
  event: string;
}

const utf8 = new TextEncoder();

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function fromHex(text: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text)) return undefined;
  return Uint8Array.from(text.match(/../g)!, (h) => parseInt(h, 16));
}


// (the casts: some lib typings give TextEncoder's output an ArrayBufferLike; it is an ArrayBuffer)
type Bytes = Uint8Array<ArrayBuffer>;

async function hmacKey(secret: Uint8Array) {
  return crypto.subtle.importKey('raw', secret as Bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

/** Whether any signature verifies the data under any secret; every pair is tried. */
async function anyVerifies(secrets: Uint8Array[], signatures: Uint8Array[], data: Uint8Array): Promise<boolean> {
  let ok = false;
  for (const secret of secrets) {
    const key = await hmacKey(secret);
    for (const sig of signatures) if (await crypto.subtle.verify('HMAC', key, sig as Bytes, data as Bytes)) ok = true;
  }
  return ok;
}

const badSignature = (detail: string): Refusal => ({ status: 401, code: 'invalid_signature', detail });

function checkTime(seconds: number, source: Source, now: number): Refusal | undefined {
  if (!Number.isFinite(seconds)) return badSignature('the signature\'s timestamp is missing or not a number');
  const skew = now / 1000 - seconds;
  if (Math.abs(skew) > source.toleranceSeconds) {
    return {
      status: 401,
      code: 'stale_timestamp',
      detail: `the delivery is signed ${Math.round(Math.abs(skew))} s in the ${skew > 0 ? 'past' : 'future'}; the tolerance is ${source.toleranceSeconds} s`,
    };
  }
  return undefined;
}

export async function verify(source: Source, headers: Headers, body: Uint8Array, now = Date.now()): Promise<Delivery | Refusal> {
  switch (source.kind) {
    case 'github': {
      const header = headers.get('X-Hub-Signature-256') ?? '';
      const sig = fromHex(header.replace(/^sha256=/, ''));
      if (!header.startsWith('sha256=') || !sig) return badSignature('X-Hub-Signature-256 is missing or not sha256=<hex>');
      if (!(await anyVerifies(source.secrets.map((s) => utf8.encode(s)), [sig], body))) return badSignature('X-Hub-Signature-256 does not match the body');
      const id = headers.get('X-GitHub-Delivery');
      if (!id) return { status: 400, code: 'invalid_delivery', detail: 'X-GitHub-Delivery is missing' };
      return { id, event: headers.get('X-GitHub-Event') ?? '' };
    }
    case 'stripe': {
      const parts = (headers.get('Stripe-Signature') ?? '').split(',').map((p) => p.trim().split('='));
      const t = parts.find(([k]) => k === 't')?.[1];
      const sigs = parts.filter(([k]) => k === 'v1').map(([, v]) => fromHex(v ?? '')).filter((s) => s !== undefined);
      if (!t || sigs.length === 0) return badSignature('Stripe-Signature is missing t= or v1=');
      const late = checkTime(Number(t), source, now);
      // the signature first: an unsigned timestamp proves nothing
      const signed = concat(utf8.encode(`${t}.`), body);
      if (!(await anyVerifies(source.secrets.map((s) => utf8.encode(s)), sigs, signed))) return badSignature('Stripe-Signature does not match the body');
      if (late) return late;
      let event: { id?: unknown; type?: unknown } | null;
      try {
        event = JSON.parse(new TextDecoder().decode(body)) as typeof event;
      } catch {
        return { status: 400, code: 'invalid_delivery', detail: 'a Stripe event body must be JSON' };
      }
      // `null` is JSON too: no event, no id
      if (typeof event?.id !== 'string' || !event.id) return { status: 400, code: 'invalid_delivery', detail: 'the Stripe event has no id' };
      return { id: event.id, event: typeof event.type === 'string' ? event.type : '' };
    }
    case 'standard': {
      const id = headers.get('webhook-id');
      const ts = headers.get('webhook-timestamp');
      const sigs = (headers.get('webhook-signature') ?? '')
        .split(' ')
        .filter((s) => s.startsWith('v1,'))
        .map((s) => fromBase64(s.slice(3)))
        .filter((s) => s !== undefined);
      if (!id || !ts || sigs.length === 0) return badSignature('webhook-id, webhook-timestamp and a v1 webhook-signature are required');
      const late = checkTime(Number(ts), source, now);
      const secrets = source.secrets.map((s) => fromBase64(s.replace(/^whsec_/, '')) ?? utf8.encode(s));
      const signed = concat(utf8.encode(`${id}.${ts}.`), body);
      if (!(await anyVerifies(secrets, sigs, signed))) return badSignature('webhook-signature does not match the body');
      if (late) return late;
      let type = '';
      try {
        const parsed = JSON.parse(new TextDecoder().decode(body)) as { type?: unknown };
        if (typeof parsed.type === 'string') type = parsed.type;
      } catch {
        // the event type is optional metadata; the body stays what it is
      }
      return { id, event: type };
    }
    case 'hmac': {
      const header = headers.get(source.signatureHeader!) ?? '';
      const prefix = source.signaturePrefix ?? '';
      const text = header.startsWith(prefix) ? header.slice(prefix.length) : '';
      const sig = source.encoding === 'hex' ? fromHex(text) : fromBase64(text);
      if (!sig) return badSignature(`${source.signatureHeader} is missing or not ${prefix}<${source.encoding}>`);
      if (!(await anyVerifies(source.secrets.map((s) => utf8.encode(s)), [sig], body))) return badSignature(`${source.signatureHeader} does not match the body`);
      const id = headers.get(source.idHeader!);
      if (!id) return { status: 400, code: 'invalid_delivery', detail: `${source.idHeader} (the delivery id) is missing` };
      return { id, event: source.eventHeader ? (headers.get(source.eventHeader) ?? '') : '' };
    }
  }
}
