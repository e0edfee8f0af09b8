// The gateway's limits, as the real process over real HTTP: bodies and pipelines over their
// caps, malformed requests (each refused, nothing written), and the default caps' CPU.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { mintId } from '../shared/ids.js';
import { enqueueScript } from '../shared/scripts.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import {
  call,
  command,
  keysOf,
  evalshaPath,
  evalEnqueue,
  percentBytes,
  snapshot,
  readAll,
  MAX_BODY,
  MAX_PIPELINE,
  cappedGateway,
} from './support/gateway-calls.js';

describe('gateway (one private server, EMQ_GATEWAY_MAX_BODY=1 MiB, EMQ_GATEWAY_MAX_PIPELINE=10)', () => {
  const held = cappedGateway();
  let admin: Admin;
  let gw: GatewayProcess;
  beforeAll(() => void ({ admin, gw } = held));

  // ---- 4. limits and malformed requests
  describe('limits', () => {
    it('a chunked body growing past EMQ_GATEWAY_MAX_BODY is answered 413 while the client is still writing, and nothing is written', async () => {
      const q = freshQueue('big');
      const id = mintId();
      const before = await snapshot(admin);
      const TOTAL = 16 * 1024 * 1024;
      const CHUNK = Buffer.alloc(64 * 1024, 0x61);
      const url = new URL(gw.url + evalshaPath(q, id));
      const outcome = await new Promise<{ status: number; written: number; body: string; finished: boolean }>((resolve, reject) => {
        let written = 0;
        let finished = false;
        let timer: NodeJS.Timeout | undefined;
        const req = request(
          url,
          { method: 'POST', agent: false, headers: { Authorization: `Bearer ${gw.producer}`, 'Transfer-Encoding': 'chunked' } },
          (res) => {
            const at = written;
            clearInterval(timer);
            readAll(res).then(
              (body) => {
                req.destroy();
                resolve({ status: res.statusCode!, written: at, body, finished });
              },
              (err) => {
                req.destroy();
                resolve({ status: res.statusCode!, written: at, body: String(err), finished });
              },
            );
          },
        );
        req.on('error', (err) => {
          if (!finished || written < TOTAL) reject(err);
        });
        timer = setInterval(() => {
          if (written >= TOTAL) {
            clearInterval(timer);
            finished = true;
            req.end();
            return;
          }
          req.write(CHUNK);
          written += CHUNK.length;
        }, 5);
      });
      expect(outcome.status).toBe(413);
      expect(outcome.finished).toBe(false);
      // the cap is 1 MiB: the answer comes after a little more than that, not after 16 MiB
      expect(outcome.written, `bytes written when the 413 arrived`).toBeGreaterThan(MAX_BODY);
      expect(outcome.written, `bytes written when the 413 arrived`).toBeLessThan(4 * 1024 * 1024);
      expect(JSON.parse(outcome.body).error).toContain(String(MAX_BODY));
      expect(await admin.footprint(q)).toEqual({});
      expect(await snapshot(admin)).toEqual(before);
    }, 20_000);

    it('a Content-Length above the cap is answered 413 at once, before any body byte is sent', async () => {
      const q = freshQueue('big');
      const id = mintId();
      const before = await snapshot(admin);
      const url = new URL(gw.url + evalshaPath(q, id));
      const outcome = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent: false,
            headers: { Authorization: `Bearer ${gw.producer}`, 'Content-Length': String(MAX_BODY + 1) },
          },
          (res) => {
            readAll(res).then((body) => {
              req.destroy();
              resolve({ status: res.statusCode!, body });
            }, reject);
          },
        );
        req.on('error', () => undefined);
        req.flushHeaders(); // headers only: not one byte of the body is ever written
        setTimeout(() => reject(new Error('no answer within 3 s to a Content-Length above the cap')), 3_000).unref();
      });
      expect(outcome.status).toBe(413);
      expect(JSON.parse(outcome.body).error).toContain(String(MAX_BODY));
      expect(await admin.footprint(q)).toEqual({});
      expect(await snapshot(admin)).toEqual(before);
    });

    it('a body of exactly the cap is accepted', async () => {
      const q = freshQueue('cap');
      const id = mintId();
      const payload = randomBytes(MAX_BODY);
      const r = await call(gw, evalshaPath(q, id), { token: gw.producer, method: 'POST', body: payload });
      expect(r.status).toBe(200);
      expect(((await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer).equals(payload)).toBe(true);
    });

    it('malformed JSON to POST /, /pipeline and /multi-exec → 400, nothing written', async () => {
      const before = await snapshot(admin);
      for (const [path, body] of [
        ['/', '["SET","json:k",'],
        ['/', '{"SET":"json:k"}'],
        ['/', ''],
        ['/', '[]'],
        // null and booleans go as their JSON text, as Upstash does (gateway-upstash.test.ts); nested values do not
        ['/', '["SET","json:k",{"a":1}]'],
        ['/', '["SET","json:k",[1]]'],
        ['/pipeline', '[["SET","json:k","v"],'],
        ['/pipeline', '[]'],
        ['/multi-exec', '[["SET","json:k","v"]'],
      ] as const) {
        const r = await call(gw, path, { token: gw.admin, method: 'POST', body });
        expect(r.status, `${path} ${body}`).toBe(400);
        expect(r.json.error, `${path} ${body}`).toMatch(/^ERR /);
      }
      expect(await snapshot(admin)).toEqual(before);
    });

    it('a pipeline longer than EMQ_GATEWAY_MAX_PIPELINE → 400 and none of it ran; exactly the limit runs', async () => {
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const sets = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ['SET', `pipe:${tag}:${i}`, 'v']);
      for (const route of ['/pipeline', '/multi-exec']) {
        const r = await call(gw, route, { token: gw.admin, method: 'POST', body: JSON.stringify(sets(MAX_PIPELINE + 1, 'over')) });
        expect(r.status, route).toBe(400);
        expect(r.json.error).toContain(String(MAX_PIPELINE));
      }
      const q = freshQueue('over');
      const jobs = Array.from({ length: MAX_PIPELINE + 1 }, () => mintId()).map((id) => evalEnqueue(q, id, 'x'));
      expect((await call(gw, '/pipeline', { token: gw.producer, method: 'POST', body: JSON.stringify(jobs) })).status).toBe(400);
      expect(await admin.calls('set')).toBe(0);
      expect(await admin.calls('eval')).toBe(0);
      expect(await admin.footprint(q)).toEqual({});
      expect(await snapshot(admin)).toEqual(before);

      const ok = await call(gw, '/pipeline', { token: gw.admin, method: 'POST', body: JSON.stringify(sets(MAX_PIPELINE, 'exact')) });
      expect(ok.status).toBe(200);
      expect(ok.json).toHaveLength(MAX_PIPELINE);
      expect(Number(await admin.call('DBSIZE'))).toBe(before.dbsize + MAX_PIPELINE);
    });

    it('a JSON body that is not UTF-8 → 400, never decoded into other bytes, nothing written', async () => {
      const before = await snapshot(admin);
      const body = Buffer.concat([Buffer.from('["SET","utf8:k","'), Buffer.from([0xff, 0xfe]), Buffer.from('"]')]);
      const r = await call(gw, '/', { token: gw.admin, method: 'POST', body });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: expect.stringMatching(/not valid UTF-8/) });
      expect(await snapshot(admin)).toEqual(before);
    });

    it('HEAD runs no command: 405, nothing written', async () => {
      const before = await snapshot(admin);
      const r = await call(gw, '/set/head:k/v', { token: gw.admin, method: 'HEAD' });
      expect(r.status).toBe(405);
      expect(await snapshot(admin)).toEqual(before);
    });

    it('dot segments (%2E, %2E%2E) are arguments, never path navigation', async () => {
      const before = await snapshot(admin);
      // a raw request: fetch would resolve the dots before sending
      const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(new URL(gw.url), { method: 'GET', path: '/exists/a/%2E%2E/%2E', headers: { Authorization: `Bearer ${gw.admin}` } }, (res) =>
          readAll(res).then((body) => resolve({ status: res.statusCode!, body }), reject),
        );
        req.on('error', reject);
        req.end();
      });
      expect(raw.status).toBe(200);
      expect(JSON.parse(raw.body)).toEqual({ result: 0 }); // EXISTS a .. . — three keys, none there
      expect(await snapshot(admin)).toEqual(before);
    });

    it('the Bearer scheme is case-insensitive', async () => {
      for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
        const r = await call(gw, '/ping', { headers: { Authorization: `${scheme} ${gw.producer}` } });
        expect(r.status, scheme).toBe(200);
      }
    });

    it('a producer may name the script by a percent-escaped sha', async () => {
      const q = freshQueue('esc');
      const id = mintId();
      const sha = percentBytes(Buffer.from(enqueueScript.sha1)).replace(/[0-9a-f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
      const path = `/evalsha/${sha}/2/${keysOf(q, id).map(encodeURIComponent).join('/')}/${id}`;
      const r = await call(gw, path, { token: gw.producer, method: 'POST', body: 'x' });
      expect(r.json).toEqual({ result: 1 });
    });

    it('PUT, DELETE, PATCH → 405 with Allow, nothing written', async () => {
      const before = await snapshot(admin);
      for (const method of ['PUT', 'DELETE', 'PATCH']) {
        const r = await call(gw, '/set/put:k/v', { token: gw.admin, method, body: method === 'DELETE' ? undefined : 'v' });
        expect(r.status, method).toBe(405);
        expect(r.headers.get('allow')).toMatch(/GET/);
        const root = await call(gw, '/', { token: gw.admin, method, body: JSON.stringify(['SET', 'put:k', 'v']) });
        expect(root.status, `${method} /`).toBe(405);
      }
      expect(await snapshot(admin)).toEqual(before);
    });

    it('BLPOP (JSON, path-style, in a pipeline) → 400 at once, nothing ran, and the shared connection still answers', async () => {
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const json = await command(gw, gw.admin, ['BLPOP', 'blk:list', 0]);
      expect(json.status).toBe(400);
      expect(json.json.error).toMatch(/BLPOP/);
      expect((await call(gw, '/blpop/blk:list/0', { token: gw.admin })).status).toBe(400);
      expect((await call(gw, '/blpop/blk:list/0', { token: gw.producer })).status).toBe(400);
      const pipe = await call(gw, '/pipeline', {
        token: gw.admin,
        method: 'POST',
        body: JSON.stringify([
          ['SET', 'blk:k', 'v'],
          ['BLPOP', 'blk:list', 0],
        ]),
      });
      expect(pipe.status).toBe(400);
      const multi = await call(gw, '/multi-exec', {
        token: gw.admin,
        method: 'POST',
        body: JSON.stringify([
          ['SET', 'blk:k', 'v'],
          ['BLPOP', 'blk:list', 0],
        ]),
      });
      expect(multi.status).toBe(400);
      expect(await admin.calls('blpop')).toBe(0);
      expect(await admin.calls('set')).toBe(0);
      expect(await snapshot(admin)).toEqual(before);
      expect(await command(gw, gw.admin, ['PING'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
    }, 10_000);

    it('XREAD / XREADGROUP with BLOCK → 400 at once; without BLOCK they run', async () => {
      await admin.call('CONFIG', 'RESETSTAT');
      for (const cmd of [
        ['XREAD', 'BLOCK', 0, 'STREAMS', 'blk:stream', '$'],
        ['xread', 'count', 1, 'block', 0, 'streams', 'blk:stream', '$'],
        ['XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', 'blk:stream', '>'],
      ]) {
        const r = await command(gw, gw.admin, cmd);
        expect(r.status, String(cmd)).toBe(400);
        expect(r.json.error).toMatch(/would block/);
      }
      expect((await call(gw, '/xread/Block/0/streams/blk:stream/$', { token: gw.admin })).status).toBe(400);
      expect(await admin.calls('xread')).toBe(0);
      expect(await admin.calls('xreadgroup')).toBe(0);
      expect(await command(gw, gw.admin, ['XREAD', 'STREAMS', 'blk:stream', '0'])).toMatchObject({ status: 200 });
    });
  });
});

// ---------------------------------------------------------------- finding 11: bodies and pipelines at their default caps

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ, 100 on Linux)
}

