// A test delivery to a configured webhook source, signed as its provider signs (github,
// stripe, standard, hmac; docs/api.md "Webhooks") with the source's first secret. The console
// signs only bodies it makes itself, from a delivery id and a time it minted: a resend of the
// same (id, time) is byte for byte the same delivery, which the producer answers `duplicate`.
// The secret never leaves this module: not in a page, a log or an error.
import type { Source } from '../producer/webhooks/sources.js';

/** A delivery id this console minted: anything else is not re-signed. */
export const DELIVERY_ID = /^evt_console_[0-9a-f]{32}$/;
export const TEST_EVENT = 'emq.console.test';

export interface TestDelivery {
  id: string;
  /** Unix seconds it was first signed at (a resend keeps it: Stripe and Standard Webhooks sign it). */
  at: number;
}

export function newDelivery(now = Date.now()): TestDelivery {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return { id: `evt_console_${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`, at: Math.floor(now / 1000) };
}

/** The body: the same for the same delivery. */
export const bodyOf = (d: TestDelivery) =>
  JSON.stringify({ id: d.id, type: TEST_EVENT, created: d.at, data: { note: 'a test delivery sent from the EchoMQ console' } });

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));

async function hmac(key: Uint8Array, text: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, new TextEncoder().encode(text)));
}

/** The headers that carry the delivery's signature and id, as the source's kind reads them. */
export async function signedHeaders(source: Source, d: TestDelivery, body: string): Promise<Record<string, string>> {
  const key = source.secretBytes[0]!;
  const base = { 'Content-Type': 'application/json' };
  switch (source.kind) {
    case 'github':
      return { ...base, 'X-Hub-Signature-256': `sha256=${hex(await hmac(key, body))}`, 'X-GitHub-Delivery': d.id, 'X-GitHub-Event': TEST_EVENT };
    case 'stripe':
      return { ...base, 'Stripe-Signature': `t=${d.at},v1=${hex(await hmac(key, `${d.at}.${body}`))}` };
    case 'standard':
      return { ...base, 'webhook-id': d.id, 'webhook-timestamp': String(d.at), 'webhook-signature': `v1,${b64(await hmac(key, `${d.id}.${d.at}.${body}`))}` };
    case 'hmac': {
      const mac = await hmac(key, body);
      return {
        ...base,
        [source.signatureHeader!]: `${source.signaturePrefix ?? ''}${source.encoding === 'hex' ? hex(mac) : b64(mac)}`,
        [source.idHeader!]: d.id,
        ...(source.eventHeader ? { [source.eventHeader]: TEST_EVENT } : {}),
      };
    }
  }
}
