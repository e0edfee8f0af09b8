#!/usr/bin/env node
// Bundles the Worker for every environment in wrangler.toml with `wrangler deploy --dry-run`
// (no account, no network) into dist/worker/<env>/, and prints each bundle's size.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const envNames = [...readFileSync(join(root, 'wrangler.toml'), 'utf8').matchAll(/^\[env\.([^\].\]]+)\]\s*$/gm)].map((m) => m[1]);
const targets = [{ name: 'default', args: [] }, ...envNames.map((name) => ({ name, args: ['--env', name] }))];

// wrangler waits on the network for metrics and account lookups unless told not to
const env = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME ?? join(root, '.cache', 'xdg'),
};
mkdirSync(env.XDG_CONFIG_HOME, { recursive: true });

const rows = [];
for (const t of targets) {
  const outdir = join(root, 'dist', 'worker', t.name);
  execFileSync(join(root, 'node_modules', '.bin', 'wrangler'), ['deploy', '--dry-run', '--outdir', outdir, ...t.args], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 120_000,
  });
  const file = readdirSync(outdir).find((f) => f.endsWith('.js'));
  if (!file) throw new Error(`no bundle in ${outdir}`);
  const bytes = readFileSync(join(outdir, file));
  rows.push({ env: t.name, file: join('dist', 'worker', t.name, file), size: statSync(join(outdir, file)).size, gzip: gzipSync(bytes, { level: 9 }).length });
}
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log('worker bundles (wrangler deploy --dry-run):');
for (const r of rows) console.log(`  ${r.env.padEnd(10)} ${kib(r.size).padStart(10)}  gzip ${kib(r.gzip).padStart(9)}  ${r.file}`);
