// The runtime copy of each script is the .lua file's text with its opening header (its
// contract) replaced by one line naming the file, and its includes expanded (each
// `--#include lib/<x>.lua` line followed by the helpers of that library the script uses,
// verbatim and in file order, and `--#end lib/<x>.lua`), and the SHA-1 of that text. A script
// of the EchoMQ library, lua/library/<x>.lua, is its file's bytes, its contract beside it.
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

/** A library's helpers: its code (the file after its opening --[[ ]] header) cut before each top-level local. */
const helpersOf = (lib: string) =>
  readFileSync(join(luaDir, lib), 'utf8')
    .replace(/^--\[\[\n[\s\S]*?\n\]\]\n+/, '')
    .split(/^(?=local )/m)
    .map((piece) => ({ name: /^local (?:function )?(\w+)/.exec(piece)![1]!, text: piece.trimEnd() }));
/** Whether Lua text names `name` (a field, as in string.match, is not the local match). */
const names = (text: string, name: string) => new RegExp(`(?<![\\w.])${name}(?!\\w)`).test(text);
let sha1s: string | undefined;
/** The library's scripts, sent as their files' bytes. */
const verbatim = readdirSync(join(luaDir, 'library'))
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -4));
const ours = scripts.allScripts.filter((s) => !verbatim.includes(s.name));

