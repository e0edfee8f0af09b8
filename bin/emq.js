#!/usr/bin/env node
// The emq command; its code is compiled to dist/ by `npm run build` (run by npm install).
try {
  await import('../dist/cli/emq.js');
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/emq.js')) {
    process.stderr.write('emq: not built yet: run `npm install` (or `npm run build`) in the project first\n');
    process.exit(1);
  }
  throw err;
}
