// The runtime copy of each script is the .lua file's text with its opening header (its
// contract) replaced by one line naming the file, and its includes expanded (each
// `--#include lib/<x>.lua` line followed by that library's code, after its header, and
// `--#end lib/<x>.lua`), and the SHA-1 of that text.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import * as scripts from '../shared/scripts.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const luaDir = join(root, 'lua');
const generator = join(root, 'scripts/gen-scripts.mjs');

/** A library's code as inlined: the file after its opening --[[ ]] header. */
const code = (lib: string) => readFileSync(join(luaDir, lib), 'utf8').replace(/^--\[\[\n[\s\S]*?\n\]\]\n+/, '');
let sha1s: string | undefined;

describe('shared/scripts.ts', () => {
  it.each(scripts.allScripts.map((s) => [s.name, s] as const))("holds lua/%s.lua with its includes expanded, and that text's SHA-1", (name, script) => {
    const source = readFileSync(join(luaDir, `${name}.lua`), 'utf8');
    const expanded = source
      .replace(/^--\[\[\n[\s\S]*?\n\]\]\n/, `-- lua/${name}.lua: its contract is that file's opening comment\n`)
      .replace(/^--#include (lib\/[a-z0-9-]+\.lua)$/gm, (line, lib: string) => `${line}\n${code(lib)}--#end ${lib}`);
    expect(script.text).toBe(expanded);
    expect(script.text).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
    expect(script.sha1).toBe(createHash('sha1').update(script.text, 'utf8').digest('hex'));
    // what the docs tell anyone to run to see the text sent, and its SHA-1
    expect(execFileSync('node', [generator, '--print', name], { encoding: 'utf8' })).toBe(script.text);
    sha1s ??= execFileSync('node', [generator, '--sha1'], { encoding: 'utf8' });
    expect(sha1s).toContain(`${script.sha1}  ${name}\n`);
  });

  it('has one entry per lua/*.lua file and is what the generator writes', () => {
    const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua'));
    const names = scripts.allScripts.map((s) => s.name);
    expect(names.sort()).toEqual(files.map((f) => f.slice(0, -4)).sort());
    // exits non-zero (and so throws) when shared/scripts.ts has drifted from lua/
    execFileSync('node', ['scripts/gen-scripts.mjs', '--check'], { cwd: root });
  });

  it('each script file opens with a header naming KEYS, ARGV and its replies', () => {
    for (const s of scripts.allScripts) {
      const source = readFileSync(join(luaDir, `${s.name}.lua`), 'utf8');
      expect(source.startsWith('--[[\n')).toBe(true);
      const header = source.slice(0, source.indexOf('\n]]'));
      expect(header).toMatch(/KEYS\[1\]/);
      expect(header).toMatch(/ARGV\[1\]/);
      expect(header).toMatch(/Replies/);
      expect(header).toMatch(/Errors/);
    }
  });

  it('every library under lua/lib/ is included by a script', () => {
    const libs = readdirSync(join(luaDir, 'lib')).filter((f) => f.endsWith('.lua'));
    expect(libs.length).toBeGreaterThan(0);
    for (const lib of libs)
      expect(
        scripts.allScripts.some((s) => s.text.includes(`\n--#include lib/${lib}\n`)),
        lib,
      ).toBe(true);
  });
});

describe('scripts/gen-scripts.mjs refuses', () => {
  // a copy of the generator in a tree of its own: it reads lua/ and writes shared/ beside itself
  const trees: string[] = [];
  afterAll(() => {
    for (const t of trees) rmSync(t, { recursive: true, force: true });
  });
  const LIB = '--[[\n  lib/a.lua: a test library.\n]]\n\nlocal function a() return 1 end\n';
  const HEAD = '--[[\n  @s: a test script.\n]]\n';
  const run = (files: Record<string, string>): { ok: boolean; out: string; written?: string } => {
    const tree = mkdtempSync(join(tmpdir(), 'gen-scripts-'));
    trees.push(tree);
    for (const dir of ['scripts', 'shared', 'lua/lib']) mkdirSync(join(tree, dir), { recursive: true });
    copyFileSync(generator, join(tree, 'scripts/gen-scripts.mjs'));
    for (const [path, text] of Object.entries(files)) writeFileSync(join(tree, 'lua', path), text);
    try {
      execFileSync('node', [join(tree, 'scripts/gen-scripts.mjs')], { encoding: 'utf8', stdio: 'pipe' });
      return { ok: true, out: '', written: readFileSync(join(tree, 'shared/scripts.ts'), 'utf8') };
    } catch (e) {
      return { ok: false, out: String((e as { stderr?: string }).stderr) };
    }
  };

  it('nothing in a tree it accepts, and expands an include there', () => {
    const r = run({ 'lib/a.lua': LIB, 's.lua': `${HEAD}-- s\n--#include lib/a.lua\nreturn a()\n` });
    expect(r.ok).toBe(true);
    expect(r.written).toContain(
      JSON.stringify(
        "-- lua/s.lua: its contract is that file's opening comment\n-- s\n--#include lib/a.lua\nlocal function a() return 1 end\n--#end lib/a.lua\nreturn a()\n",
      ),
    );
  });

  it.each([
    ['an include of a file not in lua/lib/', { 'lib/a.lua': LIB, 's.lua': `${HEAD}--#include lib/b.lua\n` }, /must be --#include of a file in lua\/lib\//],
    ['an include outside lua/lib/', { 'lib/a.lua': LIB, 's.lua': `${HEAD}--#include ../lib/a.lua\n` }, /must be --#include of a file in lua\/lib\//],
    ['another --# line', { 'lib/a.lua': LIB, 's.lua': `${HEAD}--#include lib/a.lua\n--#end lib/a.lua\n` }, /must be --#include of a file in lua\/lib\//],
    [
      'an include with trailing text',
      { 'lib/a.lua': LIB, 's.lua': `${HEAD}--#include lib/a.lua -- the helpers\n` },
      /must be --#include of a file in lua\/lib\//,
    ],
    ['a library included twice', { 'lib/a.lua': LIB, 's.lua': `${HEAD}--#include lib/a.lua\n--#include lib/a.lua\n` }, /twice/],
    [
      'a nested include',
      { 'lib/a.lua': LIB, 'lib/b.lua': `${LIB.replace('lib/a.lua', 'lib/b.lua')}--#include lib/a.lua\n`, 's.lua': `${HEAD}--#include lib/b.lua\n` },
      /no nested includes/,
    ],
    [
      'a library without its header',
      { 'lib/a.lua': 'local function a() return 1 end\n', 's.lua': `${HEAD}--#include lib/a.lua\n` },
      /must open with a --\[\[ \]\] header/,
    ],
    ['a script without its header', { 's.lua': 'return 1\n' }, /lua\/s\.lua must open with a --\[\[ \]\] header: its contract/],
    ['a script that is not printable ASCII', { 's.lua': `${HEAD}return 'caf\u00e9'\n` }, /lua\/s\.lua must be printable ASCII/],
    [
      'a library that is not printable ASCII',
      { 'lib/a.lua': `${LIB}-- \r\n`, 's.lua': `${HEAD}--#include lib/a.lua\n` },
      /lua\/lib\/a\.lua must be printable ASCII/,
    ],
  ] as const)('%s', (_, files, message) => {
    const r = run(files);
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(message);
  });
});
