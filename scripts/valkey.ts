// Finds, installs and runs a private Valkey (or Redis 7+) for tests and local runs.
// Node only: this is tooling, never imported by shared/.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Flavor = 'valkey' | 'redis';

export interface ServerBinary {
  flavor: Flavor;
  path: string;
  version: string;
}

export interface RunningServer {
  name: string;
  flavor: Flavor;
  version: string;
  url: string;
  port: number;
  /** The current process (a new one after restart). */
  readonly pid: number;
  /** Starts the server again on the same port, directory and config (after a crash or kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const SEARCH_DIRS = ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/opt/homebrew/bin'];

function log(message: string): void {
  process.stderr.write(`[valkey] ${message}\n`);
}

export function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...SEARCH_DIRS];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

function versionOf(path: string): string | undefined {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    return /v=(\d+\.\d+\.\d+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

function major(version: string): number {
  return Number(version.split('.')[0]);
}

/** The installed server of a flavor, if any (Redis only from 7 on). */
export function findServer(flavor: Flavor): ServerBinary | undefined {
  const path = which(`${flavor}-server`);
  if (!path) return undefined;
  const version = versionOf(path);
  if (!version) return undefined;
  if (flavor === 'redis' && major(version) < 7) return undefined;
  return { flavor, path, version };
}

interface OsRelease {
  id: string;
  like: string;
  codename: string;
}

function osRelease(): OsRelease | undefined {
  try {
    const text = readFileSync('/etc/os-release', 'utf8');
    const get = (k: string) => new RegExp(`^${k}="?([^"\\n]*)"?$`, 'm').exec(text)?.[1] ?? '';
    return { id: get('ID'), like: get('ID_LIKE'), codename: get('VERSION_CODENAME') };
  } catch {
    return undefined;
  }
}

interface AptSource {
  uri: string;
  suites: string[];
  signedBy?: string;
}

/** The apt sources this machine already has (deb822 .sources and one-line .list files). */
function aptSources(): AptSource[] {
  const found: AptSource[] = [];
  const files: string[] = [];
  if (existsSync('/etc/apt/sources.list')) files.push('/etc/apt/sources.list');
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir)) {
    for (const f of readdirSync(dir)) if (/\.(list|sources)$/.test(f)) files.push(join(dir, f));
  }
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (k: string) => new RegExp(`^${k}:\\s*(.+)$`, 'mi').exec(stanza)?.[1]?.trim();
        if (!/\bdeb\b/.test(field('Types') ?? '') || /^enabled:\s*no/im.test(stanza)) continue;
        const signedBy = field('Signed-By');
        for (const uri of (field('URIs') ?? '').split(/\s+/).filter(Boolean)) {
          found.push({ uri, suites: (field('Suites') ?? '').split(/\s+/), ...(signedBy ? { signedBy } : {}) });
        }
      }
    } else {
      for (const line of text.split('\n')) {
        const m = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)/.exec(line.trim());
        if (!m) continue;
        const signedBy = /signed-by=(\S+)/.exec(m[1] ?? '')?.[1];
        found.push({ uri: m[2]!, suites: [m[3]!], ...(signedBy ? { signedBy } : {}) });
      }
    }
  }
  return found;
}

function apt(args: string[]): void {
  execFileSync('apt-get', args, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 600_000,
  });
}

function aptHasCandidate(pkg: string): boolean {
  try {
    const out = execFileSync('apt-cache', ['policy', pkg], { encoding: 'utf8' });
    const candidate = /Candidate:\s*(\S+)/.exec(out)?.[1];
    return candidate !== undefined && candidate !== '(none)';
  } catch {
    return false;
  }
}

/**
 * Adds the release's backports suite from the mirror the machine already uses, so the
 * repository never names a host. Returns false when no such mirror is configured.
 */
function addBackports(codename: string): boolean {
  const main = aptSources().find((s) => s.suites.includes(codename));
  if (!main) return false;
  const file = `/etc/apt/sources.list.d/emq-${codename}-backports.sources`;
  if (!existsSync(file)) {
    const lines = ['Types: deb', `URIs: ${main.uri}`, `Suites: ${codename}-backports`, 'Components: main'];
    if (main.signedBy) lines.push(`Signed-By: ${main.signedBy}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    log(`added ${codename}-backports from the mirror in this machine's apt sources (${file})`);
  }
  return true;
}

/** Runs apt-get install without letting package scripts start system services. */
function aptInstall(packages: string[]): void {
  const policy = '/usr/sbin/policy-rc.d';
  const ours = !existsSync(policy);
  if (ours) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    apt(['install', '-y', '--no-install-recommends', ...packages]);
  } finally {
    if (ours) unlinkSync(policy);
  }
}

function canInstall(): OsRelease | undefined {
  const os = osRelease();
  if (!os || !/debian|ubuntu/.test(`${os.id} ${os.like}`)) return undefined;
  if (process.getuid?.() !== 0) return undefined;
  return os;
}

