// The gateway's commands over glide: any one command (not a blocking or connection-state one:
// the connection is shared), and MULTI/EXEC transactions, with replies in the server's RESP2
// form as Upstash clients expect (unglide.ts). Built on the wire under a glide connection (its coalesced batches and
// WAITs), not on the Connection seam, which carries this project's scripts only.
import { Batch, ClusterBatch } from '@valkey/valkey-glide';
import type { Arg, Outcome } from '../../shared/connection.js';
import { ConnectionError } from '../../shared/errors.js';
import { isReplyError, serverWording } from '../../shared/connections/glide-replies.js';
import { toGlide, type GlideWire } from '../../shared/connections/glide-wire.js';
import type { DoubleStyle } from './doubles.js';
import { serverForm } from './unglide.js';

/** A glide reply (or the RequestError of a server's error reply) to `args` as an outcome, in the server's RESP2 form. */
export function outcomeOf(args: readonly Arg[], value: unknown, style: DoubleStyle): Outcome {
  if (isReplyError(value)) return { ok: false, error: serverWording(value.message) };
  return { ok: true, value: serverForm(args, value, style) };
}

/** Any one command, in the wire's coalesced batches. */
export function command(wire: GlideWire, args: readonly Arg[], style: DoubleStyle = 'shortest'): Promise<Outcome> {
  const sent = wire.send(args, (reply) => outcomeOf(args, reply, style));
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
export async function transaction(wire: GlideWire, commands: ReadonlyArray<readonly Arg[]>, style: DoubleStyle = 'shortest'): Promise<Outcome[] | Outcome> {
  if (wire.isClosed) throw new ConnectionError('connection is closed');
  const batch = wire.cluster ? new ClusterBatch(true) : new Batch(true);
  for (const args of commands) batch.customCommand(args.map(toGlide));
  try {
    const replies = await wire.exec(batch);
    const failed = (replies ?? []).find((r) => r instanceof Error && !isReplyError(r));
    if (failed) throw failed;
    return (replies ?? []).map((reply, i) => outcomeOf(commands[i]!, reply, style));
  } catch (err) {
    if (isReplyError(err)) return { ok: false, error: serverWording(err.message) };
    throw wire.lost(err);
  }
}
