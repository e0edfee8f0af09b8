// Closed-loop load: N workers, each awaiting one operation after another, for a fixed time.

export interface Driven {
  /** Units done (jobs, not calls: a batch of 100 counts 100). */
  ops: number;
  seconds: number;
  /** Each call's latency in ms (a batch is one call), sorted, when asked for. */
  latencies: number[];
}

/**
 * Runs `concurrency` workers until `ms` has passed; each awaits `step()` (which answers
 * how many units it did) in a loop. The first failure stops every worker and is thrown.
 */
export async function drive(concurrency: number, ms: number, step: () => Promise<number>, keepLatencies = false): Promise<Driven> {
  const start = performance.now();
  const end = start + ms;
  const latencies: number[] = [];
  let ops = 0;
  let stopped = false;
  const worker = async () => {
    try {
      while (!stopped && performance.now() < end) {
        const t = performance.now();
        const done = await step(); // not `ops += await step()`: that reads ops before the await
        if (keepLatencies) latencies.push(performance.now() - t);
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
  latencies.sort((a, b) => a - b);
  return { ops, seconds: (performance.now() - start) / 1000, latencies };
}

/** The q-quantile (0..1) of sorted values, nearest rank; undefined when empty. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
