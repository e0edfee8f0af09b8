// Closed-loop load: N workers, each awaiting one operation after another, for a fixed time.

export interface Driven {
  /** Units done (jobs, not calls: a batch of 100 counts 100). */
  ops: number;
  seconds: number;
}

/**
 * Runs `concurrency` workers until `ms` has passed; each awaits `step()` (which answers
 * how many units it did) in a loop. The first failure stops every worker and is thrown.
 */
export async function drive(concurrency: number, ms: number, step: () => Promise<number>): Promise<Driven> {
  const start = performance.now();
  const end = start + ms;
  let ops = 0;
  let stopped = false;
  const worker = async () => {
    try {
      while (!stopped && performance.now() < end) {
        const done = await step(); // not `ops += await step()`: that reads ops before the await
        ops += done;
      }
    } catch (err) {
      stopped = true;
      throw err;
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: concurrency }, worker));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return { ops, seconds: (performance.now() - start) / 1000 };
}

export interface Measured extends Driven {
  /** Cores this Node process used meanwhile (all its threads: JS, libuv, glide's Rust runtime). */
  clientCores: number;
  /** Cores the server used meanwhile, from INFO cpu. */
  serverCores: number;
}

/** Runs `work`, adding the CPU this process and the server spent on it. */
export async function measured(serverCpuSeconds: () => Promise<number>, work: () => Promise<Driven>): Promise<Measured> {
  const server0 = await serverCpuSeconds();
  const client0 = process.cpuUsage();
  const result = await work();
  const client = process.cpuUsage(client0);
  const server = (await serverCpuSeconds()) - server0;
  return {
    ...result,
    clientCores: (client.user + client.system) / 1e6 / result.seconds,
    serverCores: server / result.seconds,
  };
}
