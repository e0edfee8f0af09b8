// Must stay the first import: offline defaults for wrangler/miniflare before they load.
import './test/workers/offline-env.js';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Root-level global setups run once per run, in this order, whichever projects are
    // selected, with plain Node module resolution; what they provide() reaches every
    // project, the workerd one included (inject('servers') works in both). The projects
    // below do not `extends: true`, so none of this runs twice.
    //  - test/global-setup.ts: the Valkey/Redis servers (`servers`).
    //  - test/workers/global-setup.ts: the Node-side servers the workerd tests call; it
    //    can read `servers` (see the comment at its top for why it is not a
    //    workers-project globalSetup).
    globalSetup: ['test/global-setup.ts', 'test/workers/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // the Worker logs a JSON line per request (EMQ_LOG): not shown, since nearly every workerd
    // test sends requests (test/workers/observability.test.ts reads them through a spy)
    onConsoleLog: (log) => (/^\{"time":"[^"]*","level":"info","app":"worker","msg":"request"/.test(log) ? false : undefined),
    projects: [
      {
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/workers/**'],
          // Files share one server and read server-wide counters (INFO commandstats): one at a time.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Test files run inside workerd (@cloudflare/vitest-pool-workers: one workerd per
        // test file). No wrangler config and no `main`: the runtime is configured here.
        // The pool itself adds nodejs_compat_v2 and the Node module flags it needs.
        plugins: [
          cloudflareTest({
            miniflare: {
              compatibilityDate: '2026-05-03',
            },
          }),
        ],
        test: {
          name: 'workers',
          include: ['test/workers/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
