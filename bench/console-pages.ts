// Measures (asserts nothing) how fast the console's pages load with 200 queues and 10,000 jobs
// in one queue (issue 28): a private Valkey, `emq producer` over glide and the console, in this
// process; the keyspace filled through the producer API (batches). For each page: the console's
// answer time over HTTP (fetch, Bearer; the server's whole work: its producer calls and the
// render), and headless Chromium's load (navigation start to the load event, with the style
// sheet and the script). Run: npm run build:node && node dist/bench/console-pages.js
// Env: CONSOLE_BENCH_RUNS (20 per page); CONSOLE_BENCH_VIA=worker: over `npm start` (the Worker
// under wrangler dev, through its gateway) instead of `emq producer`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startConsole } from '../functions/console/node.js';
import { startProducer } from '../functions/producer/node.js';
import { repoRoot } from '../scripts/repo-root.js';
import { ensureTool, freePort, startServer } from '../scripts/valkey.js';

const RUNS = Number(process.env.CONSOLE_BENCH_RUNS) || 20;
const TOKEN = 'console-bench-token-0123456789abcdef';
const GROUPS = ['PRT0KHTOWnGLuC', 'USR0NgWEfAEJfs', 'ORG0KHTOWnGLuC'];

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

interface Served {
  producer: string;
  console: string;
  stop(): Promise<void>;
}

/** `emq producer` over glide and the console, in this process. */
async function inProcess(valkeyUrl: string): Promise<Served> {
  const producer = await startProducer({
    ...process.env,
    VALKEY_URL: valkeyUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    EMQ_LOG: 'off',
    EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] }]),
  });
  const served = await startConsole({ ...process.env, EMQ_CONSOLE_PRODUCER_URL: producer.url, EMQ_CONSOLE_PORT: '0' }).catch(async (err: unknown) => {
    await producer.stop();
    throw err;
  });
  return {
    producer: producer.url,
    console: served.url,
    async stop() {
      await served.stop();
      await producer.stop();
    },
  };
}

/** `npm start` as it runs (node dist/scripts/dev.js): the Worker under wrangler dev, through its gateway, and its console. */
async function npmStart(valkeyUrl: string): Promise<Served> {
  const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'scripts', 'dev.js')], {
    cwd: repoRoot(),
    env: { ...process.env, VALKEY_URL: valkeyUrl, PORT: String(await freePort()), EMQ_DEV_TOKEN: TOKEN, EMQ_CONSOLE_PORT: '0', EMQ_LOG: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: stopping it reaches wrangler and workerd
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  };
  let out = '';
  const urls = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /Producer: (\S+)[\s\S]*Console:\s+(\S+)[\s\S]*Ctrl-C stops everything/.exec(out);
      if (m) resolve(m);
    });
    child.stderr!.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${out.slice(-2000)}`)));
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { producer: urls[1]!, console: urls[2]!, stop };
}

async function main(): Promise<void> {
  const valkey = await startServer();
  // stopped whatever happens: a private server must not outlive the run
  const worker = process.env.CONSOLE_BENCH_VIA === 'worker';
  const served = await (worker ? npmStart(valkey.url) : inProcess(valkey.url)).catch(async (err: unknown) => {
    await valkey.stop();
    throw err;
  });
  const producer = { url: served.producer };
  const consoleServer = { url: served.console, stop: () => served.stop() };
  process.stdout.write(`over ${worker ? 'npm start (the Worker under wrangler dev, through the gateway)' : 'emq producer (glide), in this process'}\n`);
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const batch = async (queue: string, items: unknown[]) => {
    const res = await fetch(`${producer.url}/v1/queues/${queue}/batch`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(items),
    });
    if (res.status !== 200) throw new Error(`batch: ${res.status} ${await res.text()}`);
  };
  try {
    const t0 = performance.now();
    for (let i = 0; i < 199; i++) await batch(`bench-q-${String(i).padStart(3, '0')}`, [{ payload: `job ${i}` }, { payload: 'later', delay: '1h' }]);
    // the big queue: 10,000 jobs, flat, in three lanes, and scheduled
    for (let b = 0; b < 10; b++) {
      await batch(
        'bench-big',
        Array.from({ length: 1_000 }, (_, i) => {
          const n = b * 1_000 + i;
          const kind = n % 4;
          return {
            payload: `payload ${n} ${'x'.repeat(100)}`,
            ...(kind === 1 && { group: GROUPS[n % 3] }),
            ...(kind === 2 && { delay: `${60 + (n % 600)}m` }),
          };
        }),
      );
    }
    const firstJob = (await (await fetch(`${producer.url}/v1/queues/bench-big/jobs?state=pending&limit=1`, { headers: auth })).json()) as {
      jobs?: Array<{ id: string }>;
    };
    process.stdout.write(`filled 200 queues and 10,000 jobs in bench-big in ${ms(performance.now() - t0)}\n`);
    const pages: Array<[string, string]> = [
      ['queues (200)', '/'],
      ['queue bench-big (10,000 jobs)', '/q/bench-big'],
      ...(firstJob.jobs?.[0] ? [['a job of bench-big', `/q/bench-big/jobs/${firstJob.jobs[0].id}`] as [string, string]] : []),
      ['send', '/send'],
    ];
    const profile = mkdtempSync(join(tmpdir(), 'emq-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: ensureTool('chromium')!,
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
      extraHTTPHeaders: auth,
    });
    const page = await context.newPage();
    process.stdout.write(`| page | console answer, median | p95 | Chromium load, median | p95 |\n| --- | --- | --- | --- | --- |\n`);
    for (const [name, path] of pages) {
      const server: number[] = [];
      const browser: number[] = [];
      for (let i = 0; i < RUNS + 2; i++) {
        const s = performance.now();
        const res = await fetch(`${consoleServer.url}${path}`, { headers: auth });
        await res.text();
        if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
        const took = performance.now() - s;
        await page.goto(`${consoleServer.url}${path}`, { waitUntil: 'load' });
        // the page's own navigation timing (a string: this file is compiled without the DOM's types)
        const load = (await page.evaluate(
          "(() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; })()",
        )) as number;
        if (i >= 2) server.push(took), browser.push(load); // two warm-ups
      }
      process.stdout.write(
        `| ${name} | ${ms(quantile(server, 0.5))} | ${ms(quantile(server, 0.95))} | ${ms(quantile(browser, 0.5))} | ${ms(quantile(browser, 0.95))} |\n`,
      );
    }
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  } finally {
    await consoleServer.stop();
    await valkey.stop();
  }
}

await main();
