// One step of a SCAN walk over glide, for GlideConnection.scan and the gateway (which walks
// for a REST producer): on a single server, SCAN as it is; on a cluster, primary by primary in
// the order of the first slot each owns, the cursor <slot>:<node cursor> (shared/queue-list.ts).
// A node is reached by its first slot (glide routes a slot to whichever primary owns it now),
// so a failover mid-walk goes on at the promoted replica; a resharding mid-walk may skip or
// repeat keys, as SCAN itself may. Node only.
import { Decoder, type GlideClusterClient } from '@valkey/valkey-glide';
import type { Outcome } from '../connection.js';
import { parseScanCursor } from '../queue-list.js';
import { isReplyError, serverWording } from './glide-replies.js';
import type { GlideWire } from './glide-wire.js';

/** The first slot of each primary, ascending (CLUSTER SLOTS: a row per range, its primary the first node). */
async function firstSlots(client: GlideClusterClient): Promise<number[]> {
  const rows = (await client.customCommand(['CLUSTER', 'SLOTS'], { decoder: Decoder.String })) as unknown[];
  const first = new Map<string, number>();
  for (const row of rows) {
    const [start, , primary] = row as [number, number, [string, number]];
    const at = `${primary[0]}:${primary[1]}`;
    first.set(at, Math.min(first.get(at) ?? Number.POSITIVE_INFINITY, Number(start)));
  }
  return [...first.values()].sort((a, b) => a - b);
}

const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v));
const refused = (why: string): Outcome => ({ ok: false, error: `ERR invalid cursor: ${why}` });
/** The reply as the server's: the cursor a bulk string (bytes: a REST answer base64s it, as Upstash does). */
const step = (cursor: string, keys: Buffer[]): Outcome => ({ ok: true, value: [Buffer.from(cursor, 'latin1'), keys] });

/** SCAN cursor MATCH match COUNT count as one step of the walk: [next cursor, keys], or the server's error. */
export async function scanOutcome(wire: GlideWire, cursor: string, match: string, count: number): Promise<Outcome> {
  const at = parseScanCursor(cursor);
  if (at === undefined) return refused('not a cursor a page answered');
  const args = (node: string) => ['SCAN', node, 'MATCH', match, 'COUNT', String(count)];
  try {
    if (!wire.cluster) {
      if (at.slot !== undefined) return refused("a cluster's, and this is a single server");
      const [next, keys] = (await wire.client.customCommand(args(at.node), { decoder: Decoder.Bytes })) as [Buffer, Buffer[]];
      return step(text(next), keys);
    }
    const client = wire.client as GlideClusterClient;
    const slots = await firstSlots(client);
    if (at.slot === undefined && at.node !== '0') return refused("a single server's, and this is a cluster");
    const slot = at.slot ?? slots[0] ?? 0;
    const reply = await client.customCommand(args(at.node), { route: { type: 'primarySlotId', id: slot }, decoder: Decoder.Bytes });
    const [next, keys] = reply as [Buffer, Buffer[]];
    const node = text(next);
    if (node !== '0') return step(`${slot}:${node}`, keys);
    const after = slots.find((s) => s > slot);
    return step(after === undefined ? '0' : `${after}:0`, keys);
  } catch (err) {
    if (isReplyError(err)) return { ok: false, error: serverWording(err.message) };
    throw wire.lost(err);
  }
}
