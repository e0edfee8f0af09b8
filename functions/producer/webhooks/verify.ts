// Verifying a delivery: HMAC-SHA256 with Web Crypto over the raw body bytes (crypto.subtle.verify
// compares in constant time), for each configured secret, so a rotating pair both verify.
// Each scheme yields the delivery's stable id, its event type and which of them its signature
// covers, or a typed refusal: the refusal's code and detail are for the operator's log, as
// delivery.ts answers every signature refusal alike.
import type { Source } from './sources.js';
import { fromBase64 } from '../../../shared/base64.js';

/** A request's headers as read here: Fetch's Headers, or any view that reads them alike (null when absent). */
export type RequestHeaders = Pick<Headers, 'get'>;

export type Refusal = { status: 400 | 401; code: 'invalid_signature' | 'stale_timestamp' | 'invalid_delivery'; detail: string };

/** Envelope fields a signature can vouch for; the rest (headers, receivedAt) anyone can set. */
export type SignedField = 'body' | 'delivery' | 'event';

export interface Delivery {
  id: string;
  event: string;
  /** What the signature covers: the body always; the id and event only where the scheme signs them. */
  signed: SignedField[];
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

/**
 * Bounded work whatever a header holds: a signature header longer than this, more signature
 * entries than MAX_SIGNATURES, or an entry that is not the algorithm's length (32 bytes of
 * SHA-256) is refused before any HMAC is computed, and each secret costs one HMAC.
 */
const MAX_SIGNATURE_HEADER = 1024;
const MAX_SIGNATURES = 5;
const MAC_BYTES = 32;

/** HMAC-SHA256 of the data under one secret. */
export async function mac(secret: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', secret as Bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, data as Bytes));
}

/** Equal, in time that depends only on the (fixed) length. */
function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** HMACs computed: delivery.ts pads a refusal's to the same count whatever it was refused for. */
export interface Spent {
  macs: number;
}

/** Whether any signature matches the data under any secret: one HMAC per secret, every pair compared. */
async function anyVerifies(secrets: Uint8Array[], signatures: Uint8Array[], data: Uint8Array, spent: Spent): Promise<boolean> {
  let ok = false;
  for (const secret of secrets) {
    spent.macs++;
    const expected = await mac(secret, data);
    for (const sig of signatures) if (same(expected, sig)) ok = true;
  }
  return ok;
}

/** A signature entry decoded, if it has exactly the algorithm's length. */
function macOf(text: string | undefined, encoding: 'hex' | 'base64'): Uint8Array | undefined {
  if (text === undefined) return undefined;
  if (encoding === 'hex') return text.length === MAC_BYTES * 2 ? fromHex(text) : undefined;
  if (text.length !== 44) return undefined; // 32 bytes in padded base64
  const bytes = fromBase64(text);
  return bytes?.length === MAC_BYTES ? bytes : undefined;
}

const badSignature = (detail: string): Refusal => ({ status: 401, code: 'invalid_signature', detail });

/** The signature header's text, or a refusal when it is too long to be honest. */
function signatureHeader(headers: RequestHeaders, name: string): string | Refusal {
  const text = headers.get(name) ?? '';
  return text.length > MAX_SIGNATURE_HEADER ? badSignature(`${name} is longer than ${MAX_SIGNATURE_HEADER} characters`) : text;
}

function checkTime(seconds: number, source: Source, now: number): Refusal | undefined {
  if (!Number.isFinite(seconds)) return badSignature("the signature's timestamp is missing or not a number");
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

export async function verify(
  source: Source,
  headers: RequestHeaders,
  body: Uint8Array,
  now = Date.now(),
  spent: Spent = { macs: 0 },
): Promise<Delivery | Refusal> {
  switch (source.kind) {
    case 'github': {
      const header = signatureHeader(headers, 'X-Hub-Signature-256');
      if (typeof header !== 'string') return header;
      const sig = header.startsWith('sha256=') ? macOf(header.slice(7), 'hex') : undefined;
      if (!sig) return badSignature('X-Hub-Signature-256 is missing or not sha256=<64 hex digits>');
      if (!(await anyVerifies(source.secretBytes, [sig], body, spent))) return badSignature('X-Hub-Signature-256 does not match the body');
      const id = headers.get('X-GitHub-Delivery');
      if (!id) return { status: 400, code: 'invalid_delivery', detail: 'X-GitHub-Delivery is missing' };
      // X-GitHub-Delivery and X-GitHub-Event are headers the signature does not cover
      return { id, event: headers.get('X-GitHub-Event') ?? '', signed: ['body'] };
    }
    case 'stripe': {
      const header = signatureHeader(headers, 'Stripe-Signature');
      if (typeof header !== 'string') return header;
      const parts = header.split(',').map((p) => p.trim().split('='));
      const t = parts.find(([k]) => k === 't')?.[1];
      const entries = parts.filter(([k]) => k === 'v1');
      if (!t || !/^\d{1,12}$/.test(t) || entries.length === 0) return badSignature('Stripe-Signature is missing t=<seconds> or v1=');
      if (entries.length > MAX_SIGNATURES) return badSignature(`Stripe-Signature has ${entries.length} v1 entries; at most ${MAX_SIGNATURES} are accepted`);
      const sigs = entries.map(([, v]) => macOf(v, 'hex'));
      if (!sigs.every((x) => x !== undefined)) return badSignature('every Stripe-Signature v1 entry must be 64 hex digits');
      // the timestamp first: a stale delivery costs no HMAC (both answers are 401s that write nothing)
      const late = checkTime(Number(t), source, now);
      if (late) return late;
      const signed = concat(utf8.encode(`${t}.`), body);
      if (!(await anyVerifies(source.secretBytes, sigs as Uint8Array[], signed, spent))) return badSignature('Stripe-Signature does not match the body');
      let event: { id?: unknown; type?: unknown } | null;
      try {
        event = JSON.parse(new TextDecoder().decode(body)) as typeof event;
      } catch {
        return { status: 400, code: 'invalid_delivery', detail: 'a Stripe event body must be JSON' };
      }
      // `null` is JSON too: no event, no id
      if (typeof event?.id !== 'string' || !event.id) return { status: 400, code: 'invalid_delivery', detail: 'the Stripe event has no id' };
      // both read from the signed body
      const typed = typeof event.type === 'string';
      return { id: event.id, event: typed ? (event.type as string) : '', signed: typed ? ['body', 'delivery', 'event'] : ['body', 'delivery'] };
    }
    case 'standard': {
      const id = headers.get('webhook-id');
      const ts = headers.get('webhook-timestamp');
      const header = signatureHeader(headers, 'webhook-signature');
      if (typeof header !== 'string') return header;
      const entries = header.split(' ').filter((e) => e !== '');
      if (entries.length > MAX_SIGNATURES) return badSignature(`webhook-signature has ${entries.length} entries; at most ${MAX_SIGNATURES} are accepted`);
      const v1 = entries.filter((e) => e.startsWith('v1,')).map((e) => macOf(e.slice(3), 'base64'));
      if (!id || id.length > 255 || !ts || !/^\d{1,12}$/.test(ts) || v1.length === 0) {
        return badSignature('webhook-id, webhook-timestamp (seconds) and a v1 webhook-signature are required');
      }
      if (!v1.every((x) => x !== undefined)) return badSignature('every v1 webhook-signature entry must be 32 bytes of base64');
      // the timestamp first: a stale delivery costs no HMAC
      const late = checkTime(Number(ts), source, now);
      if (late) return late;
      const signed = concat(utf8.encode(`${id}.${ts}.`), body);
      if (!(await anyVerifies(source.secretBytes, v1 as Uint8Array[], signed, spent))) return badSignature('webhook-signature does not match the body');
      let type: string | undefined;
      try {
        const parsed = JSON.parse(new TextDecoder().decode(body)) as { type?: unknown };
        if (typeof parsed.type === 'string') type = parsed.type;
      } catch {
        // the event type is optional metadata; the body stays what it is
      }
      // webhook-id is part of the signed content; the event only when the signed body names one
      return { id, event: type ?? '', signed: type === undefined ? ['body', 'delivery'] : ['body', 'delivery', 'event'] };
    }
    case 'hmac': {
      const header = signatureHeader(headers, source.signatureHeader!);
      if (typeof header !== 'string') return header;
      const prefix = source.signaturePrefix ?? '';
      const sig = header.startsWith(prefix) ? macOf(header.slice(prefix.length), source.encoding!) : undefined;
      if (!sig) return badSignature(`${source.signatureHeader} is missing or not ${prefix}<32 bytes of ${source.encoding}>`);
      if (!(await anyVerifies(source.secretBytes, [sig], body, spent))) return badSignature(`${source.signatureHeader} does not match the body`);
      const id = headers.get(source.idHeader!);
      if (!id) return { status: 400, code: 'invalid_delivery', detail: `${source.idHeader} (the delivery id) is missing` };
      // the id and event headers are not covered by the signature
      return { id, event: source.eventHeader ? (headers.get(source.eventHeader) ?? '') : '', signed: ['body'] };
    }
  }
}
