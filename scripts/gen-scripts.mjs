#!/usr/bin/env node
// Writes shared/scripts.ts from lua/*.lua: each script's text as sent to Valkey and its SHA-1,
// so runtime code never reads files and anyone can recompute the digest from the repository.
//
// A script may include a library from lua/lib/ with a line of its own: `--#include lib/wire.lua`.
// The sent text is the script with that line kept and the library's helpers it uses inlined
// after it, closed by `--#end lib/wire.lua`: self-contained. A library's code (the file after
// its opening --[[ ]] header) is top-level `local` definitions only; a helper is inlined when
// the script names it, or a helper inlined names it, so a script carries only what it runs
// (the text rides in a REST request line after NOSCRIPT, and in the Worker bundle).
// A script's own opening --[[ ]] header, its contract, stays in the repository: the sent text
// has one line naming the file in its place. The SHA-1 is over the sent text, so
// `sha1sum lua/<name>.lua` is not a script's SHA-1: use --print or --sha1 below. Refused: an include of a file not in lua/lib/, one library
// included twice, an include inside a library (nested), any other line starting with --#, a
// library without its header or with a top-level statement other than a local definition, an
// include of which the script uses nothing, and any byte outside printable ASCII (tabs and LF allowed) in a
// script or a library, so that the text is its bytes.
//
// lua/library/<name>.lua holds a script of the EchoMQ library itself, its text as the library
// sends it, sent byte for byte (no header left out, nothing included), so its SHA-1 is the
// library's (`sha1sum lua/library/<name>.lua` is its SHA-1). Its contract, which a header
// would have held, is the sibling lua/library/<name>.md, required, which says
// `  Capability: control` when the script writes. Refused: a library script without its .md,
// with a --# line, or named as a script of lua/.
//
//   node scripts/gen-scripts.mjs                writes shared/scripts.ts
//   node scripts/gen-scripts.mjs --check        exits 1 when shared/scripts.ts is not what it would write
//   node scripts/gen-scripts.mjs --print NAME   writes the text sent for lua/NAME.lua to stdout
//                                               (`... --print enqueue | sha1sum` is its SHA-1)
//   node scripts/gen-scripts.mjs --sha1         prints every script's SHA-1, as sha1sum does
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = `${root}shared/scripts.ts`;

const camel = (name) => name.replace(/[-_](\w)/g, (_, c) => c.toUpperCase());

function fail(message) {
  console.error(`gen-scripts: ${message}`);
  process.exit(1);
}

/** A file of lua/ as text, refused unless printable ASCII (tabs and LF allowed). */
function ascii(path) {
  const bytes = readFileSync(`${root}lua/${path}`);
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes) || /[^\x09\x0a\x20-\x7e]/.test(text)) {
    fail(`lua/${path} must be printable ASCII (tabs and LF allowed) so its text is its bytes`);
  }
  return text;
}

const libraries = new Set(
  (() => {
    try {
      return readdirSync(`${root}lua/lib`).filter((f) => f.endsWith('.lua'));
    } catch {
      return [];
    }
  })().map((f) => `lib/${f}`),
);

/** A library's code: the file after its opening --[[ ]] header; it includes nothing. */
function library(path) {
  const text = ascii(path);
  const header = /^--\[\[\n[\s\S]*?\n\]\]\n+/.exec(text);
  if (!header) fail(`lua/${path} must open with a --[[ ]] header saying what each helper guarantees`);
  const code = text.slice(header[0].length);
  const directive = /^--#.*$/m.exec(code);
  if (directive) fail(`lua/${path}: ${JSON.stringify(directive[0])}: a library includes nothing (no nested includes)`);
  return code.endsWith('\n') ? code : `${code}\n`;
}

/** A library's helpers, in file order: its code cut before each top-level `local`, each piece with the name it defines. */
function helpers(path) {
  const code = library(path);
  const stray = /^(?![ \t]|local |end\b|[})]|--|$).*$/m.exec(code);
  if (stray) fail(`lua/${path}: ${JSON.stringify(stray[0])}: a library's top level is local definitions only`);
  return code
    .split(/^(?=local )/m)
    .filter((piece) => piece.trim() !== '')
    .map((piece) => ({ name: /^local (?:function )?([A-Za-z_]\w*)/.exec(piece)[1], text: `${piece.trimEnd()}\n` }));
}

/** Whether Lua text names `name` (not as a field: `string.match` does not name match). */
const names = (text, name) => new RegExp(`(?<![\\w.])${name}(?!\\w)`).test(text);

/**
 * The text sent for lua/<file>: its opening --[[ ]] header (the contract, read in the repository)
 * left out for one line naming the file, and each include line followed by the helpers of that
 * library the script uses and its end line. The header is most of each file: leaving it out
 * keeps the EVAL fallback's text (a URL path over REST) and the Worker bundle small.
 */
