// `npm run build:worker` (the Worker half of `npm run build`): a bundle for every
// environment in wrangler.toml, each size printed, each under the 82 KiB gzip budget. The
// Worker carries every script's text for the NOSCRIPT fallback (the three flow scripts took it
// past 40 KiB; the Lua gate helpers copied into each script, the REST connection's plan, the
// queue patterns and the fixed error texts of the second security review to 49 KiB; the
// control routes and their seven scripts, issue 25, to 58 KiB; the repeatables' scripts and
// routes, issue 26, to 62.5 KiB; its cron schedules to 75 KiB: croner, the cron library the Worker
// shares with `emq producer` so both read an expression alike, is about 9 KiB of that); the
// listings of issue 28 (@job-list's text, the queue listing's SCAN walk and their OpenAPI) to
// 78.2 KiB (78.9 once merged with main at e45262a); ?wait=N, issue 27, about 0.7 KiB more (its
// parse, the problem, the variable and the document's rows). A Node
// dependency slipping in would add hundreds of KiB: that is what the budget catches.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

it('bundles every wrangler.toml environment and prints its size, each under 82 KiB gzipped', { timeout: 120_000 }, () => {
  const toml = readFileSync(`${root}wrangler.toml`, 'utf8');
  const envs = [...toml.matchAll(/^\[env\.([^\].]+)\]\s*$/gm)].map((m) => m[1]!);
  expect(envs.length).toBeGreaterThanOrEqual(2);
  const out = execFileSync('npm', ['run', '--silent', 'build:worker'], { cwd: root, encoding: 'utf8', timeout: 110_000 });
  for (const env of ['default', ...envs]) {
    const line = out.split('\n').find((l) => l.trim().startsWith(`${env} `));
    expect(line, `a size line for ${env} in:\n${out}`).toBeDefined();
    const gzip = Number(/gzip\s+([\d.]+) KiB/.exec(line!)?.[1]);
    expect(gzip).toBeGreaterThan(1);
    expect(gzip).toBeLessThan(82);
    // the bundle really is the worker: it has the routes and no Node-only client in it
    const bundle = readFileSync(`${root}dist/worker/${env}/worker.js`, 'utf8');
    expect(bundle).toContain('/v1/queues/:queue/jobs');
    expect(bundle).toContain('/openapi.json');
    expect(bundle).not.toContain('valkey-glide');
    // nor the console (functions/console/: served by emq console and npm start, never the Worker)
    expect(bundle).not.toContain('EchoMQ console');
    expect(bundle).not.toContain('emq_console');
  }
  expect(toml).toMatch(/compatibility_date = "2026-0[1-5]-\d\d"/);
});
