// A delivery to POST /v1/webhooks/:source, verified so that its caller cannot tell a
// configured source from any other name: every name has its body read under the same cap
// (the route), and every signature refusal (no source of that name, no or a malformed
// signature, a stale timestamp, a wrong signature) answers the same 401 with the same detail,
// after the same number of HMACs of the body (the most any source's wrong signature costs).
// What the refusal stands for goes to the request's log line, as `reason`.
import type { Source } from './sources.js';
import { type Delivery, type RequestHeaders, type Spent, mac, verify } from './verify.js';

/** The detail of every signature refusal. */
export const NOT_SIGNED = 'the delivery is not signed by a configured source';

/** A refusal as its caller sees it, and what it stands for (the operator's; never a secret). */
export interface Refused {
  status: 400 | 401;
  code: 'invalid_signature' | 'invalid_delivery';
  detail: string;
  reason: string;
}

// a key no source holds: its HMACs make up the count a refusal did not spend (drawn at first
// use: a Worker may not draw random values in its global scope)
let decoy: Uint8Array | undefined;

const floors = new WeakMap<ReadonlyMap<string, Source>, number>();
/** The HMACs the costliest wrong signature costs: the most secrets any source has (at least one). */
function floorOf(sources: ReadonlyMap<string, Source>): number {
  let floor = floors.get(sources);
  if (floor === undefined) {
    floor = 1;
    for (const source of sources.values()) floor = Math.max(floor, source.secretBytes.length);
    floors.set(sources, floor);
  }
  return floor;
}

/** The source named and its verified delivery, or the refusal to answer. */
export async function delivered(
  sources: ReadonlyMap<string, Source>,
  name: string,
  headers: RequestHeaders,
  body: Uint8Array,
  now = Date.now(),
): Promise<{ source: Source; delivery: Delivery } | Refused> {
  const source = sources.get(name);
  const spent: Spent = { macs: 0 };
  let reason = 'unknown_source';
  if (source) {
    const got = await verify(source, headers, body, now, spent);
    if (!('code' in got)) return { source, delivery: got };
    // invalid_delivery comes after the signature verified: only the source's own signer sees it
    if (got.code === 'invalid_delivery') return { status: got.status, code: got.code, detail: got.detail, reason: got.code };
    reason = `${got.code}: ${got.detail}`;
  }
  for (let i = spent.macs, floor = floorOf(sources); i < floor; i++) await mac((decoy ??= crypto.getRandomValues(new Uint8Array(32))), body);
  return { status: 401, code: 'invalid_signature', detail: NOT_SIGNED, reason };
}
