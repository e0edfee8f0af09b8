// shared/ runs unchanged on Node, workerd, Deno and Bun: no Node built-ins, no Workers
// modules, no glide or undici, except in the glide connection, the REST connection's undici
// send (connections/rest-node.ts) and the package's Node entry (node.ts), that only Node code imports.
// (npm run typecheck also compiles shared/ without Node's types.)
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../shared/', import.meta.url));
const NODE_ONLY = new Set([
  'connections/glide.ts',
  'connections/glide-scan.ts',
  'connections/glide-wire.ts',
  'connections/glide-replies.ts',
  'connections/rest-node.ts',
  'node.ts',
]);

function files(dir: string, prefix = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), `${prefix}${e.name}/`) : e.name.endsWith('.ts') ? [`${prefix}${e.name}`] : [],
  );
}

it('the core imports only relative modules', () => {
  const core = files('').filter((f) => !NODE_ONLY.has(f));
  expect(core.length).toBeGreaterThan(5);
  for (const f of core) {
    const text = readFileSync(join(root, f), 'utf8');
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    for (const s of specifiers) expect(s, `${f} imports ${s}`).toMatch(/^\.\.?\//);
    expect(text, f).not.toMatch(/\b(process|Buffer|require)\b[.(]/);
  }
});

it('nothing in the core imports the glide connection or the Node-only REST send', () => {
  for (const f of files('').filter((f) => !NODE_ONLY.has(f))) {
    expect(readFileSync(join(root, f), 'utf8'), f).not.toMatch(/connections\/glide|\.\/glide(?:-wire|-replies)?\.js|rest-node\.js|\.\/node\.js/);
  }
});
