// `npm run upstash-suite`: the official @upstash/redis test suite (every command test file,
// pkg/commands) against `emq gateway` in front of a private server, and the tally by cause.
// The suite comes from a pinned commit of upstash/redis-js in a local git snapshot, and runs
// under bun (its own runner), installed here with npm at a pinned version. Nothing is fetched
// but that npm package.
//
//   npm run upstash-suite                  against valkey-server
//   npm run upstash-suite -- --redis       against redis-server 7+ instead
//   npm run upstash-suite -- pkg/commands/xrange.test.ts   only those files
//
// UPSTASH_REDIS_JS_GIT names the snapshot's git directory (default: ../.mirror/upstash+redis-js/repo
// beside the repository); BUN names a bun binary to use instead of the pinned one.
// Exit code 0 when every failure has a known cause (scripts/upstash-tally.ts), 1 otherwise.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startGatewayProcess } from './gateway-process.js';
import { repoRoot } from './repo-root.js';
import { readJunit, tally } from './upstash-tally.js';
import { ensureServer, findServer, startServer } from './valkey.js';

/** upstash/redis-js, @upstash/redis 1.38.2's source (the baseline: 572 passed, 135 failed). */
const COMMIT = '777dc30585ae61e5826bb95f5a957e6dea277900';
/** The bun the suite was tallied with. */
const BUN_VERSION = '1.4.4';

const root = repoRoot();
const cache = join(root, '.cache', 'upstash-suite');

function fail(message: string): never {
  process.stderr.write(`upstash-suite: ${message}\n`);
  process.exit(2);
}

/** The suite's files at the pinned commit, unpacked once under .cache (node_modules resolve from the repository). */
function suite(): string {
  const git = resolve(process.env.UPSTASH_REDIS_JS_GIT ?? join(root, '..', '.mirror', 'upstash+redis-js', 'repo'));
  const dir = join(cache, COMMIT.slice(0, 12));
  if (existsSync(join(dir, 'packages', 'redis', 'pkg', 'commands'))) return join(dir, 'packages', 'redis');
  const how =
    'get a snapshot of upstash/redis-js with the search tool\'s fetch (source "github:upstash/redis-js"), which leaves a git ' +
    'directory at /work/.mirror/upstash+redis-js/repo, or point UPSTASH_REDIS_JS_GIT at any clone of it';
  if (!existsSync(git)) fail(`no git snapshot of upstash/redis-js at ${git}: ${how}`);
  try {
    execFileSync('git', ['--git-dir', git, 'cat-file', '-e', `${COMMIT}^{commit}`], { stdio: 'ignore' });
  } catch {
    fail(`the snapshot at ${git} lacks the pinned commit ${COMMIT}: ${how} (one that holds that commit)`);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = execFileSync('git', ['--git-dir', git, 'archive', COMMIT, 'packages/redis', 'tsconfig.base.json'], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  return join(dir, 'packages', 'redis');
}

/** A bun binary: $BUN, or the pinned version installed with npm under .cache once. */
function bun(): string {
  if (process.env.BUN) return process.env.BUN;
  const prefix = join(cache, `bun-${BUN_VERSION}`);
  const binary = join(prefix, 'node_modules', '.bin', 'bun');
  if (existsSync(binary)) return binary;
  process.stderr.write(`upstash-suite: installing bun ${BUN_VERSION} with npm under ${prefix}\n`);
  mkdirSync(prefix, { recursive: true });
  try {
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `bun@${BUN_VERSION}`], {
      stdio: 'inherit',
    });
  } catch {
    fail(`npm could not install bun@${BUN_VERSION}; install bun yourself and set BUN to its path`);
  }
  if (!existsSync(binary)) fail(`npm installed bun@${BUN_VERSION} but ${binary} is missing; set BUN to a bun binary`);
  return binary;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const redis = argv.includes('--redis');
  const files = argv.filter((a) => a !== '--redis');
  const pkg = suite();
  const runner = bun();
  const binary = redis ? (findServer('redis') ?? fail('--redis: no redis-server 7+ on this machine')) : ensureServer();

  const server = await startServer({ binary });
  const gateway = await startGatewayProcess(server.url);
  const junit = join(cache, 'junit.xml');
  const log = join(cache, 'last-run.log');
  rmSync(junit, { force: true });
  let code: number | null;
  try {
    process.stderr.write(`upstash-suite: bun test ${files.join(' ') || 'pkg/commands'} against emq gateway → ${server.name} (bun's output: ${log})\n`);
    // the token reaches bun through its environment, never its command line
    const child = spawn(
      runner,
      ['test', ...(files.length ? files : ['pkg/commands']), '--timeout', '20000', '--reporter=junit', `--reporter-outfile=${junit}`],
      {
        cwd: pkg,
        env: { ...process.env, UPSTASH_REDIS_REST_URL: gateway.url, UPSTASH_REDIS_REST_TOKEN: gateway.admin },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const out: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => out.push(d));
    code = await new Promise<number | null>((done) => child.once('exit', done));
    writeFileSync(log, Buffer.concat(out));
  } finally {
    const exit = await gateway.stop();
    await server.stop();
    if (exit !== 0) process.stderr.write(`upstash-suite: the gateway exited with ${exit}:\n${gateway.stderr().slice(-2000)}\n`);
  }
  if (!existsSync(junit)) fail(`bun wrote no report (exit ${code}); see ${log}`);
  const { text, other } = tally(readJunit(readFileSync(junit, 'utf8')));
  process.stdout.write(`upstash/redis-js ${COMMIT.slice(0, 8)} (${files.join(' ') || 'pkg/commands'}) → emq gateway → ${server.name}\n${text}\n`);
  process.exit(other === 0 ? 0 : 1);
}

await main();
