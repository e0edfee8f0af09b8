// One step of a SCAN walk over glide, for GlideConnection.scan and the gateway (which walks
// for a REST producer): on a single server, SCAN as it is; on a cluster, primary by primary in
// the order of the first slot each owns, the cursor <slot>:<node cursor> (shared/queue-list.ts).
// A node is named by its first slot and reached at the address CLUSTER SLOTS gives the primary
// owning that slot now (glide's primarySlotId route sent every slot to one node: seen here), so
// a failover mid-walk goes on at the promoted replica; a resharding mid-walk may skip or repeat
// keys, as SCAN itself may. Node only.
import { Decoder, type GlideClusterClient } from '@valkey/valkey-glide';
import type { Outcome } from '../connection.js';
import { parseScanCursor } from '../queue-list.js';
import { isReplyError, serverWording } from './glide-replies.js';
import type { GlideWire } from './glide-wire.js';

interface Primary {
  /** The lowest slot it owns: the walk's name for it. */
  first: number;
  host: string;
  port: number;
  /** The slot ranges it owns. */
  ranges: Array<[number, number]>;
}

/** Each primary, by its first slot ascending (CLUSTER SLOTS: a row per range, its primary the first node). */
async function primaries(client: GlideClusterClient): Promise<Primary[]> {
  const rows = (await client.customCommand(['CLUSTER', 'SLOTS'], { decoder: Decoder.String })) as unknown[];
  const byAddress = new Map<string, Primary>();
  for (const row of rows) {
    const [start, end, node] = row as [number, number, [string, number]];
    const at = `${node[0]}:${node[1]}`;
    const p = byAddress.get(at) ?? { first: Number(start), host: String(node[0]), port: Number(node[1]), ranges: [] };
    p.first = Math.min(p.first, Number(start));
    p.ranges.push([Number(start), Number(end)]);
    byAddress.set(at, p);
  }
  return [...byAddress.values()].sort((a, b) => a.first - b.first);
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
    const nodes = await primaries(client);
    if (at.slot === undefined && at.node !== '0') return refused("a single server's, and this is a cluster");
    const slot = at.slot ?? nodes[0]?.first ?? 0;
    const owner = nodes.find((p) => p.ranges.some(([lo, hi]) => lo <= slot && slot <= hi));
    if (!owner) return { ok: false, error: `CLUSTERDOWN no primary owns slot ${slot}` };
    const route = { type: 'routeByAddress' as const, host: owner.host, port: owner.port };
    const reply = await client.customCommand(args(at.node), { route, decoder: Decoder.Bytes });
    const [next, keys] = reply as [Buffer, Buffer[]];
    const node = text(next);
    if (node !== '0') return step(`${slot}:${node}`, keys);
    const after = nodes.find((p) => p.first > slot)?.first;
    return step(after === undefined ? '0' : `${after}:0`, keys);
  } catch (err) {
    if (isReplyError(err)) return { ok: false, error: serverWording(err.message) };
    throw wire.lost(err);
  }
}
