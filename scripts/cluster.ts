// A private Valkey Cluster on loopback for tests and benchmarks: N primaries with R replicas
// each, made with `valkey-cli --cluster create`, torn down by stop(). Node only.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureServer, startServer, type RunningServer, type ServerBinary } from './valkey.js';

export interface RunningCluster {
  /** Every node as a seed (`redis://h:p1,h:p2,…?cluster=true`), for connectGlide and the gateway. */
  url: string;
  nodes: RunningServer[];
  /** valkey-cli (or redis-cli) of the same build, for --cluster commands. */
  cli: string;
  stop(): Promise<void>;
}

const run = promisify(execFile);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await canListen(port)) && (await canListen(port + 10_000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port pair (port, port + 10000) on loopback');
}

function cliFor(binary: ServerBinary): string {
  const cli = join(binary.path, '..', `${binary.flavor}-cli`);
  if (!existsSync(cli)) throw new Error(`${cli} not found: install ${binary.flavor}-tools`);
  return cli;
}

export async function startCluster({ primaries = 3, replicas = 1 } = {}): Promise<RunningCluster> {
  const binary = ensureServer();
  const cli = cliFor(binary);
  const taken = new Set<number>();
  const nodes: RunningServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const port = await clusterPort(taken);
      // validity factor 0: a replica may always take over (with the default, replicas of a
      // fresh cluster were judged too stale and never promoted: seen here); no 5 s delay
      // before a (re)joining replica's full sync
      nodes.push(
        await startServer({
          binary,
          port,
          config: [
            'cluster-enabled yes',
            'cluster-config-file nodes.conf',
            'cluster-node-timeout 2000',
            'cluster-require-full-coverage no',
            'cluster-replica-validity-factor 0',
            'repl-diskless-sync-delay 0',
          ],
        }),
      );
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
    // every node must agree the cluster is whole before it is used
    for (const node of nodes) {
      for (let i = 0; ; i++) {
        const { stdout } = await run(cli, ['-p', String(node.port), 'CLUSTER', 'INFO'], { timeout: 5_000 });
        if (/cluster_state:ok/.test(stdout) && /cluster_known_nodes:(\d+)/.exec(stdout)?.[1] === String(nodes.length)) break;
        if (i > 200) throw new Error(`node ${node.port} did not reach cluster_state:ok`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return { url: `redis://${addresses.join(',')}?cluster=true`, nodes, cli, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
