// How the soak's library consumer and pump reach Valkey: one server (a glide client, as the
// library's Connector holds one connection), or the cluster harness, where each queue's keys
// share a slot: a cluster client whose every command goes to the primary of the slot its first
// key names (the library's cluster connection does the same), re-resolved by glide after a
// failover (MOVED, its periodic topology check). SCRIPT LOAD goes to every primary, since the
// next EVALSHA may land on any of them (a flow's delivery writes in its parent's slot).
import { Decoder, GlideClient, GlideClusterClient, type GlideString } from '@valkey/valkey-glide';

/** One command, as the library's verbs send it. */
export type Send = (args: GlideString[]) => Promise<unknown>;

/** Where the consumer and pump connect: a server's port, or the cluster's seed nodes. */
export type Target = { port: number; seeds?: undefined } | { port?: undefined; seeds: Array<{ host: string; port: number }> };

export interface Link {
  /** The commands of `queue` (its slot on a cluster; the only server else). */
  send(queue: string): Send;
  close(): void;
}

const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v));

/** The key a command is routed by on a cluster: EVAL/EVALSHA's first key, else the first argument; none: the queue's slot. */
function routeKey(args: GlideString[], queue: string): string {
  const name = text(args[0]).toUpperCase();
  if ((name === 'EVALSHA' || name === 'EVAL') && Number(text(args[2])) > 0) return text(args[3]);
  if (name === 'TIME' || name === 'SCRIPT' || args.length < 2) return `{${queue}}`;
  return text(args[1]);
}

export async function connectLink(target: Target, clientName: string, requestTimeout: number): Promise<Link> {
  if (target.seeds === undefined) {
    const conn = await GlideClient.createClient({
      addresses: [{ host: '127.0.0.1', port: target.port }],
      clientName,
      defaultDecoder: Decoder.Bytes,
      requestTimeout,
    });
    return { send: () => (args) => conn.customCommand(args), close: () => conn.close() };
  }
  const conn = await GlideClusterClient.createClient({
    addresses: target.seeds,
    clientName,
    defaultDecoder: Decoder.Bytes,
    requestTimeout,
    periodicChecks: { duration_in_sec: 1 },
  });
  const send =
    (queue: string): Send =>
    async (args) => {
      if (text(args[0]).toUpperCase() === 'SCRIPT' && text(args[1]).toUpperCase() === 'LOAD') {
        const replies = (await conn.customCommand(args, { route: 'allPrimaries' })) as unknown;
        // one answer per primary ({key: address, value: sha}); each must be the same SHA-1
        const shas = new Set((Array.isArray(replies) ? replies.map((r: { value: unknown }) => r.value) : Object.values(replies as object)).map(text));
        return shas.size === 1 ? [...shas][0] : `SCRIPT LOAD answered ${[...shas].join(', ')}`;
      }
      return conn.customCommand(args, { route: { type: 'primarySlotKey', key: routeKey(args, queue) } });
    };
  return { send, close: () => conn.close() };
}
