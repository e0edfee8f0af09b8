// The job payload of a webhook delivery: a JSON envelope, version 1, that keeps the raw
// body byte-exact (base64) next to the provider's metadata. Any language recovers the
// exact body: base64-decode `body`.
//   {"v":1,"source":"gh","kind":"github","event":"push","delivery":"<id>",
//    "receivedAt":"2026-11-29T15:00:00.000Z","contentType":"application/json",
//    "signed":["body"],"body":"<base64>"}
// `signed` names the envelope fields the source's signature covers, so a consumer knows
// what a sender vouched for and what anyone on the path could have set: github and hmac
// sign the body only (their delivery id, event and content type are plain headers); stripe
// the body, and the delivery and event read from it; standard the body and delivery
// (webhook-id is signed), and the event when the signed body names one. `contentType` is
// never signed. Added within version 1: a reader that ignores unknown fields is unaffected.
import type { Source } from './sources.js';
import type { Delivery } from './verify.js';
import { toBase64 } from '../../../shared/base64.js';

export function envelope(source: Source, delivery: Delivery, contentType: string, body: Uint8Array, now = Date.now()): string {
  return JSON.stringify({
    v: 1,
    source: source.name,
    kind: source.kind,
    event: delivery.event,
    delivery: delivery.id,
    receivedAt: new Date(now).toISOString(),
    contentType,
    signed: delivery.signed,
    body: toBase64(body),
  });
}
