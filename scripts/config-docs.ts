// shared/config/variables.ts → docs/configuration.md's table and the comments at the top
// of wrangler.toml (the Worker's vars and secrets), each between its marker lines; the rest of
// both files is left exactly as it is (scripts/regions.ts owns wrangler.toml's generated end).
//   npm run config-docs                                rewrite both
//   node dist/scripts/config-docs.js --check           change nothing; exit 1 if either differs
// Exit codes: 0 done or up to date; 1 drift under --check, or markers missing; 2 usage.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { README_BEGIN, README_END, WRANGLER_BEGIN, WRANGLER_END, readmeSection, replaceBetween, wranglerComments } from '../shared/config/docs.js';
import { repoRoot } from './repo-root.js';

const DOCS = [
  { file: 'docs/configuration.md', begin: README_BEGIN, end: README_END, section: readmeSection },
  { file: 'wrangler.toml', begin: WRANGLER_BEGIN, end: WRANGLER_END, section: wranglerComments },
];

/** Each file's text as it is and as the table makes it. */
function expected(root = repoRoot()): Array<{ file: string; have: string; want: string }> {
  return DOCS.map(({ file, begin, end, section }) => {
    const have = readFileSync(join(root, file), 'utf8');
    return { file, have, want: replaceBetween(have, begin, end, section()) };
  });
}

function main(argv: string[]): number {
  const check = argv[0] === '--check';
  if (argv.length > (check ? 1 : 0)) {
    console.error('usage: npm run config-docs [-- --check]');
    return 2;
  }
  let docs: ReturnType<typeof expected>;
  try {
    docs = expected();
  } catch (err) {
    console.error(`config-docs: ${(err as Error).message}`);
    return 1;
  }
  let drift = 0;
  for (const { file, have, want } of docs) {
    if (have === want) console.log(`config-docs: ${file} matches shared/config/variables.ts`);
    else if (check) {
      drift++;
      const a = have.split('\n');
      const line = want.split('\n').findIndex((l, i) => l !== a[i]);
      console.error(`config-docs: ${file} is out of date with shared/config/variables.ts: run \`npm run config-docs\` (first difference at line ${line + 1})`);
    } else {
      writeFileSync(join(repoRoot(), file), want);
      console.log(`config-docs: ${file} rewritten from shared/config/variables.ts`);
    }
  }
  return drift ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
