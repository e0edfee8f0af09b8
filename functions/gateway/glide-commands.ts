// The gateway's commands over glide: any one command (not a blocking or connection-state one:
// the connection is shared), and MULTI/EXEC transactions, with replies in RESP2's shapes as
// Upstash clients expect. Built on the wire under a glide connection (its coalesced batches and
// WAITs), not on the Connection seam, which carries this project's scripts only.
import { Batch, ClusterBatch } from '@valkey/valkey-glide';
import type { Arg, Outcome, Reply } from '../../shared/connection.js';
import { ConnectionError } from '../../shared/errors.js';
import { isReplyError, serverWording, toGlide, type GlideWire } from '../../shared/connections/glide.js';

/**
 * A glide value in RESP2's shapes, as Upstash and RESP2 clients expect: maps (which glide
 * makes of HGETALL, ZRANGE WITHSCORES, CONFIG GET...) become flat field/value lists, and
 * booleans (SCRIPT EXISTS) become 1 and 0.
 */
export function resp2(value: unknown): Reply {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (Array.isArray(value)) {
    const out: Reply[] = [];
    for (const item of value) {
      if (item !== null && typeof item === 'object' && 'key' in item && 'value' in item) {
        out.push(resp2(item.key), resp2(item.value));
      } else out.push(resp2(item));
    }
    return out;
  }
  if (value instanceof Set) return resp2([...value]);
  return value as Reply;
}

/** A glide reply (or the RequestError of a server's error reply) as an outcome, in RESP2's shapes. */
export function outcomeOf(value: unknown): Outcome {
  if (isReplyError(value)) return { ok: false, error: serverWording(value.message) };
  return { ok: true, value: resp2(value) };
}

/** Any one command, in the wire's coalesced batches. */
export function command(wire: GlideWire, args: readonly Arg[]): Promise<Outcome> {
  const sent = wire.send(args, outcomeOf);
  // the gateway's script calls are the project's writes: WAITed for like run()'s
  // (without a WAIT to make, the outcome as it comes: no async step in between)
  if (!wire.waitFor) return sent;
  const script = typeof args[0] === 'string' && /^eval(sha)?$/i.test(args[0]) && Number(args[2]) > 0;
  return script && typeof args[3] === 'string' ? wire.replicated(sent, args[3]) : sent;
}

/**
 * Commands as one MULTI/EXEC. A command the server refuses to queue aborts them all:
 * one error outcome (EXECABORT) for the whole transaction.
 */
export async function transaction(wire: GlideWire, commands: ReadonlyArray<readonly Arg[]>): Promise<Outcome[] | Outcome> {
  if (wire.isClosed) throw new ConnectionError('connection is closed');
  const batch = wire.cluster ? new ClusterBatch(true) : new Batch(true);
  for (const args of commands) batch.customCommand(args.map(toGlide));
  try {
    const replies = await wire.exec(batch);
    const failed = (replies ?? []).find((r) => r instanceof Error && !isReplyError(r));
    if (failed) throw failed;
    return (replies ?? []).map(outcomeOf);
  } catch (err) {
    if (isReplyError(err)) return outcomeOf(err);
    throw wire.lost(err);
  }
}
