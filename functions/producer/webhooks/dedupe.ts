// What makes two deliveries one job: the scope and key that enqueueOnce hashes into the
// library's dedup key, emq:{q}:de:<dedupId>. Only what the signature covers may decide it,
// or a replayer sends one signed delivery again under a fresh id and gets a new job each time.
//  - The delivery id, where the scheme signs it (stripe: the event's id; standard:
//    webhook-id). Their signed timestamp makes a replay older than the tolerance fail, and
//    the tolerance is below the key's TTL, so the key outlives every replay that verifies.
//  - Otherwise (github, hmac: the id is a plain header, and nothing signed says when) the
//    SHA-256 of the body: a replay is the same body, so the same key, whatever id it carries.
//    The id then only goes into the envelope. Two genuine deliveries with byte-identical
//    bodies within the TTL are one job: nothing signed tells them from a replay.
// Why one key and not two (delivery id and body hash): the unsigned id as a key adds no
// safety (a genuine redelivery has the same body) and opens one hole: anyone holding a
// signed body, once its key expired, could park arbitrary delivery ids and so drop later
// genuine deliveries that carry them. One key also keeps @enqueue-once as it is, whose text
// must fit a REST URL path (< 8 KiB) after SCRIPT FLUSH.
import { sha256Hex } from '../../../shared/keyspace.js';
import type { Source } from './sources.js';
import type { Delivery } from './verify.js';

export async function dedupeOf(source: Source, delivery: Delivery, body: Uint8Array): Promise<{ scope: string; key: string }> {
  if (delivery.signed.includes('delivery')) return { scope: `webhook:${source.name}`, key: delivery.id };
  // a scope of its own: a body's key never meets a delivery id's, even if a source changes kind
  return { scope: `webhook-body:${source.name}`, key: await sha256Hex(body) };
}