function expand(file) {
  const source = ascii(file);
  const header = /^--\[\[\n[\s\S]*?\n\]\]\n/.exec(source);
  if (!header) fail(`lua/${file} must open with a --[[ ]] header: its contract (KEYS, ARGV, replies, errors, order)`);
  const body = `-- lua/${file}: its contract is that file's opening comment\n${source.slice(header[0].length)}`;
  const includes = [];
  for (const line of body.match(/^--#.*$/gm) ?? []) {
    const path = /^--#include (lib\/[a-z0-9-]+\.lua)$/.exec(line)?.[1];
    if (!path || !libraries.has(path))
      fail(`lua/${file}: ${JSON.stringify(line)}: a --# line must be --#include of a file in lua/lib/ (${[...libraries].join(', ') || 'none'})`);
    if (includes.includes(path)) fail(`lua/${file} includes ${path} twice`);
    includes.push(path);
  }
  // the helpers used: named by the script, or by a helper used, until no more are named
  const pieces = includes.flatMap((path) => helpers(path).map((h) => ({ ...h, path })));
  const used = new Set();
  let scanned = body.replace(/^--#.*$/gm, ''); // an include line names its library's file, no helper
  for (let more = true; more; ) {
    more = false;
    for (const h of pieces) {
      if (!used.has(h) && names(scanned, h.name)) {
        used.add(h);
        scanned += h.text;
        more = true;
      }
    }
  }
  return body.replace(/^--#include (.*)$/gm, (line, path) => {
    const taken = pieces.filter((h) => h.path === path && used.has(h));
    if (taken.length === 0) fail(`lua/${file} includes ${path} and uses none of its helpers`);
    return `${line}\n${taken.map((h) => h.text).join('\n')}--#end ${path}`;
  });
}

// a script that changes what workers will do (control, issue 25) says so in its contract
const controls = (contract) => /^ {2}Capability: control$/m.test(contract);
const sha1Of = (text) => createHash('sha1').update(text, 'utf8').digest('hex');

const ours = readdirSync(`${root}lua`)
  .filter((f) => f.endsWith('.lua'))
  .sort()
  .map((file) => {
    const name = file.slice(0, -'.lua'.length);
    const text = expand(file);
    return { file, name, text, control: controls(ascii(file)), sha1: sha1Of(text) };
  });

/** The library's scripts in lua/library/: each sent as its file's bytes, its contract the sibling .md. */
const verbatim = (() => {
  try {
    return readdirSync(`${root}lua/library`);
  } catch {
    return [];
  }
})()
  .filter((f) => f.endsWith('.lua'))
  .sort()
  .map((f) => {
    const file = `library/${f}`;
    const name = f.slice(0, -'.lua'.length);
    const text = ascii(file);
    if (/^--#/m.test(text)) fail(`lua/${file}: a library script is sent byte for byte, so it includes nothing (no --# line)`);
    if (ours.some((s) => s.name === name)) fail(`lua/${file}: lua/${name}.lua has its name`);
    let contract;
    try {
      contract = readFileSync(`${root}lua/library/${name}.md`, 'utf8');
    } catch {
      fail(`lua/${file} needs lua/library/${name}.md: its contract (KEYS, ARGV, replies, what it writes), which its text cannot carry`);
    }
    return { file, name, text, control: controls(contract), sha1: sha1Of(text) };
  });

// in the order of their file names, as lua/ lists them (enqueue-once.lua before enqueue.lua)
const fileName = (s) => `${s.name}.lua`;
const scripts = [...ours, ...verbatim].sort((a, b) => (fileName(a) < fileName(b) ? -1 : fileName(a) > fileName(b) ? 1 : 0));

const entries = scripts.map(
  ({ file, name, text, sha1 }) =>
    `/** lua/${file} */\nexport const ${camel(name)}Script: Script = {\n  name: ${JSON.stringify(name)},\n  sha1: '${sha1}',\n  text: ${JSON.stringify(text)},\n};\n`,
);

const out = [
  '// Generated by scripts/gen-scripts.mjs from lua/*.lua and the lua/lib/ they include. Do not edit: change the .lua file and run `npm run gen`.',
  '',
  '/** A server-side script: its exact text (includes expanded) and the SHA-1 that EVALSHA names it by. */',
  'export interface Script {',
  '  readonly name: string;',
  '  readonly sha1: string;',
  '  readonly text: string;',
  '}',
  '',
  ...entries,
  "/** Every script, for allow-lists (the gateway's producer scope) and retry rules. */",
  `export const allScripts: readonly Script[] = [${scripts.map((s) => `${camel(s.name)}Script`).join(', ')}];`,
  '',
  "/** The scripts whose header says `Capability: control`: the gateway's producer scope may not run them, its control scope may. */",
  `export const controlScripts: readonly Script[] = [${scripts
    .filter((s) => s.control)
    .map((s) => `${camel(s.name)}Script`)
    .join(', ')}];`,
  '',
].join('\n');

const args = process.argv.slice(2);
if (args[0] === '--print') {
  const script = scripts.find((s) => s.name === args[1]);
  if (!script) fail(`--print NAME: one of ${scripts.map((s) => s.name).join(', ')}`);
  process.stdout.write(script.text);
} else if (args[0] === '--sha1') {
  for (const s of scripts) console.log(`${s.sha1}  ${s.name}`);
} else if (args[0] === '--check') {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== out) fail('shared/scripts.ts is stale: run `npm run gen`');
} else if (args.length === 0) {
  writeFileSync(target, out);
} else {
  fail(`unknown arguments ${args.join(' ')}: none, --check, --print NAME or --sha1`);
}
