// The repository's root, found from this file whether it runs from soak/ (vitest) or dist/soak/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'wrangler.toml'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('wrangler.toml not found above soak/');
    dir = up;
  }
  return dir;
}