const HOW_TO_INSTALL =
  'Install Valkey 8 (Debian 12: `apt-get install -t bookworm-backports valkey-server`; Debian 13 and Ubuntu 24.04+: ' +
  '`apt-get install valkey-server`; macOS: `brew install valkey`), or Redis 7+ (`redis-server`), ' +
  'or point VALKEY_URL at a running server.';

/**
 * The server binary to run: valkey-server, else redis-server 7+ (said aloud), installing
 * from the distribution's packages when this is Debian or Ubuntu and we are root.
 * With `peers`, also installs redis-server 7 so suites can run against both.
 */
export function ensureServer(options: { peers?: boolean } = {}): ServerBinary {
  let valkey = findServer('valkey');
  const needRedis = options.peers === true && !findServer('redis');
  const os = !valkey || needRedis ? canInstall() : undefined;
  if (os) {
    const wanted: string[] = [];
    apt(['update']);
    if (!valkey) {
      if (!aptHasCandidate('valkey-server') && os.id === 'debian' && os.codename) addBackports(os.codename) && apt(['update']);
      if (aptHasCandidate('valkey-server')) {
        const target = aptTarget('valkey-server');
        wanted.push(`valkey-server${target}`, `valkey-tools${target}`);
      }
    }
    if (needRedis && aptHasCandidate('redis-server')) wanted.push('redis-server', 'redis-tools');
    if (wanted.length > 0) {
      log(`installing ${wanted.join(' ')} from the distribution's packages`);
      aptInstall(wanted);
    }
    valkey = findServer('valkey');
  }
  if (valkey) return valkey;
  const redis = findServer('redis');
  if (redis) {
    log(`valkey-server not found; using redis-server ${redis.version}, which speaks the same wire`);
    return redis;
  }
  throw new Error(`no valkey-server (or redis-server 7+) found. ${HOW_TO_INSTALL}`);
}

/**
 * A tool the bench measures against or loads with (webdis, wrk): its path, installing the
 * distribution's package of that name when it is missing and this is Debian or Ubuntu with
 * root, as ensureServer does; undefined when it is not there and cannot be installed.
 */
export function ensureTool(name: string): string | undefined {
  const found = which(name);
  if (found || !canInstall()) return found;
  apt(['update']);
  if (!aptHasCandidate(name)) return undefined;
  log(`installing ${name} from the distribution's packages`);
  aptInstall([name]);
  return which(name);
}

/** `=<version>` when the candidate lives only in a backports suite (apt won't pick it by default). */
function aptTarget(pkg: string): string {
  const out = execFileSync('apt-cache', ['madison', pkg], { encoding: 'utf8' });
  const line = out.split('\n').find((l) => l.includes('|'));
  const version = line?.split('|')[1]?.trim();
  return version ? `=${version}` : '';
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One RESP PING over a raw socket: true when the server answers (PONG, or NOAUTH when it wants a password). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('*1\r\n$4\r\nPING\r\n'));
    sock.on('data', (d) => done(/^(\+PONG|-NOAUTH)/.test(d.toString())));
  });
}

async function waitReady(port: number, child: ChildProcess, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server on port ${port} not ready after ${ms} ms`);
}

export interface StartOptions {
  binary?: ServerBinary;
  /** Extra config lines, e.g. ['cluster-enabled yes']. */
  config?: string[];
  port?: number;
}

/** Starts a private, unpersisted server on a free loopback port. */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const binary = options.binary ?? ensureServer();
  const dir = mkdtempSync(join(tmpdir(), `emq-${binary.flavor}-`));
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const conf = [
      `port ${port}`,
      'bind 127.0.0.1',
      'save ""',
      'appendonly no',
      `dir ${dir}`,
      'daemonize no',
      'loglevel warning',
      `logfile ${join(dir, 'server.log')}`,
      ...(options.config ?? []),
    ];
    writeFileSync(join(dir, 'server.conf'), `${conf.join('\n')}\n`);
    let child = spawn(binary.path, [join(dir, 'server.conf')], { stdio: 'ignore' });
    try {
      await waitReady(port, child, 10_000);
    } catch (err) {
      child.kill('SIGKILL');
      if (attempt < 3 && options.port === undefined) continue; // the port was taken meanwhile
      const tail = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8').slice(-500) : '';
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`could not start ${binary.path}: ${(err as Error).message}\n${tail}`);
    }
    const running = () => child.exitCode === null && child.signalCode === null;
    const halt = async () => {
      if (running()) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    };
    const restart = async () => {
      await halt();
      child = spawn(binary.path, [join(dir, 'server.conf')], { stdio: 'ignore' });
      // an AOF or a big dataset takes a while to load: PING answers LOADING until then
      await waitReady(port, child, 60_000);
    };
    const stop = async () => {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    };
    return {
      name: `${binary.flavor} ${binary.version}`,
      flavor: binary.flavor,
      version: binary.version,
      url: `redis://127.0.0.1:${port}`,
      port,
      get pid() {
        return child.pid!;
      },
      restart,
      stop,
    };
  }
}
