// Replies to Upstash's JSON: {"result": ...}. With `Upstash-Encoding: base64`, every bulk
// string is base64 (status replies such as OK stay plain, as Upstash sends them); without
// it, bytes that are not UTF-8 cannot travel in JSON, so such a reply is refused, not mangled.
import type { Outcome, Reply } from '../../shared/connection.js';

export class NotUtf8 extends Error {}

// ignoreBOM: true keeps a leading BOM as text; the default would drop those three bytes
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function encode(reply: Reply, base64: boolean): unknown {
  if (reply instanceof Uint8Array) {
    if (base64) return Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength).toString('base64');
    try {
      return strict.decode(reply);
    } catch {
      throw new NotUtf8('ERR the reply is not valid UTF-8; send the header Upstash-Encoding: base64 to receive it exactly');
    }
  }
  if (Array.isArray(reply)) return reply.map((r) => encode(r, base64));
  if (typeof reply === 'bigint') return Number.isSafeInteger(Number(reply)) ? Number(reply) : reply.toString();
  return reply;
}

export type Body = { result: unknown } | { error: string };

/** An outcome as Upstash's body for it. */
export function bodyOf(outcome: Outcome, base64: boolean): Body {
  if (!outcome.ok) return { error: outcome.error };
  try {
    return { result: encode(outcome.value, base64) };
  } catch (err) {
    if (err instanceof NotUtf8) return { error: err.message };
    throw err;
  }
}

/**
 * The JSON text of an integer's body (every enqueue's reply), as JSON.stringify writes it,
 * without its call into the runtime; undefined for any other body (JSON.stringify it).
 */
export function integerText(body: Body): string | undefined {
  if (!('result' in body)) return undefined;
  const value = body.result;
  return typeof value === 'number' && Number.isInteger(value) ? `{"result":${value}}` : undefined;
}
