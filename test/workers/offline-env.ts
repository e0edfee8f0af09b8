// Imported first by vitest.config.ts, before @cloudflare/vitest-pool-workers (and the
// wrangler/miniflare code it bundles) loads: keeps a plain `npx vitest run` off the network.
// Without these, miniflare fetches request.cf data from the internet at startup and wrangler
// may try to send metrics / touch ~/.config. Values set in the caller's environment win.
import { fileURLToPath } from 'node:url';

const defaults: Record<string, string> = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  XDG_CONFIG_HOME: fileURLToPath(new URL('../../.cache/xdg', import.meta.url)),
};
for (const [name, value] of Object.entries(defaults)) process.env[name] ??= value;
