// Finding 10 (second review): an admin request whose reply glide cannot read (an error or
// status reply that is not UTF-8 makes it drop the connection) must not fail the other admin
// requests. Such requests (a byte that is not ASCII in an argument, or server-side code) go on
// a connection of their own (functions/gateway/alone.ts). The real gateway process over real
// HTTP, in front of each server this machine has (valkey-server 8, redis-server 7).
import { describe, expect, inject, it } from 'vitest';
import { freshQueue } from './support/admin.js';
import { gatewayOn } from './support/gateway.js';
import { answerOf, type Answer } from './support/answer.js';

/** Requests whose reply echoes the byte 0xFF (or a script's answer holding it). */
const POISON: Array<[string, string | undefined]> = [
  ['/config/set/%FF/x', undefined],
  ['/acl/setuser/emq-poison/%FF', undefined],
  ['/function/load', '#!lua name=\xff\nredis.register_function("f", function() return 1 end)'],
  ['/eval/return%20redis.error_reply(ARGV%5B1%5D)/0', '\xff'],
  ['/eval/return%20redis.status_reply(ARGV%5B1%5D)/0', '\xff'],
];

describe.each(inject('servers'))('finding 10 (second review) on $name', ({ url }) => {
  const h = gatewayOn(url);
  const as = (method: string, path: string, body?: string | Uint8Array, token = h.gw.admin): Promise<Answer> =>
    fetch(h.gw.url + path, {
      method,
      headers: { Authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? Buffer.from(body, 'latin1') : body }),
    }).then(answerOf);
  const json = (path: string, value: unknown) => as('POST', path, Buffer.from(JSON.stringify(value), 'utf8'));

  it('finding 10 (second review): poison admin requests concurrently with 3,000 admin GETs: 0 failed', async () => {
    const key = `poison:${freshQueue()}`;
    await h.admin.call('SET', key, 'v');
    let done = 0;
    const failed: string[] = [];
    // 50 clients of 60 GETs each, the poison sent over and over while they run
    const gets = Array.from({ length: 50 }, async () => {
      for (let i = 0; i < 60; i++) {
        const r = await as('GET', `/get/${key}`);
        if (r.status !== 200 || r.json?.result !== 'v') failed.push(`${r.status} ${r.text.slice(0, 200)}`);
        done++;
      }
    });
    const answers: Answer[] = [];
    const poison = (async () => {
      for (let i = 0; done < 3000; i++) {
        const [path, body] = POISON[i % POISON.length]!;
        answers.push(await as(body === undefined ? 'GET' : 'POST', path, body));
      }
    })();
    await Promise.all([...gets, poison]);
    expect(failed).toEqual([]);
    expect(done).toBe(3000);
    expect(answers.length).toBeGreaterThanOrEqual(POISON.length);
    // each poison answered, none a 503: the unreadable ones say so, the rest are the server's words
    for (const a of answers) expect(a.status, a.text).toBe(400);
    expect(answers.some((a) => /could not be read/.test(a.json.error))).toBe(true);
    expect(await as('GET', '/ping')).toMatchObject({ status: 200, json: { result: 'PONG' } });
    await h.admin.call('ACL', 'DELUSER', 'emq-poison');
  });

  it('a lone request keeps its order and its replies: a pipeline with text that is not ASCII, a transaction, EVAL', async () => {
    const key = `alone:${freshQueue()}`;
    const piped = await json('/pipeline', [
      ['SET', key, 'é'],
      ['APPEND', key, 'ü'],
      ['GET', key],
      ['EVAL', 'return redis.call("GET", KEYS[1])', 1, key],
    ]);
    expect(piped.json).toEqual([{ result: 'OK' }, { result: 4 }, { result: 'éü' }, { result: 'éü' }]);
    const multi = await json('/multi-exec', [
      ['SET', key, 'ö'],
      ['GET', key],
    ]);
    expect(multi.json).toEqual([{ result: 'OK' }, { result: 'ö' }]);
    // a reply that cannot be read fails its command (and those glide read in the same batch),
    // answered as such, in order, without a 503
    const mixed = await json('/pipeline', [
      ['GET', key],
      ['EVAL', "return redis.error_reply('ERR ' .. string.char(255))", 0],
    ]);
    expect(mixed.status).toBe(200);
    expect(mixed.json).toHaveLength(2);
    expect(mixed.json[0].result ?? mixed.json[0].error).toMatch(/^ö$|could not be read/);
    expect(mixed.json[1].error).toMatch(/could not be read/);
    // a producer's requests never go alone, and are not disturbed either
    expect(await as('GET', '/ping', undefined, h.gw.producer)).toMatchObject({ status: 200 });
  });
});
