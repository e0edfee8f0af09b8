// The soak's consumer loops, each `soak/library/consumer.ts` as a process of its own (from
// dist/: build first), restarted when it dies as the library's supervisor restarts a
// :permanent child, each writing its completion log under `dir`.
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/repo-root.js';
import type { ConsumerConfig, LogLine } from './consumer.js';

export interface Fleet {
  /** Tells one loop to SIGKILL itself right after its next claim; resolves once it is restarted, with its index (-1: no claim in 30 s). */
  killMidJob(): Promise<number>;
  /** Restarts after a death. */
  restarts(): number;
  stop(): Promise<void>;
}

export type FleetConfig = Omit<ConsumerConfig, 'loop' | 'log'>;

export function startFleet(loops: number, config: FleetConfig, dir: string): Fleet {
  const entry = join(repoRoot(), 'dist', 'soak', 'library', 'consumer.js');
  const children: ChildProcess[] = [];
  const exits: Array<Promise<void>> = [];
  let stopping = false;
  let restarts = 0;
  let next = 0;
  const spawnLoop = (i: number) => {
    const cfg: ConsumerConfig = { ...config, loop: i, log: join(dir, `loop-${i}.jsonl`) };
    const child = fork(entry, [], { env: { ...process.env, SOAK_CONSUMER: JSON.stringify(cfg) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children[i] = child;
    exits[i] = new Promise((resolve) =>
      child.once('exit', () => {
        if (!stopping) {
          restarts++;
          spawnLoop(i);
        }
        resolve();
      }),
    );
  };
  for (let i = 0; i < loops; i++) spawnLoop(i);
  return {
    async killMidJob() {
      const i = next++ % loops;
      const gone = exits[i]!.then(() => i);
      children[i]!.send('die-mid-job');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<number>((r) => (timer = setTimeout(() => r(-1), 30_000)));
      const which = await Promise.race([gone, late]);
      clearTimeout(timer);
      return which;
    },
    restarts: () => restarts,
    async stop() {
      stopping = true;
      for (const c of children) if (c.connected) c.send('stop');
      const deadline = setTimeout(() => {
        for (const c of children) c.kill('SIGKILL');
      }, 20_000);
      await Promise.all(exits);
      clearTimeout(deadline);
    },
  };
}

/** Every line of every loop's completion log. */
export function readLogs(dir: string): LogLine[] {
  const out: LogLine[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.jsonl')))
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) out.push(JSON.parse(line) as LogLine);
  return out;
}