/**
 * A chunked POST written 64 KiB at a time until an answer arrives (or `total` bytes were
 * written): the status, how much was written by then, and the body.
 */
/**
 * streamOnce, sent again (at most twice) when the connection broke before its answer was read:
 * the gateway closes the socket after an early answer while this side still writes, and on a
 * loaded machine the write's EPIPE can come before the answer is parsed.
 */
async function streamUntilAnswered(url: URL, headers: Record<string, string>, total: number) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await streamOnce(url, headers, total);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 3 || (code !== 'EPIPE' && code !== 'ECONNRESET')) throw err;
    }
  }
}

function streamOnce(url: URL, headers: Record<string, string>, total: number) {
  return new Promise<{ status: number; written: number; body: string; finished: boolean }>((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    let finished = false;
    const req = request(url, { method: 'POST', agent: false, headers: { ...headers, 'Transfer-Encoding': 'chunked' } }, (res) => {
      const at = written;
      clearInterval(timer);
      readAll(res).then(
        (body) => (req.destroy(), resolve({ status: res.statusCode!, written: at, body, finished })),
        (err) => (req.destroy(), resolve({ status: res.statusCode!, written: at, body: String(err), finished })),
      );
    });
    req.on('error', (err) => {
      clearInterval(timer);
      if (!finished) reject(err);
    });
    const timer = setInterval(() => {
      if (written >= total) {
        clearInterval(timer);
        finished = true;
        req.end();
        return;
      }
      req.write(chunk);
      written += chunk.length;
    }, 2);
  });
}

