// The faults the soak injects, round-robin on a schedule. Each resolves once the fault is
// over (the part is back), with a short note of what it did.
import type { GlideString } from '@valkey/valkey-glide';
import type { Fleet } from './library/fleet.js';
import type { Stack } from './stack.js';

export const FAULT_KINDS = [
  'kill -9 Valkey + restart',
  'SCRIPT FLUSH',
  "CLIENT KILL of the gateway's connections",
  'gateway restart',
  'a consumer killed mid-job',
  'Worker isolate restart',
] as const;
/** Glide mode's (no gateway, no Worker): the gateway's two faults become `emq producer`'s. */
export const GLIDE_FAULT_KINDS = [
  'kill -9 Valkey + restart',
  'SCRIPT FLUSH',
  "CLIENT KILL of emq producer's connections",
  'emq producer restart',
  'a consumer killed mid-job',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number] | (typeof GLIDE_FAULT_KINDS)[number];
/** The faults of the producer half's soak (soak/edge/), which runs no consumer. */
export const EDGE_FAULT_KINDS = FAULT_KINDS.slice(0, 4) as readonly FaultKind[];

export interface FaultRecord {
  kind: FaultKind;
  at: number;
  tookMs: number;
  note: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : String(v));

/** The admin client reconnects by itself after a restart; until then, try again. */
async function admin(stack: Stack, args: GlideString[]): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await stack.admin.customCommand(args);
    } catch (err) {
      if (attempt >= 50) throw err;
      await sleep(100);
    }
  }
}

const inject: Record<FaultKind, (stack: Stack, fleet: Fleet | null) => Promise<string>> = {
  async 'kill -9 Valkey + restart'(stack) {
    process.kill(stack.valkey.pid, 'SIGKILL');
    await sleep(500); // down for a while: producers must see it
    await stack.valkey.restart(); // same port, same AOF
    return `down ≥500 ms, AOF reloaded`;
  },
  async 'SCRIPT FLUSH'(stack) {
    await admin(stack, ['SCRIPT', 'FLUSH']);
    return 'script cache empty';
  },
  "CLIENT KILL of the gateway's connections": killEmqClients,
  "CLIENT KILL of emq producer's connections": killEmqClients,
  async 'gateway restart'(stack) {
    await stack.gateway!.restart();
    return 'SIGTERM, drained, started again on the same port';
  },
  'emq producer restart': (stack) => stack.restartProducer(),
  'Worker isolate restart': (stack) => stack.restartProducer(),
  async 'a consumer killed mid-job'(_stack, fleet) {
    const loop = fleet ? await fleet.killMidJob() : -1;
    return loop < 0 ? 'no job claimed in 30 s: none killed' : `loop ${loop}: SIGKILL after a claim, restarted; its lease runs out and reap returns the job`;
  },
};

/** glide names its connections `emq` (the gateway's, or emq producer's); ours are `soak-…`. */
async function killEmqClients(stack: Stack): Promise<string> {
  const list = text(await admin(stack, ['CLIENT', 'LIST', 'TYPE', 'normal']));
  const ids = list
    .split('\n')
    .filter((line) => / name=emq /.test(line))
    .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
  let killed = 0;
  for (const id of ids) killed += Number(await admin(stack, ['CLIENT', 'KILL', 'ID', id]));
  return `${killed} connection(s) killed`;
}

/**
 * `each` faults of every kind, evenly spread over `seconds` (none in the first or last
 * interval, so the run starts and ends calm). Resolves when the last fault is over.
 */
export async function runFaults(
  stack: Stack,
  fleet: Fleet | null,
  seconds: number,
  each: number,
  log: (line: string) => void,
  kinds: readonly FaultKind[] = FAULT_KINDS,
): Promise<FaultRecord[]> {
  const total = kinds.length * each;
  const interval = (seconds * 1000) / (total + 1);
  const start = Date.now();
  const records: FaultRecord[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + interval * (i + 1);
    if (due > Date.now()) await sleep(due - Date.now());
    const kind = kinds[i % kinds.length]!;
    const began = Date.now();
    const note = await inject[kind](stack, fleet);
    records.push({ kind, at: began - start, tookMs: Date.now() - began, note });
    log(`fault ${i + 1}/${total} at ${((began - start) / 1000).toFixed(1)} s: ${kind} (${note}, ${Date.now() - began} ms)`);
  }
  return records;
}
