// The repository's root, found from the calling file whether it runs from source (vitest)
// or from dist/: the nearest folder above holding wrangler.toml.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'wrangler.toml'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('wrangler.toml not found above scripts/');
    dir = up;
  }
  return dir;
}
