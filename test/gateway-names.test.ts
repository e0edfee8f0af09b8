import { beforeAll, describe, expect, it } from 'vitest';
import { mintId } from '../shared/ids.js';
import { enqueueScript } from '../shared/scripts.js';
import { freshQueue, type Admin } from './support/admin.js';
import type { GatewayProcess } from './support/gateway.js';
import { call, command, evalshaPath, snapshot, sleep, cappedGateway } from './support/gateway-calls.js';

describe('gateway (one private server, EMQ_GATEWAY_MAX_BODY=1 MiB, EMQ_GATEWAY_MAX_PIPELINE=10)', () => {
  const held = cappedGateway();
  let admin: Admin;
  let gw: GatewayProcess;
  beforeAll(() => void ({ admin, gw } = held));

  describe('finding 2 (security review): command names are ASCII, compared as ASCII', () => {
    it('pıng (dotless ı) with a 0xFF argument, and CONFIG %FF: 400 for both scopes, nothing sent, the shared connection never drops', async () => {
      await admin.call('CONFIG', 'RESETSTAT');
      // a steady stream of honest requests the whole time: none may fail
      let stop = false;
      const honest = (async () => {
        const statuses: number[] = [];
        while (!stop) statuses.push((await command(gw, gw.producer, ['PING'])).status);
        return statuses;
      })();
      const hostile: Array<[string, string]> = [
        [gw.producer, '/p%C4%B1ng/%FF'],
        [gw.admin, '/p%C4%B1ng/%FF'],
        [gw.admin, '/CONFIG/%FF'],
        [gw.admin, '/config/g%C3%A9t/x'],
        [gw.admin, '/obj%C4%B1ect/%FF'],
        [gw.producer, '/%FF'],
      ];
      for (let round = 0; round < 5; round++) {
        for (const [token, path] of hostile) {
          const r = await call(gw, path, { token });
          expect(r.status, path).toBe(400);
          expect(r.json.error, path).toMatch(/ASCII/);
        }
        const json = await command(gw, gw.admin, ['PİNG']);
        expect(json.status).toBe(400);
      }
      stop = true;
      const statuses = await honest;
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.every((st) => st === 200)).toBe(true);
      // none of them reached Valkey
      expect(await admin.calls('ping')).toBe(statuses.length);
      expect(await admin.calls('config')).toBe(0);
      // ASCII names in any case still work
      expect(await command(gw, gw.producer, ['pInG'])).toMatchObject({ status: 200, json: { result: 'PONG' } });
      expect(await command(gw, gw.admin, ['config', 'get', 'maxmemory'])).toMatchObject({ status: 200 });
    });
  });

  describe("finding 2 (security review): unknown commands never reach Valkey, and nothing an admin sends drops the producers' connection", () => {
    /** Error replies Valkey has sent since the last CONFIG RESETSTAT: an unknown command sent would count. */
    const errorReplies = async () => Number(/total_error_replies:(\d+)/.exec(String(await admin.text('INFO', 'stats')))?.[1]);
    /** Calls of COMMAND LIST since the last CONFIG RESETSTAT. */
    const commandLists = async () => Number(/^cmdstat_command\|list:calls=(\d+)/m.exec(String(await admin.text('INFO', 'commandstats')))?.[1] ?? 0);

    /** Producers enqueueing and PINGing the whole time `during` runs: every status they got. */
    async function producersDuring(during: () => Promise<void>): Promise<number[]> {
      await admin.call('SCRIPT', 'LOAD', enqueueScript.text);
      const q = freshQueue('steady');
      let stop = false;
      const statuses: number[] = [];
      const producers = Array.from({ length: 4 }, async (_, i) => {
        while (!stop) {
          const r =
            i % 2 === 0
              ? await command(gw, gw.producer, ['PING'])
              : await call(gw, evalshaPath(q, mintId()), { token: gw.producer, method: 'POST', body: 'steady' });
          statuses.push(r.status);
        }
      });
      try {
        await during();
      } finally {
        stop = true;
        await Promise.all(producers);
      }
      return statuses;
    }

    it('(a) an unknown command, with a 0xFF argument or a UTF-8 character Valkey would cut at 128 bytes: 400 for the admin scope, nothing sent', async () => {
      const cut = `x${'\u00e9'.repeat(100)}`; // Valkey echoes 128 bytes: 'x' and 63.5 characters
      const before = await snapshot(admin);
      await admin.call('CONFIG', 'RESETSTAT');
      const statuses = await producersDuring(async () => {
        for (let round = 0; round < 3; round++) {
          const answers = [
            await call(gw, '/nosuchcmd/%FF', { token: gw.admin }),
            await call(gw, `/nosuchcmd/${encodeURIComponent(cut)}`, { token: gw.admin }),
            await call(gw, '/nosuchcmd', { token: gw.admin, method: 'POST', body: Buffer.from([0xff, 0xfe]) }),
            await command(gw, gw.admin, ['nosuchcmd', cut]),
            await call(gw, '/pipeline', {
              token: gw.admin,
              method: 'POST',
              body: JSON.stringify([
                ['SET', 'unknown:k', 'v'],
                ['nosuchcmd', cut],
              ]),
            }),
            await call(gw, '/multi-exec', {
              token: gw.admin,
              method: 'POST',
              body: JSON.stringify([
                ['SET', 'unknown:k', 'v'],
                ['nosuchcmd', cut],
              ]),
            }),
          ];
          for (const r of answers) {
            expect(r.status, r.text).toBe(400);
            expect(r.json.error).toMatch(/^ERR unknown command 'NOSUCHCMD'/);
          }
        }
      });
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      // not one of them reached Valkey: no error reply was sent, no SET ran, nothing changed
      expect(await errorReplies()).toBe(0);
      expect(await admin.calls('set')).toBe(0);
      expect(await admin.call('EXISTS', 'unknown:k')).toBe(0);
      const after = await snapshot(admin);
      // the producers' jobs are the only change
      expect(
        Object.keys(after.entries)
          .filter((k) => !(k in before.entries))
          .every((k) => Buffer.from(k, 'hex').toString().startsWith('emq:{steady-')),
      ).toBe(true);
      for (const [k, v] of Object.entries(before.entries)) if (!Buffer.from(k, 'hex').toString().startsWith('emq:{steady-')) expect(after.entries[k]).toBe(v);
    });

    it('(a) known commands in any case still run, and the command table is read once, not per request', async () => {
      expect(await command(gw, gw.admin, ['PING'])).toMatchObject({ status: 200 }); // learned by now
      await admin.call('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 10; i++) {
        expect(await command(gw, gw.admin, ['set', 'known:k', String(i)])).toMatchObject({ status: 200, json: { result: 'OK' } });
        expect(await call(gw, '/GeT/known:k', { token: gw.admin })).toMatchObject({ status: 200, json: { result: String(i) } });
        expect(
          await call(gw, '/pipeline', {
            token: gw.admin,
            method: 'POST',
            body: JSON.stringify([
              ['Config', 'get', 'maxmemory'],
              ['object', 'encoding', 'known:k'],
            ]),
          }),
        ).toMatchObject({ status: 200 });
      }
      expect(await commandLists()).toBe(0);
      await admin.call('DEL', 'known:k');
    });

    it("(b) an admin command whose error reply is not UTF-8 (a script's error_reply) drops only the admin's own connection: every producer call still answers 200", async () => {
      const statuses = await producersDuring(async () => {
        for (let round = 0; round < 3; round++) {
          const r = await call(gw, `/eval/${encodeURIComponent('return redis.error_reply(ARGV[1])')}/0/%FF`, { token: gw.admin });
          // the admin's own connection cannot read the reply: 503, or 400 once glide learns to
          expect([400, 503], r.text).toContain(r.status);
          // the admin scope comes back by itself
          let back = 0;
          for (const deadline = Date.now() + 10_000; Date.now() < deadline && back !== 200; await sleep(50)) {
            back = (await command(gw, gw.admin, ['PING'])).status;
          }
          expect(back).toBe(200);
        }
      });
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    }, 60_000);
  });
});
