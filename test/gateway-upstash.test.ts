// The official @upstash/redis client, with its defaults (auto-pipelining, base64 response
// encoding, read-your-writes), against the real gateway process in front of each real server.
// Each test states something an Upstash user relies on; the admin connection checks the keyspace.
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from '@upstash/redis';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

describe.each(inject('servers'))('@upstash/redis against the gateway: $name', ({ url }) => {
  let gw: GatewayProcess;
  let admin: Admin;
  let redis: Redis;

  beforeAll(async () => {
    gw = await startGatewayProcess(url);
    admin = await connectAdmin(url);
    redis = new Redis({ url: gw.url, token: gw.admin });
  });
  afterAll(async () => {
    admin?.close();
    if (gw) {
      const code = await gw.stop();
      expect(code, `gateway stderr:\n${gw.stderr()}`).toBe(0);
    }
  });

  /** A key prefix no other test uses. */
  const fresh = (label: string) => `upstash:${freshQueue(label)}`;
  const adminGet = async (key: string) => {
    const v = await admin.call('GET', key);
    return Buffer.isBuffer(v) ? v.toString('utf8') : v;
  };

  it('set and get, with ASCII and non-ASCII text', async () => {
    const k = fresh('str');
    const text = 'héllo wörld — ✓ 日本語 🎉';
    expect(await redis.set(`${k}:ascii`, 'plain value')).toBe('OK');
    expect(await redis.set(`${k}:unicode`, text)).toBe('OK');
    expect(await redis.get(`${k}:ascii`)).toBe('plain value');
    expect(await redis.get(`${k}:unicode`)).toBe(text);
    expect(await redis.get(`${k}:missing`)).toBeNull();
    // stored as the UTF-8 bytes of the text, not some re-encoding of it
    const stored = (await admin.call('GET', `${k}:unicode`)) as Buffer;
    expect(Buffer.compare(stored, Buffer.from(text, 'utf8'))).toBe(0);
    // and a value written outside the client reads back through it
    await admin.call('SET', `${k}:outside`, 'ça marche: Ωmega');
    expect(await redis.get(`${k}:outside`)).toBe('ça marche: Ωmega');
    // the client serialises objects as JSON and parses them back
    expect(await redis.set(`${k}:json`, { a: 1, b: 'ü' })).toBe('OK');
    expect(await redis.get(`${k}:json`)).toEqual({ a: 1, b: 'ü' });
  });

  it('hset and hgetall', async () => {
    const k = fresh('hash');
    expect(await redis.hset(k, { name: 'Zoë', city: 'Zürich', count: 3 })).toBe(3);
    expect(await redis.hgetall(k)).toEqual({ name: 'Zoë', city: 'Zürich', count: 3 });
    const row = await admin.hgetall(k);
    expect(row.name!.toString('utf8')).toBe('Zoë');
    expect(row.count!.toString()).toBe('3');
    expect(await redis.hgetall(`${k}:missing`)).toBeNull();
  });

  it('zadd and zrange, with and without scores', async () => {
    const k = fresh('zset');
    expect(await redis.zadd(k, { score: 2.5, member: 'beta' }, { score: 1, member: 'alpha' }, { score: 10, member: 'gämma' })).toBe(3);
    expect(await redis.zrange(k, 0, -1)).toEqual(['alpha', 'beta', 'gämma']);
    expect(await redis.zrange(k, 0, -1, { withScores: true })).toEqual(['alpha', 1, 'beta', 2.5, 'gämma', 10]);
    expect(await redis.zrange(k, 0, 1, { rev: true, withScores: true })).toEqual(['gämma', 10, 'beta', 2.5]);
    expect(await redis.zscore(k, 'beta')).toBe(2.5);
    expect(String(await admin.text('ZSCORE', k, 'gämma'))).toBe('10');
  });

  it('eval runs a script with keys and arguments', async () => {
    const k = fresh('eval');
    expect(await redis.eval('return {KEYS[1], ARGV[1], tonumber(ARGV[2]) * 2}', [k], ['ünïcødé', '21'])).toEqual([k, 'ünïcødé', 42]);
    expect(await redis.eval("return redis.call('SET', KEYS[1], ARGV[1])", [k], ['from lua'])).toBe('OK');
    expect(await adminGet(k)).toBe('from lua');
    expect(await redis.eval("return redis.call('GET', KEYS[1])", [`${k}:missing`], [])).toBeNull();
  });

  it('scriptLoad, evalsha and scriptExists', async () => {
    const k = fresh('sha');
    const script = `return {KEYS[1], ARGV[1]} -- ${randomBytes(8).toString('hex')}`;
    const sha = await redis.scriptLoad(script);
    expect(sha).toBe(sha1(script));
    expect(await redis.evalsha(sha, [k], ['ärg'])).toEqual([k, 'ärg']);
    const unknown = sha1(`never loaded ${randomBytes(8).toString('hex')}`);
    expect(await redis.scriptExists(sha, unknown)).toEqual([1, 0]);
    await expect(redis.evalsha(unknown, [k], [])).rejects.toThrow(/NOSCRIPT/);
  });

  it('createScript still works after SCRIPT FLUSH (EVALSHA → NOSCRIPT → EVAL)', async () => {
    const k = fresh('script');
    const text = `redis.call('INCR', KEYS[1]); return {redis.call('GET', KEYS[1]), ARGV[1]} -- ${randomBytes(8).toString('hex')}`;
    const script = redis.createScript<[string, string]>(text);
    // first run: not loaded yet, so the client falls back to EVAL, which loads it
    expect(await script.exec([k], ['één'])).toEqual([1, 'één']);
    expect(await admin.call('SCRIPT', 'EXISTS', sha1(text))).toEqual([true]);
    expect(await script.exec([k], ['twee'])).toEqual([2, 'twee']);

    expect(String(await admin.text('SCRIPT', 'FLUSH'))).toBe('OK');
    expect(await admin.call('SCRIPT', 'EXISTS', sha1(text))).toEqual([false]);

    expect(await script.exec([k], ['drie'])).toEqual([3, 'drie']);
    expect(await adminGet(k)).toBe('3');
    expect(await admin.call('SCRIPT', 'EXISTS', sha1(text))).toEqual([true]);
  });

  it('pipeline: results in order', async () => {
    const k = fresh('pipe');
    const p = redis.pipeline();
    p.set(`${k}:n`, 1);
    p.incrby(`${k}:n`, 41);
    p.get(`${k}:n`);
    p.hset(`${k}:h`, { f: 'vàl' });
    p.hget(`${k}:h`, 'f');
    p.zadd(`${k}:z`, { score: 3, member: 'm' });
    p.zrange(`${k}:z`, 0, -1, { withScores: true });
    p.get(`${k}:missing`);
    expect(await p.exec()).toEqual(['OK', 42, 42, 1, 'vàl', 1, ['m', 3], null]);
    expect(await adminGet(`${k}:n`)).toBe('42');
  });

  it('pipeline: one failing command fails exec, and keepErrors shows which', async () => {
    const k = fresh('pipe-err');
    await admin.call('SET', k, 'a string');
    const failing = redis.pipeline().get(k).lpush(k, 'x').set(`${k}:after`, 'ran');
    await expect(failing.exec()).rejects.toThrow(/Command 2 \[ lpush \] failed: WRONGTYPE/);
    // a pipeline is not a transaction: the command after the failure still ran
    expect(await adminGet(`${k}:after`)).toBe('ran');

    const kept = await redis.pipeline().get(k).lpush(k, 'x').exec({ keepErrors: true });
    expect(kept[0]).toEqual({ error: undefined, result: 'a string' });
    expect(kept[1]!.error).toMatch(/^WRONGTYPE/);
  });

  it('multi-exec: results, and the writes landed', async () => {
    const k = fresh('multi');
    const tx = redis.multi();
    tx.set(`${k}:s`, 'ßtring');
    tx.incr(`${k}:c`);
    tx.incr(`${k}:c`);
    tx.hset(`${k}:h`, { a: '1', b: 'two' });
    tx.get(`${k}:s`);
    tx.zadd(`${k}:z`, { score: 7, member: 'seven' });
    expect(await tx.exec()).toEqual(['OK', 1, 2, 2, 'ßtring', 1]);
    expect(await adminGet(`${k}:s`)).toBe('ßtring');
    expect(await adminGet(`${k}:c`)).toBe('2');
    const h = await admin.hgetall(`${k}:h`);
    expect(h.a!.toString()).toBe('1');
    expect(h.b!.toString()).toBe('two');
    expect(String(await admin.text('ZSCORE', `${k}:z`, 'seven'))).toBe('7');
  });

  it('multi-exec: a command failing at run time is reported, the others still apply', async () => {
    const k = fresh('multi-err');
    await admin.call('SET', k, 'a string');
    const results = await redis.multi().set(`${k}:x`, 'X').lpush(k, 'boom').incr(`${k}:n`).exec({ keepErrors: true });
    expect(results[0]).toEqual({ error: undefined, result: 'OK' });
    expect(results[1]!.error).toMatch(/^WRONGTYPE/);
    expect(results[2]).toEqual({ error: undefined, result: 1 });
    expect(await adminGet(`${k}:x`)).toBe('X');
    expect(await adminGet(`${k}:n`)).toBe('1');
  });

  it('a command error rejects: WRONGTYPE', async () => {
    const k = fresh('wrongtype');
    expect(await redis.set(k, 'a string')).toBe('OK');
    await expect(redis.lpush(k, 'x')).rejects.toThrow(/WRONGTYPE Operation against a key holding the wrong kind of value/);
    expect(await adminGet(k)).toBe('a string');
  });

  it('a command error rejects: redis.error_reply from eval, with its own error code kept', async () => {
    const tag = randomBytes(4).toString('hex');
    await expect(redis.eval(`return redis.error_reply('MYERR bad thing ${tag}')`, [], [])).rejects.toThrow(new RegExp(`: MYERR bad thing ${tag}$`));
  });

  it('a command error rejects: redis.error_reply from eval, with its plain text exactly', async () => {
    // The server answers "-custom failure <tag>"; Upstash relays the server's words as they are.
    const tag = randomBytes(4).toString('hex');
    await expect(redis.eval(`return redis.error_reply('custom failure ${tag}')`, [], [])).rejects.toThrow(new RegExp(`: custom failure ${tag}$`));
  });

  it('auto-pipelining: concurrent commands all get their own answers', async () => {
    const k = fresh('auto');
    for (let i = 0; i < 5; i++) await admin.call('SET', `${k}:r${i}`, `välue ${i}`);
    await admin.call('HSET', `${k}:h`, 'f', 'hashed');
    const before = (redis as unknown as { pipelineCounter: number }).pipelineCounter;
    const results = await Promise.all([
      redis.get(`${k}:r0`),
      redis.incr(`${k}:counter`),
      redis.get(`${k}:r1`),
      redis.set(`${k}:w`, 'written'),
      redis.get(`${k}:r2`),
      redis.hget(`${k}:h`, 'f'),
      redis.incrby(`${k}:other`, 7),
      redis.get(`${k}:r3`),
      redis.get(`${k}:missing`),
      redis.get(`${k}:r4`),
      redis.lpush(`${k}:r4`, 'x').catch((e: Error) => `rejected: ${e.message}`),
      redis.exists(`${k}:r0`, `${k}:r1`, `${k}:nope`),
    ]);
    expect(results).toEqual([
      'välue 0',
      1,
      'välue 1',
      'OK',
      'välue 2',
      'hashed',
      7,
      'välue 3',
      null,
      'välue 4',
      expect.stringMatching(/^rejected: .*WRONGTYPE/),
      2,
    ]);
    // they really went out batched: one read pipeline and one write pipeline
    const after = (redis as unknown as { pipelineCounter: number }).pipelineCounter;
    expect(after - before).toBeLessThanOrEqual(2);
    expect(await adminGet(`${k}:w`)).toBe('written');
    expect(await adminGet(`${k}:counter`)).toBe('1');
  });

  it('a wrong token is refused with 401', async () => {
    const k = fresh('token');
    const wrong = new Redis({ url: gw.url, token: `adm-${randomBytes(16).toString('hex')}` });
    await expect(wrong.set(k, 'nope')).rejects.toThrow(/Unauthorized/);
    await expect(wrong.get(k)).rejects.toThrow(/Unauthorized/);
    expect(await admin.call('EXISTS', k)).toBe(0);
    // the status the client saw, for the same request it sends
    const res = await fetch(`${gw.url}/pipeline`, {
      method: 'POST',
      headers: { Authorization: 'Bearer wrong', 'Content-Type': 'application/json', 'Upstash-Encoding': 'base64' },
      body: JSON.stringify([['get', k]]),
    });
    expect(res.status).toBe(401);
  });
  // The server's own RESP2 replies, read over a plain RESP2 client (ioredis) beside the gateway:
  // what an Upstash client should get back as JSON for the same command.
  const direct = async (cmd: readonly (string | number)[]) => {
    const oracle = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await oracle.connect();
    try {
      return await oracle.call(String(cmd[0]), ...cmd.slice(1).map(String));
    } catch (err) {
      return { error: (err as Error).message };
    } finally {
      oracle.disconnect();
    }
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${gw.admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as { result?: unknown; error?: string } & unknown[] };
  };
  const viaGateway = async (cmd: readonly (string | number | boolean | null)[]) => {
    const r = await post('/', cmd);
    return r.status === 200 ? r.json.result : { error: r.json.error };
  };
  const outcome = (o: unknown) => (o !== null && typeof o === 'object' && 'result' in o ? o.result : { error: (o as { error: string }).error });
  /** The command answers the same through the gateway (alone, in a pipeline, in a transaction) as from the server. */
  const sameAsServer = async (...commands: (string | number)[][]) => {
    for (const cmd of commands) expect(await viaGateway(cmd), cmd.join(' ')).toEqual(await direct(cmd));
    const expected = await Promise.all(commands.map(direct));
    const piped = await post('/pipeline', commands);
    expect(piped.json.map(outcome)).toEqual(expected);
    const tx = await post('/multi-exec', commands);
    expect(tx.json.map(outcome)).toEqual(expected);
  };

  it('JSON booleans and null as arguments are sent as their JSON text, as Upstash does; nested values are refused', async () => {
    const k = fresh('bool');
    expect(await redis.hset(k, { off: false, on: true, word: 'x' })).toBe(3);
    expect(await adminGet(`${k}:none`)).toBeNull();
    const row = await admin.hgetall(k);
    expect([row.off!.toString(), row.on!.toString()]).toEqual(['false', 'true']);
    expect(await redis.hgetall(k)).toEqual({ off: false, on: true, word: 'x' });
    expect(await viaGateway(['SET', `${k}:null`, null])).toBe('OK');
    expect(await adminGet(`${k}:null`)).toBe('null');
    expect(await redis.get(`${k}:null`)).toBeNull(); // the client reads the text null back as null
    for (const nested of [{ a: 1 }, [1]]) {
      const r = await post('/', ['SET', `${k}:nested`, nested]);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatch(/^ERR the body\[2\] is (an array|object); arguments are strings, numbers, booleans or null$/);
    }
    expect(await admin.call('EXISTS', `${k}:nested`)).toBe(0);
  });

  it("stream replies keep the server's shapes: XADD, XRANGE, XREVRANGE, XREAD, XREADGROUP, XCLAIM, XAUTOCLAIM, XINFO", async () => {
    const k = fresh('stream');
    for (let i = 1; i <= 3; i++) await admin.call('XADD', k, `${i}-1`, 'field', `välue ${i}`, 'n', String(i));
    await sameAsServer(
      ['XRANGE', k, '-', '+'],
      ['xrange', k, '-', '+', 'count', 2],
      ['XREVRANGE', k, '+', '-', 'COUNT', 1],
      ['XREAD', 'COUNT', 2, 'STREAMS', k, '0'],
      ['xread', 'streams', k, `${k}:missing`, '0', '0'],
      ['XREAD', 'STREAMS', k, '$'],
      ['XRANGE', `${k}:missing`, '-', '+'],
      ['XINFO', 'STREAM', k],
    );
    // the reading commands move group state: each gets a group of its own, set up alike
    for (const g of ['g1', 'g2', 'g3', 'g4']) await admin.call('XGROUP', 'CREATE', k, g, '0');
    expect(await viaGateway(['XREADGROUP', 'GROUP', 'g1', 'c', 'COUNT', 2, 'STREAMS', k, '>'])).toEqual(
      await direct(['XREADGROUP', 'GROUP', 'g2', 'c', 'COUNT', 2, 'STREAMS', k, '>']),
    );
    expect(await viaGateway(['xreadgroup', 'group', 'g3', 'c', 'streams', k, '>'])).toEqual(
      await direct(['XREADGROUP', 'GROUP', 'g4', 'c', 'STREAMS', k, '>']),
    );
    expect(await viaGateway(['XCLAIM', k, 'g1', 'other', 0, '1-1', '2-1'])).toEqual(await direct(['XCLAIM', k, 'g2', 'other', 0, '1-1', '2-1']));
    expect(await viaGateway(['XCLAIM', k, 'g1', 'other', 0, '1-1', 'JUSTID'])).toEqual(await direct(['XCLAIM', k, 'g2', 'other', 0, '1-1', 'JUSTID']));
    expect(await viaGateway(['XAUTOCLAIM', k, 'g3', 'third', 0, '0'])).toEqual(await direct(['XAUTOCLAIM', k, 'g4', 'third', 0, '0']));
    await sameAsServer(['XINFO', 'GROUPS', k], ['XPENDING', k, 'g1']);
    // what an Upstash user sees
    const entries = await redis.xrange(k, '-', '+');
    expect(entries['2-1']).toEqual({ field: 'välue 2', n: 2 });
  });

  it("scores, sums, distances and coordinates keep the server's text: ZSCORE, ZINCRBY, INCRBYFLOAT, GEODIST, GEOPOS, GEOSEARCH", async () => {
    const k = fresh('num');
    await admin.call('ZADD', `${k}:z`, '1.1', 'a', '0.0001234', 'b', '1e20', 'c', 'inf', 'd', '-2.5', 'e');
    await admin.call('GEOADD', `${k}:g`, '13.361389', '38.115556', 'Palermo', '15.087269', '37.502669', 'Catania');
    await admin.call('HSET', `${k}:h`, 'only', 'one');
    await admin.call('ZADD', `${k}:one`, '2.5', 'solo');
    await sameAsServer(
      ['ZSCORE', `${k}:z`, 'a'],
      ['ZSCORE', `${k}:z`, 'b'],
      ['ZSCORE', `${k}:z`, 'c'],
      ['ZSCORE', `${k}:z`, 'd'],
      ['ZMSCORE', `${k}:z`, 'a', 'nope', 'e'],
      ['ZRANGE', `${k}:z`, 0, -1, 'WITHSCORES'],
      ['zrange', `${k}:z`, 0, -1, 'withscores'],
      ['ZRANGEBYSCORE', `${k}:z`, '-inf', '+inf', 'WITHSCORES'],
      ['ZUNION', 1, `${k}:z`, 'WITHSCORES'],
      ['ZRANDMEMBER', `${k}:one`, -2, 'WITHSCORES'],
      ['HRANDFIELD', `${k}:h`, -2, 'WITHVALUES'],
      ['hrandfield', `${k}:h`, -2, 'withvalues'],
      ['GEODIST', `${k}:g`, 'Palermo', 'Catania', 'ft'],
      ['geodist', `${k}:g`, 'Palermo', 'Catania', 'km'],
      ['GEOPOS', `${k}:g`, 'Palermo', 'nowhere', 'Catania'],
      ['GEOSEARCH', `${k}:g`, 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'ASC', 'WITHCOORD', 'WITHDIST', 'WITHHASH'],
      ['geosearch', `${k}:g`, 'fromlonlat', 15, 37, 'byradius', 200, 'km', 'asc', 'withcoord', 'withdist'],
      ['GEOSEARCH', `${k}:g`, 'FROMMEMBER', 'Palermo', 'BYBOX', 400, 400, 'km', 'ASC', 'WITHHASH', 'WITHCOORD'],
      ['GEOSEARCH', `${k}:g`, 'FROMMEMBER', 'Palermo', 'BYRADIUS', 300, 'km', 'DESC'],
      ['SMISMEMBER', `${k}:none`, 'a'],
      ['CONFIG', 'GET', 'maxmemory-policy'],
    );
    // writes: each on two keys set up alike, one written through the gateway, one directly
    const writes: Array<[setup: string[], write: (key: string) => (string | number)[]]> = [
      [['ZADD', '1.1', 'a', '0.3', 'b'], (key) => ['ZINCRBY', key, 0.1, 'a']],
      [['ZADD', '1.1', 'a', '0.3', 'b'], (key) => ['ZADD', key, 'INCR', 0.2, 'a']],
      [['ZADD', '1.1', 'a', '0.3', 'b'], (key) => ['ZPOPMIN', key, 2]],
      [['ZADD', '1.1', 'a', '0.3', 'b'], (key) => ['ZPOPMAX', key]],
      [['ZADD', '1.1', 'a', '0.3', 'b'], (key) => ['ZMPOP', 1, key, 'MIN', 'COUNT', 2]],
      [['SET', '10.5'], (key) => ['INCRBYFLOAT', key, '0.1']],
      [['HSET', 'f', '1.25'], (key) => ['HINCRBYFLOAT', key, 'f', '2.0e3']],
    ];
    for (const [[setup, ...values], write] of writes) {
      const [mine, theirs] = [fresh('w'), fresh('w')];
      for (const key of [mine, theirs]) await admin.call(setup!, key, ...values);
      // ZMPOP names the key it popped from: the other key's name, read as this one's
      const expected = JSON.parse(JSON.stringify(await direct(write(theirs))).replaceAll(theirs, mine));
      expect(await viaGateway(write(mine)), write(mine)[0] as string).toEqual(expected);
    }
    // what an Upstash user sees: the distance as the server wrote it
    expect(await viaGateway(['GEODIST', `${k}:g`, 'Palermo', 'Catania', 'FT'])).toBe('545518.8700');
  });
});
