// The runtime copy of each script is the .lua file's exact bytes, and its SHA-1.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as scripts from '../shared/scripts.js';

const luaDir = new URL('../lua/', import.meta.url);

describe('shared/scripts.ts', () => {
  it.each(scripts.allScripts.map((s) => [s.name, s] as const))('holds the exact bytes of lua/%s.lua and their SHA-1', (name, script) => {
    const bytes = readFileSync(new URL(`${name}.lua`, luaDir));
    expect(Buffer.from(script.text, 'utf8').equals(bytes)).toBe(true);
    expect(script.sha1).toBe(createHash('sha1').update(bytes).digest('hex'));
  });

  it('has one entry per lua/*.lua file and is what the generator writes', () => {
    const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua'));
    const names = scripts.allScripts.map((s) => s.name);
    expect(names.sort()).toEqual(files.map((f) => f.slice(0, -4)).sort());
    // exits non-zero (and so throws) when shared/scripts.ts has drifted from lua/
    execFileSync('node', ['scripts/gen-scripts.mjs', '--check'], { cwd: new URL('..', import.meta.url) });
  });

  it('each script opens with a header naming KEYS, ARGV and its replies', () => {
    for (const s of scripts.allScripts) {
      const header = s.text.slice(0, s.text.indexOf(']]'));
      expect(header).toMatch(/KEYS\[1\]/);
      expect(header).toMatch(/ARGV\[1\]/);
      expect(header).toMatch(/Replies/);
      expect(header).toMatch(/Errors/);
    }
  });
});
