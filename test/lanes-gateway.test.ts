// The gateway's producer scope allows this project's scripts by SHA-1 and exact text, taken
// from the generated allScripts: the new admission scripts (@schedule, @schedule-once,
// @genqueue, @genqueue-once) are allowed with nothing else to configure, while a text that
// differs by one byte, or an unknown SHA-1, is still refused (403, nothing written).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { allScripts, genqueueKeys, genqueueOnceScript, genqueueScript, mintId, scheduleOnceScript, scheduleScript, type Script } from '../shared/index.js';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { answerOf } from './support/answer.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';

const GROUP = 'PRT0KHTOWnGLuC';

describe('the gateway allows the new scripts to a producer token', () => {
  let gw: GatewayProcess;
  let admin: Admin;
  const server = inject('servers')[0]!;
  beforeAll(async () => {
    gw = await startGatewayProcess(server.url);
    admin = await connectAdmin(server.url);
  });
  afterAll(async () => {
    admin?.close();
    if (gw) expect(await gw.stop()).toBe(0);
  });

  const post = async (path: string, body: string | Uint8Array, type = 'application/octet-stream') =>
    answerOf(await fetch(gw.url + path, { method: 'POST', body, headers: { Authorization: `Bearer ${gw.producer}`, 'Content-Type': type } }));
  /** A call of `script` for a fresh job of queue q: its keys and its arguments before the payload. */
  const callOf = (script: Script, q: string, id: string): [string[], string[]] => {
    const g = genqueueKeys(q)(id, GROUP);
    const de = `emq:{${q}}:de:gw-${id}`;
    if (script === scheduleScript)
      return [
        [g[0]!, `emq:{${q}}:schedule`],
        [id, 'in', '60000', GROUP],
      ];
    if (script === scheduleOnceScript)
      return [
        [g[0]!, `emq:{${q}}:schedule`, de],
        [id, '1', '60', 'at', '5'],
      ];
    if (script === genqueueScript) return [g, [id, GROUP]];
    return [
      [...g, de],
      [id, '1', '60', GROUP],
    ];
  };
  const newScripts = [scheduleScript, scheduleOnceScript, genqueueScript, genqueueOnceScript];

  it('every new script is in allScripts, the list the gateway and the REST connection allow and retry', () => {
    for (const s of newScripts) expect(allScripts).toContain(s);
  });

  it.each(newScripts.map((s) => [s.name, s] as const))(
    '@%s: EVAL of its exact text (JSON) and EVALSHA path-style with the payload as the raw body',
    async (_, script) => {
      await admin.call('SCRIPT', 'FLUSH');
      const q = freshQueue('gwallow');
      const first = mintId();
      const [keys, args] = callOf(script, q, first);
      const byText = await post('/', JSON.stringify(['EVAL', script.text, keys.length, ...keys, ...args, 'by text']), 'application/json');
      expect(byText.status, byText.text).toBe(200);
      expect(String(await admin.text('HGET', keys[0]!, 'payload'))).toBe('by text');

      const second = mintId();
      const [keys2, args2] = callOf(script, q, second);
      const path = `/evalsha/${script.sha1}/${keys2.length}/${[...keys2, ...args2].map(encodeURIComponent).join('/')}`;
      const payload = new Uint8Array([0xff, 0, 0xfe, 0xc3]);
      const bySha = await post(path, payload);
      expect(bySha.status, bySha.text).toBe(200);
      expect([...((await admin.call('HGET', keys2[0]!, 'payload')) as Buffer)]).toEqual([...payload]);
    },
  );

  it('a text one byte off, or an unknown SHA-1, is refused with 403 and nothing runs', async () => {
    const q = freshQueue('gwdeny');
    const before = await snapshot(admin, q);
    for (const script of newScripts) {
      const [keys, args] = callOf(script, q, mintId());
      const altered = `${script.text}\n`; // one byte more, same behaviour
      expect(altered).not.toBe(script.text);
      const byText = await post('/', JSON.stringify(['EVAL', altered, keys.length, ...keys, ...args, 'p']), 'application/json');
      expect(byText.status, script.name).toBe(403);
      const bySha = await post(`/evalsha/${'0'.repeat(40)}/${keys.length}/${[...keys, ...args].map(encodeURIComponent).join('/')}`, 'p');
      expect(bySha.status, script.name).toBe(403);
    }
    expect(await snapshot(admin, q)).toEqual(before);
  });
});
