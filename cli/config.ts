// The CLI's configuration (`emq enqueue`, `emq id`): what each command reads, checked before
// it reads stdin or connects (the table: shared/config/variables.ts). `emq gateway` and
// `emq producer` read theirs in functions/gateway/config.ts and functions/producer/node-config.ts.
import { nodeId, nodePool, valkeyUrl, wireVersion } from '../shared/config/parse.js';

type Env = Record<string, string | undefined>;

/** `emq id`: the node id minted ids carry: EMQ_NODE_ID, else a pool (EMQ_NODE_IDS) to draw from. */
export function idConfigFrom(env: Env): { nodeId: number | undefined; nodePool: [number, number] } {
  return { nodeId: nodeId(env, 'EMQ_NODE_ID'), nodePool: nodePool(env, 'EMQ_NODE_IDS') };
}

/** `emq enqueue`: the node id, the wire version, and the server (`--url` wins over VALKEY_URL, which is then not read). */
export function enqueueConfigFrom(
  env: Env,
  url: string | undefined,
): { nodeId: number | undefined; nodePool: [number, number]; wireVersion: string; url: string | undefined } {
  return { ...idConfigFrom(env), wireVersion: wireVersion(env, 'EMQ_WIRE_VERSION'), url: url ?? valkeyUrl(env, 'VALKEY_URL') };
}