describe('shared/scripts.ts', () => {
  it.each(verbatim.map((name) => [name] as const))('holds lua/library/%s.lua byte for byte, its SHA-1 that of the file', (name) => {
    const script = scripts.allScripts.find((s) => s.name === name)!;
    const bytes = readFileSync(join(luaDir, 'library', `${name}.lua`));
    expect(Buffer.from(script.text, 'utf8').equals(bytes)).toBe(true);
    expect(script.sha1).toBe(createHash('sha1').update(bytes).digest('hex'));
    expect(execFileSync('node', [generator, '--print', name], { encoding: 'utf8' })).toBe(script.text);
    // its contract, beside it, names KEYS, ARGV and its replies
    const contract = readFileSync(join(luaDir, 'library', `${name}.md`), 'utf8');
    for (const word of [/KEYS\[1\]/, /ARGV\[1\]/, /Replies/]) expect(contract).toMatch(word);
  });

  it.each(ours.map((s) => [s.name, s] as const))("holds lua/%s.lua with its includes expanded, and that text's SHA-1", (name, script) => {
    const source = readFileSync(join(luaDir, `${name}.lua`), 'utf8');
    const blocks = [...script.text.matchAll(/^--#include (lib\/[a-z0-9-]+\.lua)\n([\s\S]*?)^--#end \1$/gm)];
    // outside the inlined helpers, the text is the file's, its header one line
    expect(script.text.replace(/^(--#include (lib\/[a-z0-9-]+\.lua))\n[\s\S]*?^--#end \2\n/gm, '$1\n')).toBe(
      source.replace(/^--\[\[\n[\s\S]*?\n\]\]\n/, `-- lua/${name}.lua: its contract is that file's opening comment\n`),
    );
    expect(blocks.map((b) => b[1])).toEqual([...source.matchAll(/^--#include (lib\/[a-z0-9-]+\.lua)$/gm)].map((m) => m[1]));
    for (const [, lib, block] of blocks) {
      const helpers = helpersOf(lib!);
      const inlined = block!.split(/^(?=local )/m).map((piece) => piece.trimEnd());
      // each a helper of the library, verbatim, in the library's order
      const at = inlined.map((piece) => helpers.findIndex((h) => h.text === piece));
      expect(at, `${name}: ${lib}`).not.toContain(-1);
      expect(at, `${name}: ${lib}`).toEqual([...at].sort((a, b) => a - b));
      for (const h of helpers) {
        const rest = script.text.replace(h.text, '');
        // a helper is inlined exactly when the rest of the text names it: none missing, none dead
        expect(names(rest, h.name), `${name}: ${lib} ${h.name}`).toBe(at.includes(helpers.indexOf(h)));
      }
    }
    expect(script.text).toMatch(/^[\x09\x0a\x20-\x7e]*$/);
    expect(script.sha1).toBe(createHash('sha1').update(script.text, 'utf8').digest('hex'));
    // what the docs tell anyone to run to see the text sent, and its SHA-1
    expect(execFileSync('node', [generator, '--print', name], { encoding: 'utf8' })).toBe(script.text);
    sha1s ??= execFileSync('node', [generator, '--sha1'], { encoding: 'utf8' });
    expect(sha1s).toContain(`${script.sha1}  ${name}\n`);
  });

  it('has one entry per lua/*.lua and lua/library/*.lua file and is what the generator writes', () => {
    const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua'));
    const names = scripts.allScripts.map((s) => s.name);
    expect(names.sort()).toEqual([...files.map((f) => f.slice(0, -4)), ...verbatim].sort());
    // exits non-zero (and so throws) when shared/scripts.ts has drifted from lua/
    execFileSync('node', ['scripts/gen-scripts.mjs', '--check'], { cwd: root });
  });

  it('each script file of ours opens with a header naming KEYS, ARGV and its replies', () => {
    for (const s of ours) {
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
    for (const dir of ['scripts', 'shared', 'lua/lib', 'lua/library']) mkdirSync(join(tree, dir), { recursive: true });
    copyFileSync(generator, join(tree, 'scripts/gen-scripts.mjs'));
    for (const [path, text] of Object.entries(files)) writeFileSync(join(tree, 'lua', path), text);
    try {
      execFileSync('node', [join(tree, 'scripts/gen-scripts.mjs')], { encoding: 'utf8', stdio: 'pipe' });
      return { ok: true, out: '', written: readFileSync(join(tree, 'shared/scripts.ts'), 'utf8') };
    } catch (e) {
      return { ok: false, out: String((e as { stderr?: string }).stderr) };
    }
  };

  it('inlines only the helpers used: named by the script, or by a helper it uses', () => {
    const lib = '--[[\n  lib/a.lua: a test library.\n]]\n\nlocal one = 1\n\nlocal function a() return one end\n\nlocal function b() return 2 end\n';
    const r = run({ 'lib/a.lua': lib, 's.lua': `${HEAD}--#include lib/a.lua\nreturn a()\n` });
    // a string inside the generated file: its JSON form, without the quotes
    expect(r.written).toContain(
      JSON.stringify('--#include lib/a.lua\nlocal one = 1\n\nlocal function a() return one end\n--#end lib/a.lua\nreturn a()\n').slice(1, -1),
    );
  });

  it('nothing in a tree it accepts, and expands an include there', () => {
    const r = run({ 'lib/a.lua': LIB, 's.lua': `${HEAD}-- s\n--#include lib/a.lua\nreturn a()\n` });
    expect(r.ok).toBe(true);
    expect(r.written).toContain(
      JSON.stringify(
        "-- lua/s.lua: its contract is that file's opening comment\n-- s\n--#include lib/a.lua\nlocal function a() return 1 end\n--#end lib/a.lua\nreturn a()\n",
      ),
    );
  });

  it("sends a library script's bytes as they are, a control script when its contract says so", () => {
    const text = "return redis.call('DEL', KEYS[1])\n";
    const r = run({ 's.lua': `${HEAD}return 1\n`, 'library/del.lua': text, 'library/del.md': '# @del\n\n  Capability: control\n' });
    expect(r.written).toContain(`text: ${JSON.stringify(text)}`);
    expect(r.written).toContain(`sha1: '${createHash('sha1').update(text).digest('hex')}'`);
    expect(r.written).toContain('export const controlScripts: readonly Script[] = [delScript];');
  });

  it.each([
    ['a library script without its contract', { 'library/del.lua': 'return 1\n' }, /lua\/library\/del\.lua needs lua\/library\/del\.md/],
    [
      'a library script with a --# line',
      { 'lib/a.lua': LIB, 'library/del.lua': '--#include lib/a.lua\nreturn a()\n', 'library/del.md': '# @del\n' },
      /sent byte for byte, so it includes nothing/,
    ],
    [
      'a library script named as one of ours',
      { 's.lua': `${HEAD}return 1\n`, 'library/s.lua': 'return 1\n', 'library/s.md': '# @s\n' },
      /lua\/s\.lua has its name/,
    ],
    ['a library script that is not printable ASCII', { 'library/del.lua': "return 'caf\u00e9'\n", 'library/del.md': '# @del\n' }, /must be printable ASCII/],
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
    [
      'a library with a top-level statement that is not a local definition',
      { 'lib/a.lua': `${LIB}redis.call('SET', 'k', 'v')\n`, 's.lua': `${HEAD}--#include lib/a.lua\nreturn a()\n` },
      /a library's top level is local definitions only/,
    ],
    ['an include the script uses nothing of', { 'lib/a.lua': LIB, 's.lua': `${HEAD}--#include lib/a.lua\nreturn 1\n` }, /uses none of its helpers/],
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
