// Imported first by vitest.config.ts, before @cloudflare/vitest-pool-workers (and the
// wrangler/miniflare code it bundles) loads: keeps a plain `npx vitest run` off the network
// (scripts/offline-env.ts says what and why). Values set in the caller's environment win.
import { goOffline } from '../../scripts/offline-env.js';

goOffline();
