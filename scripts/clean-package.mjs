#!/usr/bin/env node
// `npm pack`'s prepack: empties the dist/ folders the package ships, so the build that
// follows (prepare) leaves no output of a source since deleted or renamed to be packed.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const dir of ['shared', 'client', 'cli', 'functions']) rmSync(join(root, 'dist', dir), { recursive: true, force: true });