describe('finding 11 (security review): a gateway at its default caps (8 MiB bodies, 2 MiB for a producer token, 10,000 commands)', () => {
  const MiB = 1024 * 1024;
  let server: RunningServer;
  let admin: Admin;
  let gw: GatewayProcess;
  beforeAll(async () => {
    server = await startServer();
    admin = await connectAdmin(server.url);
    await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
    gw = await startGatewayProcess(server.url);
  });
  afterAll(async () => {
    const code = await gw?.stop();
    admin?.close();
    await server?.stop();
    expect(code).toBe(0);
  });

  it('an 8 MiB /pipeline of 2.1 M commands is refused before it is parsed: 400 naming the cap, nothing ran', async () => {
    const n = Math.floor((8 * MiB - 2) / 4); // [1], is 4 bytes: 2,097,151 commands
    const body = Buffer.concat([Buffer.from('['), Buffer.alloc(4 * (n - 1), '[1],'), Buffer.from('[1]]')]);
    expect(body.length).toBeLessThanOrEqual(8 * MiB);
    const before = await snapshot(admin);
    await admin.call('CONFIG', 'RESETSTAT');
    for (const route of ['/pipeline', '/multi-exec']) {
      const cpu = cpuSeconds(gw.child.pid!);
      const started = performance.now();
      const r = await call(gw, route, { token: gw.admin, method: 'POST', body });
      const ms = performance.now() - started;
      expect(r.status).toBe(400);
      // it stopped counting at the cap: it never learned how many there were
      expect(r.json.error).toBe('ERR more than 10000 commands in one request; the limit is 10000');
      console.log(
        `[finding 11] ${route}: 8 MiB of ${n.toLocaleString('en')} commands refused in ${ms.toFixed(0)} ms, gateway CPU ${((cpuSeconds(gw.child.pid!) - cpu) * 1000).toFixed(0)} ms (upload included)`,
      );
    }
    expect(await admin.calls('exec')).toBe(0);
    expect(await snapshot(admin)).toEqual(before);
  });

  it('the count skips what is inside strings (commas, brackets, escaped quotes) and nested arrays: exactly 10,000 such commands run', async () => {
    const tricky = ['a,b', '],[', '\\",[', '\\\\', '"', '{"x":[1,2]}'];
    const commands = Array.from({ length: 10_000 }, (_, i) => ['ECHO', tricky[i % tricky.length]!]);
    const ok = await call(gw, '/pipeline', { token: gw.admin, method: 'POST', body: JSON.stringify(commands) });
    expect(ok.status).toBe(200);
    expect(ok.json).toHaveLength(10_000);
    expect(ok.json[1]).toEqual({ result: '],[' });
    const over = await call(gw, '/pipeline', { token: gw.admin, method: 'POST', body: JSON.stringify([...commands, ['ECHO', 'one more']]) });
    expect(over.status).toBe(400);
    expect(over.json.error).toContain('10000');
  });

  it("a producer token's body past 2 MiB: 413 while it streams in (an admin's 3 MiB body is fine), nothing written; no token: 401 before any of it is read", async () => {
    const q = freshQueue('pcap');
    const before = await snapshot(admin);
    const streamed = await streamUntilAnswered(new URL(gw.url + evalshaPath(q, mintId())), { Authorization: `Bearer ${gw.producer}` }, 16 * MiB);
    expect(streamed.status).toBe(413);
    expect(streamed.finished).toBe(false);
    expect(streamed.written).toBeGreaterThan(2 * MiB);
    expect(streamed.written).toBeLessThan(8 * MiB);
    expect(JSON.parse(streamed.body).error).toContain(String(2 * MiB));
    const declared = await call(gw, evalshaPath(q, mintId()), { token: gw.producer, method: 'POST', body: Buffer.alloc(2 * MiB + 1, 0x62) });
    expect(declared.status).toBe(413);
    // JSON the same way
    const json = await call(gw, '/pipeline', { token: gw.producer, method: 'POST', body: JSON.stringify([['ECHO', 'x'.repeat(2 * MiB)]]) });
    expect(json.status).toBe(413);
    // without a token the body is never read: 401 at the first chunk
    const anonymous = await streamUntilAnswered(new URL(gw.url + evalshaPath(q, mintId())), {}, 16 * MiB);
    expect(anonymous.status).toBe(401);
    expect(anonymous.written).toBeLessThan(2 * MiB);
    expect(await admin.footprint(q)).toEqual({});
    expect(await snapshot(admin)).toEqual(before);

    // exactly 2 MiB for a producer, and 3 MiB for an admin, are taken
    const id = mintId();
    const payload = randomBytes(2 * MiB);
    expect(await call(gw, evalshaPath(q, id), { token: gw.producer, method: 'POST', body: payload })).toMatchObject({ status: 200, json: { result: 1 } });
    expect(((await admin.call('HGET', keysOf(q, id)[0]!, 'payload')) as Buffer).equals(payload)).toBe(true);
    const big = randomBytes(3 * MiB);
    expect(await call(gw, '/set/pcap:admin', { token: gw.admin, method: 'POST', body: big })).toMatchObject({ status: 200, json: { result: 'OK' } });
    expect(((await admin.call('GET', 'pcap:admin')) as Buffer).equals(big)).toBe(true);
    await admin.call('DEL', 'pcap:admin');
  }, 30_000);
});
