// The library's EchoMQ.Pump (54721988820) for the soak's queues, one per queue as the library
// runs it (a lone process; two pumps on one outbox could trim each other's entries): on each
// tick, Jobs.promote(batch) and deliver_flow_completions(batch). The repeat pass is left out:
// the soak registers no repeatables. Its own connection, in the soak's process.
import { connectLink, type Target } from './connect.js';
import { libraryVerbs } from './verbs.js';

export interface Pump {
  /** Cross-queue completions delivered so far. */
  delivered(): number;
  stop(): Promise<void>;
}

/** `at`: the server's port, or the cluster harness (each queue's sweep on its slot's primary). */
export async function startPump(at: number | Target, queues: readonly string[], tickMs = 200, batch = 100): Promise<Pump> {
  const conn = await connectLink(typeof at === 'number' ? { port: at } : at, 'soak-pump', 5_000);
  const libs = new Map(queues.map((q) => [q, libraryVerbs(conn.send(q))]));
  let delivered = 0;
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      for (const q of queues) {
        // a crashed sweep is retried next tick (a :transient child restarted whole)
        const lib = libs.get(q)!;
        await lib.promote(q, batch).catch(() => 0);
        delivered += await lib.deliverFlowCompletions(q, batch).catch(() => 0);
      }
      await new Promise((r) => setTimeout(r, tickMs));
    }
  })();
  return {
    delivered: () => delivered,
    async stop() {
      stopping = true;
      await loop;
      conn.close();
    },
  };
}
