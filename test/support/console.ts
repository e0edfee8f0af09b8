// The console's test harness: the console beside each producer it runs against (`emq console`
// over `emq producer`; `npm start`'s own, over the Worker through its gateway), and headless
// Chromium (Debian's `chromium`, installed as the project installs Valkey: scripts/valkey.ts
// ensureTool) driven by playwright-core, in a fresh profile.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { ensureTool, freePort } from '../../scripts/valkey.js';
import { startProducerProcess } from './producer.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'emq.js');

/** Where a run's screenshots go (ignored by git). */
export const ARTIFACTS = join(root, 'test-artifacts', 'console');

export interface ConsoleTarget {
  /** The producer API's URL (what the console reads through). */
  producer: string;
  /** The console's URL. */
  console: string;
  stop(): Promise<void>;
}

/** Runs a child until it prints what `ready` matches; its output so far on failure. */
async function started(child: ChildProcess, ready: RegExp, what: string, ms = 90_000): Promise<RegExpExecArray> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${ms} ms:\n${out.slice(-3000)}`)), ms);
    const look = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) clearTimeout(timer), resolve(m);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`${what} exited with ${code}:\n${out.slice(-3000)}`))));
  });
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** `emq producer` over glide to `valkeyUrl`, and `emq console` over it. */
export async function consoleOverProducer(valkeyUrl: string, env: Record<string, string>): Promise<ConsoleTarget> {
  const producer = await startProducerProcess({ VALKEY_URL: valkeyUrl, ...env });
  const child = spawn(process.execPath, [bin, 'console'], {
    env: { ...process.env, ...env, EMQ_CONSOLE_PRODUCER_URL: producer.url, EMQ_CONSOLE_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [, url] = await started(child, /^(http:\/\/\S+)\n/, 'emq console').catch(async (err) => {
    await producer.stop();
    throw err;
  });
  return {
    producer: producer.url,
    console: url!,
    async stop() {
      await stopped(child);
      await producer.stop();
    },
  };
}

/** `npm start` as it runs (node dist/scripts/dev.js, built by pretest): the Worker under wrangler dev, its gateway, its console. */
export async function consoleOfNpmStart(valkeyUrl: string, env: Record<string, string>): Promise<ConsoleTarget> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'dist', 'scripts', 'dev.js')], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), VALKEY_URL: valkeyUrl, EMQ_CONSOLE_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const m = await started(child, /Producer: (\S+)[\s\S]*Console:\s+(\S+)[\s\S]*Ctrl-C stops everything/, 'npm start', 120_000).catch(async (err) => {
    await stopped(child);
    throw err;
  });
  return { producer: m[1]!, console: m[2]!, stop: () => stopped(child) };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium in a fresh profile (its own --user-data-dir, removed on close). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = ensureTool('chromium');
  if (!executablePath) throw new Error("no chromium: install Debian's `chromium` (apt-get install chromium)");
  const profile = mkdtempSync(join(tmpdir(), 'emq-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
