// The gateway's producer scope allows this project's scripts by SHA-1 and exact text, taken
// from the generated allScripts: the new admission scripts (@schedule, @schedule-once,
// @genqueue, @genqueue-once) are allowed with nothing else to configure, while a text that
// differs by one byte, or an unknown SHA-1, is still refused (403, nothing written).
import { describe, expect, inject, it } from 'vitest';
import { allScripts, genqueueKeys, genqueueOnceScript, genqueueScript, mintId, scheduleOnceScript, scheduleScript, type Script } from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { gatewayOn } from './support/gateway.js';

const GROUP = 'PRT0KHTOWnGLuC';

describe('the gateway allows the new scripts to a producer token', () => {
  const h = gatewayOn(inject('servers')[0]!.url);
  const post = h.post;
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
      await h.admin.call('SCRIPT', 'FLUSH');
      const q = freshQueue('gwallow');
      const first = mintId();
      const [keys, args] = callOf(script, q, first);
      const byText = await post('/', JSON.stringify(['EVAL', script.text, keys.length, ...keys, ...args, 'by text']), 'application/json');
      expect(byText.status, byText.text).toBe(200);
      expect(String(await h.admin.text('HGET', keys[0]!, 'payload'))).toBe('by text');

      const second = mintId();
      const [keys2, args2] = callOf(script, q, second);
      const path = `/evalsha/${script.sha1}/${keys2.length}/${[...keys2, ...args2].map(encodeURIComponent).join('/')}`;
      const payload = new Uint8Array([0xff, 0, 0xfe, 0xc3]);
      const bySha = await post(path, payload);
      expect(bySha.status, bySha.text).toBe(200);
      expect([...((await h.admin.call('HGET', keys2[0]!, 'payload')) as Buffer)]).toEqual([...payload]);
    },
  );

  it('a text one byte off, or an unknown SHA-1, is refused with 403 and nothing runs', async () => {
    const q = freshQueue('gwdeny');
    const before = await snapshot(h.admin, q);
    for (const script of newScripts) {
      const [keys, args] = callOf(script, q, mintId());
      const altered = `${script.text}\n`; // one byte more, same behaviour
      expect(altered).not.toBe(script.text);
      const byText = await post('/', JSON.stringify(['EVAL', altered, keys.length, ...keys, ...args, 'p']), 'application/json');
      expect(byText.status, script.name).toBe(403);
      const bySha = await post(`/evalsha/${'0'.repeat(40)}/${keys.length}/${[...keys, ...args].map(encodeURIComponent).join('/')}`, 'p');
      expect(bySha.status, script.name).toBe(403);
    }
    expect(await snapshot(h.admin, q)).toEqual(before);
  });
});
