// The job payload of a webhook delivery: a JSON envelope, version 1, that keeps the raw
// body byte-exact (base64) next to the provider's metadata. Any language recovers the
// exact body: base64-decode `body`.
//   {"v":1,"source":"gh","kind":"github","event":"push","delivery":"<id>",
//    "receivedAt":"2026-11-29T15:00:00.000Z","contentType":"application/json","body":"<base64>"}
import type { Source } from './sources.js';
import { toBase64 } from '../../../shared/base64.js';


export function envelope(source: Source, delivery: { id: string; event: string }, contentType: string, body: Uint8Array, now = Date.now()): string {
  return JSON.stringify({
    v: 1,
    source: source.name,
    kind: source.kind,
    event: delivery.event,
    delivery: delivery.id,
    receivedAt: new Date(now).toISOString(),
    contentType,
    body: toBase64(body),
  });
}
