// enqueueOnce: enqueue behind a dedupe marker (a webhook delivery id, an Idempotency-Key),
// in one atomic script, one round trip. The first use of a key enqueues; every later use
// within the marker's lifetime answers the job it made, as `duplicate`.
import type { Connection } from './connection.js';
import { runScript } from './dispatch.js';
import { ProtocolError, fromReply, replyText } from './errors.js';
import { dedupIdOf, enqueueKeys, sha256Hex } from './keyspace.js';
// (interim, until the de: family lands)
const markerKey = async (q: string, scope: string, key: string) => `emq:{${q}}:once:${await dedupIdOf(scope, key)}`;
import { enqueueOnceScript } from './scripts.js';
import { checkPayload, type Payload, type Verdict } from './enqueue.js';

export interface OnceOptions {
  /** What the key belongs to, e.g. `webhook:github` or `key:<token digest>`. */
  scope: string;
  /** The delivery id or Idempotency-Key. */
  key: string;
  /** The id to use when the key is new. */
  id: string;
  payload: Payload;
  /** Compare payloads on reuse (Idempotency-Key); a different one is a ConflictError. */
  compare: boolean;
  /** How long the marker lives, in seconds. */
  ttlSeconds: number;
}

export async function enqueueOnce(connection: Connection, queue: string, options: OnceOptions): Promise<{ id: string; verdict: Verdict }> {
  const { scope, key, id, payload, compare, ttlSeconds } = options;
  const [row, pending] = enqueueKeys(queue)(id);
  checkPayload(payload);
  const marker = await markerKey(queue, scope, key);
  const fingerprint = compare ? await sha256Hex(payload) : '-';
  const outcome = await runScript(connection, enqueueOnceScript, [row, pending, marker], [id, fingerprint, String(Math.max(1, Math.floor(ttlSeconds))), payload]);
  if (!outcome.ok) throw fromReply(outcome.error); // EMQCONFLICT is a ConflictError
  const value = outcome.value;
  if (!Array.isArray(value) || value.length !== 2) throw new ProtocolError(`@enqueue-once replied ${String(value)}`);
  const [flag, original] = value;
  const text = replyText(original) ?? '';
  if ((flag !== 1 && flag !== 0) || !text.startsWith('JOB')) throw new ProtocolError(`@enqueue-once replied ${JSON.stringify(value)}`);
  return { id: text, verdict: flag === 1 ? 'enqueued' : 'duplicate' };
}
