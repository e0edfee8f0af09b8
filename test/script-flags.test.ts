// Scripts with shebang flags the server does not know (Upstash's `allow-key-locking`), through
// the real gateway process over real HTTP, on each real server: the unknown flags dropped, the
// known ones kept, the client's SHA-1 mapped to the server's for EVALSHA, SCRIPT EXISTS and
// SCRIPT LOAD, NOSCRIPT on a miss, SCRIPT FLUSH forgetting, the map's bound; and the producer
// scope still refusing any script not this project's. The module's parser, directly, last.
import { createHash } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { MOST_MAPPED, ScriptFlags, shebangWithoutUnknown, withoutUnknownFlags } from '../functions/gateway/script-flags.js';
import { freshQueue } from './support/admin.js';
import { call, command } from './support/gateway-calls.js';
import { gatewayOn } from './support/gateway.js';

const sha1 = (text: string | Uint8Array) => createHash('sha1').update(text).digest('hex');

const json = (args: unknown) => ({ method: 'POST', body: JSON.stringify(args), headers: { 'Content-Type': 'application/json' } });

describe.each(inject('servers'))('script flags through the gateway: $name', ({ url }) => {
  const h = gatewayOn(url);

  const run = (args: unknown[]) => command(h.gw, h.gw.admin, args);
  const pipeline = (commands: unknown[][]) => call(h.gw, '/pipeline', { token: h.gw.admin, ...json(commands) });
  const multi = (commands: unknown[][]) => call(h.gw, '/multi-exec', { token: h.gw.admin, ...json(commands) });
  /** A script no other test sends (so no other test's SCRIPT FLUSH or load decides what the server holds). */
  const unique = (flags: string, body: string) => `#!lua flags=${flags}\n-- ${freshQueue('s')}\n${body}`;

  it('the server itself refuses the flag, so the gateway is what makes it run', async () => {
    await expect(h.admin.call('EVAL', '#!lua flags=allow-key-locking\nreturn 1', '0')).rejects.toThrow(/Unexpected flag in script shebang: allow-key-locking/);
  });

  it('EVAL with `#!lua flags=allow-key-locking,no-writes` runs, and no-writes still holds (a write is refused, nothing written)', async () => {
    const k = `flags:${freshQueue('ro')}`;
    await h.admin.call('SET', k, 'before');
    const read = await run(['EVAL', unique('allow-key-locking,no-writes', "return redis.call('GET', KEYS[1])"), 1, k]);
    expect(read.json).toEqual({ result: 'before' });
    const write = await run(['EVAL', unique('allow-key-locking,no-writes', "return redis.call('SET', KEYS[1], 'after')"), 1, k]);
    expect(write.status).toBe(400);
    expect(write.json.error).toMatch(/Write commands are not allowed from read-only scripts/);
    expect(String(await h.admin.text('GET', k))).toBe('before');
  });

  it('EVAL_RO with unknown and known flags runs', async () => {
    const k = `flags:${freshQueue('evalro')}`;
    await h.admin.call('SET', k, 'v');
    const r = await run(['EVAL_RO', unique('no-writes,allow-key-locking,allow-stale', "return redis.call('GET', KEYS[1])"), 1, k]);
    expect(r.json).toEqual({ result: 'v' });
  });

  it('a text with only unknown flags runs, with its writes', async () => {
    const k = `flags:${freshQueue('only')}`;
    const r = await run(['EVAL', unique('allow-key-locking,upstash-future-flag', "return redis.call('SET', KEYS[1], ARGV[1])"), 1, k, 'written']);
    expect(r.json).toEqual({ result: 'OK' });
    expect(String(await h.admin.text('GET', k))).toBe('written');
  });

  it("SCRIPT LOAD answers the client's SHA-1; EVALSHA, EVALSHA_RO and SCRIPT EXISTS with it work; the server holds only its own", async () => {
    // no-writes: EVALSHA_RO runs only a script that says so
    const text = unique('allow-key-locking,no-writes', 'return ARGV[1]');
    const mine = sha1(text);
    const servers = sha1(withoutUnknownFlags(text) as string);
    const loaded = await run(['SCRIPT', 'LOAD', text]);
    expect(loaded.json).toEqual({ result: mine });
    expect((await run(['EVALSHA', mine, 0, 'hi'])).json).toEqual({ result: 'hi' });
    expect((await run(['EVALSHA', mine.toUpperCase(), 0, 'HI'])).json).toEqual({ result: 'HI' });
    expect((await run(['EVALSHA_RO', mine, 0, 'ro'])).json).toEqual({ result: 'ro' });
    expect((await run(['SCRIPT', 'EXISTS', mine, '0'.repeat(40), servers])).json).toEqual({ result: [1, 0, 1] });
    expect(await h.admin.call('SCRIPT', 'EXISTS', mine, servers)).toEqual([false, true]);
  });

  it('SCRIPT LOAD path-style, with the text as the raw POST body, answers the client SHA-1 too', async () => {
    const text = unique('allow-key-locking', 'return 7');
    const r = await call(h.gw, '/script/load', { token: h.gw.admin, method: 'POST', body: Buffer.from(text) });
    expect(r.json).toEqual({ result: sha1(text) });
    expect((await run(['EVALSHA', sha1(text), 0])).json).toEqual({ result: 7 });
  });

  it('with Upstash-Encoding: base64, the SHA-1 SCRIPT LOAD answers is base64 as any bulk reply', async () => {
    const text = unique('allow-key-locking', 'return 8');
    const r = await call(h.gw, '/', {
      token: h.gw.admin,
      ...json(['SCRIPT', 'LOAD', text]),
      headers: { 'Content-Type': 'application/json', 'Upstash-Encoding': 'base64' },
    });
    expect(Buffer.from(r.json.result, 'base64').toString()).toBe(sha1(text));
  });

  it('binary arguments (Emq-Arg-Encoding: base64): the text read as bytes is rewritten the same way', async () => {
    const text = unique('allow-key-locking', 'return "bytes"');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const r = await call(h.gw, '/', {
      token: h.gw.admin,
      ...json([b64('EVAL'), b64(text), b64('0')]),
      headers: { 'Content-Type': 'application/json', 'Emq-Arg-Encoding': 'base64' },
    });
    expect(r.json).toEqual({ result: 'bytes' });
    expect((await run(['EVALSHA', sha1(text), 0])).json).toEqual({ result: 'bytes' });
  });

  it('an EVALSHA the gateway never mapped goes unchanged: the server answers NOSCRIPT', async () => {
    const text = unique('allow-key-locking', 'return 1');
    const r = await run(['EVALSHA', sha1(text), 0]);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^NOSCRIPT/);
  });

  it('after SCRIPT FLUSH through the gateway, EVALSHA answers NOSCRIPT; EVAL maps it again', async () => {
    const text = unique('allow-key-locking', 'return 2');
    expect((await run(['SCRIPT', 'LOAD', text])).json).toEqual({ result: sha1(text) });
    expect((await run(['SCRIPT', 'FLUSH'])).json).toEqual({ result: 'OK' });
    expect((await run(['EVALSHA', sha1(text), 0])).json.error).toMatch(/^NOSCRIPT/);
    expect((await run(['SCRIPT', 'EXISTS', sha1(text)])).json).toEqual({ result: [0] });
    expect((await run(['EVAL', text, 0])).json).toEqual({ result: 2 });
    expect((await run(['EVALSHA', sha1(text), 0])).json).toEqual({ result: 2 });
  });

  it('the server losing the script (flushed behind the gateway) reaches the client as NOSCRIPT, and its EVAL loads it again', async () => {
    const text = unique('allow-key-locking', 'return 3');
    expect((await run(['EVAL', text, 0])).json).toEqual({ result: 3 });
    await h.admin.call('SCRIPT', 'FLUSH');
    expect((await run(['EVALSHA', sha1(text), 0])).json.error).toMatch(/^NOSCRIPT/);
    expect((await run(['EVAL', text, 0])).json).toEqual({ result: 3 });
    expect((await run(['EVALSHA', sha1(text), 0])).json).toEqual({ result: 3 });
  });

  it('/pipeline: load, run, flush and run again, in order, each with its own outcome', async () => {
    const text = unique('allow-key-locking', 'return ARGV[1]');
    const r = await pipeline([
      ['SCRIPT', 'LOAD', text],
      ['EVALSHA', sha1(text), 0, 'a'],
      ['SCRIPT', 'FLUSH'],
      ['EVALSHA', sha1(text), 0, 'b'],
      ['EVAL', text, 0, 'c'],
      ['EVALSHA', sha1(text), 0, 'd'],
    ]);
    expect(r.json.slice(0, 3)).toEqual([{ result: sha1(text) }, { result: 'a' }, { result: 'OK' }]);
    expect(r.json[3].error).toMatch(/^NOSCRIPT/);
    expect(r.json.slice(4)).toEqual([{ result: 'c' }, { result: 'd' }]);
  });

  it('/multi-exec: the same rewrite inside a transaction', async () => {
    const text = unique('allow-key-locking', 'return ARGV[1]');
    const r = await multi([
      ['SCRIPT', 'LOAD', text],
      ['EVALSHA', sha1(text), 0, 'x'],
      ['EVAL', text, 0, 'y'],
    ]);
    expect(r.json).toEqual([{ result: sha1(text) }, { result: 'x' }, { result: 'y' }]);
  });

  it("a script's error names the client's SHA-1, not the one the gateway made", async () => {
    const text = unique('allow-key-locking', 'return nosuch.x');
    const r = await run(['EVAL', text, 0]);
    expect(r.json.error).toMatch(/nonexistent global variable/);
    expect(r.json.error).toContain(sha1(text));
    expect(r.json.error).not.toContain(sha1(withoutUnknownFlags(text) as string));
  });

  it("malformed shebangs go unchanged and get the server's own error", async () => {
    const cases: Array<[string, RegExp]> = [
      ['#!lua flags=allow-key-locking', /Invalid script shebang/], // no newline
      ['#!python flags=allow-key-locking\nreturn 1', /Unexpected engine in script shebang/],
      ['#!lua flags=no-writes,,allow-key-locking\nreturn 1', /Unexpected flag in script shebang: $/],
      ['#!lua flags=allow-key-locking nonsense\nreturn 1', /shebang/],
      ['#!lua flags=NO-WRITES,allow-key-locking\nreturn 1', /Unexpected flag in script shebang: NO-WRITES/],
      [`#!lua flags=allow-key-locking${' '.repeat(2000)}\nreturn 1`, /Unexpected flag in script shebang: allow-key-locking/],
    ];
    for (const [text, error] of cases) {
      const r = await run(['EVAL', text, 0]);
      expect(r.status, text.slice(0, 60)).toBe(400);
      expect(r.json.error, text.slice(0, 60)).toMatch(error);
    }
  });

  it(`the map holds at most ${MOST_MAPPED} SHA-1s: the one used longest ago falls out (NOSCRIPT), the others still map`, async () => {
    const texts = Array.from({ length: MOST_MAPPED + 1 }, (_, i) => unique('allow-key-locking', `return ${i}`));
    const loaded = await pipeline(texts.map((t) => ['SCRIPT', 'LOAD', t]));
    expect(loaded.json.map((o: { result: string }) => o.result)).toEqual(texts.map(sha1));
    const [first, second, last] = [texts[0]!, texts[1]!, texts[MOST_MAPPED]!].map(sha1);
    expect((await run(['SCRIPT', 'EXISTS', first!, second!, last!])).json).toEqual({ result: [0, 1, 1] });
    expect((await run(['EVALSHA', first!, 0])).json.error).toMatch(/^NOSCRIPT/);
    expect((await run(['EVALSHA', last!, 0])).json).toEqual({ result: MOST_MAPPED });
    await h.admin.call('SCRIPT', 'FLUSH');
  });

  it('the producer scope still refuses a foreign script, with flags or without, by text or SHA-1: nothing written or loaded', async () => {
    const k = `flags:${freshQueue('producer')}`;
    const text = unique('allow-key-locking', "return redis.call('SET', KEYS[1], 'x')");
    const servers = sha1(withoutUnknownFlags(text) as string);
    const asText = await command(h.gw, h.gw.producer, ['EVAL', text, 1, k]);
    expect(asText.status).toBe(403);
    expect(asText.json.error).toMatch(/only of this project's scripts/);
    expect((await command(h.gw, h.gw.producer, ['EVAL_RO', text, 1, k])).status).toBe(403);
    expect((await command(h.gw, h.gw.producer, ['SCRIPT', 'LOAD', text])).status).toBe(403);
    // the server holds no script of either text (the shared server: the keyspace of other files' tests moves)
    expect(await h.admin.call('SCRIPT', 'EXISTS', sha1(text), servers)).toEqual([false, false]);
    await run(['SCRIPT', 'LOAD', text]); // mapped by the admin scope: still not the producer's
    expect((await command(h.gw, h.gw.producer, ['EVALSHA', sha1(text), 1, k])).status).toBe(403);
    const piped = await call(h.gw, '/pipeline', { token: h.gw.producer, ...json([['PING'], ['EVAL', text, 1, k]]) });
    expect(piped.status).toBe(403);
    expect(await h.admin.call('EXISTS', k)).toBe(0);
  });
});

