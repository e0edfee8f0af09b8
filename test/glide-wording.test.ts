// glide rewords server error replies; serverWording gives back the server's own words.
// Each case is the text a real server sends, through a real glide client.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { connectGlide, serverWording, type GlideConnection } from '../shared/connections/glide.js';

let conn: GlideConnection;
beforeAll(async () => {
  conn = await connectGlide(inject('servers')[0]!.url);
});
afterAll(() => conn?.close());

it.each([
  'custom failure x',
  'lower: already a colon',
  'a b: c',
  'x:y z',
  '  leading spaces',
  'ERR plain',
  'NOSCRIPT fake',
  'WRONGTYPE x',
  'EMQKIND job id must be JOB-namespaced',
  'EXECABORT nope',
  'LOADING later',
])('an error reply %j comes back as the server said it', async (text) => {
  const outcome = await conn.run({ op: 'eval', script: `return redis.error_reply('${text}')`, keys: [], args: [] });
  expect(outcome).toEqual({ ok: false, error: text });
});

it('a real NOSCRIPT', async () => {
  const outcome = await conn.run({ op: 'evalsha', sha1: 'f'.repeat(40), keys: [], args: [] });
  expect(outcome.ok === false && outcome.error).toMatch(/^NOSCRIPT No matching script/);
});

it('leaves text glide did not reword alone', () => {
  expect(serverWording('no colon here')).toBe('no colon here');
});
