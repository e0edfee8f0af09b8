// What keeps wrangler and miniflare off the network and out of ~/.config: without these,
// miniflare fetches request.cf data at startup and wrangler sends metrics. Values already
// in the environment win. Used by the tests (through test/workers/offline-env.ts), the soak
// and `npm start`.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo-root.js';

export function offlineEnv(): Record<string, string> {
  return {
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    XDG_CONFIG_HOME: join(repoRoot(), '.cache', 'xdg'),
  };
}

/** Sets each variable this process has not set yet, and makes the config folder. */
export function goOffline(): void {
  for (const [name, value] of Object.entries(offlineEnv())) process.env[name] ??= value;
  mkdirSync(process.env.XDG_CONFIG_HOME!, { recursive: true });
}