describe('the shebang rewrite, directly', () => {
  it('drops unknown flags, keeps known ones in order, keeps the rest byte for byte', () => {
    expect(shebangWithoutUnknown('#!lua flags=allow-key-locking')).toBe('#!lua');
    expect(shebangWithoutUnknown('#!lua flags=no-writes,allow-key-locking,allow-oom')).toBe('#!lua flags=no-writes,allow-oom');
    expect(shebangWithoutUnknown('#!lua  flags=x\tflags=allow-stale\r')).toBe('#!lua flags=allow-stale');
    expect(withoutUnknownFlags('#!lua flags=allow-key-locking\n  local a = 1\nreturn a')).toBe('#!lua\n  local a = 1\nreturn a');
    const bytes = Buffer.concat([Buffer.from('#!lua flags=allow-key-locking,no-cluster\nreturn "'), Buffer.from([0xff, 0xfe]), Buffer.from('"')]);
    expect(Buffer.from(withoutUnknownFlags(bytes) as Uint8Array)).toEqual(
      Buffer.concat([Buffer.from('#!lua flags=no-cluster\nreturn "'), Buffer.from([0xff, 0xfe]), Buffer.from('"')]),
    );
  });

  it('leaves alone what it should: no shebang, known flags only, anything not in the plain form', () => {
    for (const text of [
      'return 1',
      '#!lua\nreturn 1',
      '#!lua flags=no-writes,allow-oom\nreturn 1',
      '#!lua flags=\nreturn 1',
      '#!lua flags=allow-key-locking', // no newline
      '#!lua "flags=allow-key-locking"\nreturn 1',
      '#!lua flags=allow-key-locking other=1\nreturn 1',
      '#!lua flags=allow-key-locking,\nreturn 1',
      '#!lua flags=No-Writes,allow-key-locking\nreturn 1',
      '#!lua flags=allow-key-locking,ünknown\nreturn 1',
      '#!lua flags=allow\x01key\nreturn 1',
      `#!lua flags=allow-key-locking${' '.repeat(1100)}\nreturn 1`,
    ]) {
      expect(withoutUnknownFlags(text), JSON.stringify(text.slice(0, 60))).toBeUndefined();
    }
  });

  it('its map is bounded, least recently used out first, and SCRIPT FLUSH empties it', () => {
    const flags = new ScriptFlags(3);
    const texts = ['a', 'b', 'c', 'd'].map((n) => `#!lua flags=allow-key-locking\nreturn '${n}'`);
    for (const t of texts.slice(0, 3)) flags.rewrite([['EVAL', t, '0']]);
    // 'a' used again: 'b' is now the one used longest ago
    expect(flags.rewrite([['EVALSHA', sha1(texts[0]!), '0']])).toBeDefined();
    flags.rewrite([['SCRIPT', 'LOAD', texts[3]!]]);
    expect(flags.size).toBe(3);
    expect(flags.rewrite([['EVALSHA', sha1(texts[1]!), '0']])).toBeUndefined();
    for (const t of [texts[0]!, texts[2]!, texts[3]!]) expect(flags.rewrite([['EVALSHA', sha1(t), '0']])?.commands[0]?.[1]).toBe(sha1(withoutUnknownFlags(t)!));
    flags.rewrite([['script', 'flush', 'async']]);
    expect(flags.size).toBe(0);
    // this project's scripts and plain commands: nothing to do
    expect(
      flags.rewrite([
        ['EVAL', 'return 1', '0'],
        ['GET', 'k'],
        ['EVALSHA', sha1('return 1'), '0'],
      ]),
    ).toBeUndefined();
  });
});
