// The gateway's producer scope runs the flow scripts (@flow, @flow-parent, @flow-child) by
// SHA-1 and by exact text, with nothing to configure (they are in the generated allScripts),
// and still nothing else: a text one byte off, an unknown SHA-1, or the plain commands the
// library's host sends around its flow scripts (HSET parent_policy, SET, DEL) answer 403 and
// write nothing.
import { describe, expect, inject, it } from 'vitest';
import {
  allScripts,
  dependenciesKey,
  flowChildScript,
  flowOutboxKey,
  flowParentScript,
  flowScript,
  mintId,
  processedKey,
  type Script,
} from '../shared/index.js';
import { freshQueue, snapshot } from './support/admin.js';
import { gatewayOn } from './support/gateway.js';

describe('the gateway allows the flow scripts to a producer token, and nothing more', () => {
  const h = gatewayOn(inject('servers')[0]!.url);
  const post = h.post;
  /** A call of `script` landing fresh jobs of queue q: its keys, its arguments before the payload, and the row the payload lands in (@flow: a child's). */
  const callOf = (script: Script, q: string, size = 1): [string[], string[], string] => {
    const [id, other] = [mintId(), mintId()];
    const row = `emq:{${q}}:job:${id}`;
    if (script === flowScript) {
      const child = `emq:{${q}}:job:${other}`;
      return [[row, dependenciesKey(q, id), `emq:{${q}}:pending`, child], [id, '0', other, 'fp', String(size)], child];
    }
    if (script === flowParentScript) return [[row, dependenciesKey(q, id), processedKey(q, id)], [id, '3'], row];
    return [[row, `emq:{${q}}:pending`, flowOutboxKey(q)], [id, other, `${q}-parent`, 'id', 'land'], row];
  };
  const flowScripts = [flowScript, flowParentScript, flowChildScript];

  it('every flow script is in allScripts, the list the gateway and the REST connection allow and retry', () => {
    for (const s of flowScripts) expect(allScripts).toContain(s);
  });

  it.each(flowScripts.map((s) => [s.name, s] as const))(
    '@%s: EVAL of its exact text (JSON), and EVALSHA path-style with the payload as the raw body',
    async (_, script) => {
      await h.admin.call('SCRIPT', 'FLUSH');
      const q = freshQueue('gwflow');
      const [keys, args, landed] = callOf(script, q, 7);
      const byText = await post('/', JSON.stringify(['EVAL', script.text, keys.length, ...keys, ...args, 'by text']), 'application/json');
      expect(byText.status, byText.text).toBe(200);
      expect(byText.json).not.toHaveProperty('error');
      expect(String(await h.admin.text('HGET', landed, 'payload'))).toBe('by text');

      const payload = new Uint8Array([0xff, 0, 0xfe, 0xc3]);
      const [keys2, args2, landed2] = callOf(script, q, payload.length);
      const path = `/evalsha/${script.sha1}/${keys2.length}/${[...keys2, ...args2].map(encodeURIComponent).join('/')}`;
      const bySha = await post(path, payload);
      expect(bySha.status, bySha.text).toBe(200);
      expect(bySha.json).not.toHaveProperty('error');
      expect([...((await h.admin.call('HGET', landed2, 'payload')) as Buffer)]).toEqual([...payload]);
    },
  );

  it('a text one byte off, an unknown SHA-1, or the commands around the library’s flow scripts: 403, nothing written', async () => {
    const q = freshQueue('gwflowdeny');
    const id = mintId();
    await h.admin.call('HSET', `emq:{${q}}:job:${id}`, 'state', 'pending', 'attempts', '0', 'payload', 'x', 'parent', mintId());
    const before = await snapshot(h.admin, q);
    for (const script of flowScripts) {
      const [keys, args] = callOf(script, q);
      const altered = `${script.text}\n`;
      const byText = await post('/', JSON.stringify(['EVAL', altered, keys.length, ...keys, ...args, 'p']), 'application/json');
      expect(byText.status, script.name).toBe(403);
      const bySha = await post(`/evalsha/${'0'.repeat(40)}/${keys.length}/${[...keys, ...args].map(encodeURIComponent).join('/')}`, 'p');
      expect(bySha.status, script.name).toBe(403);
    }
    for (const command of [
      ['HSET', `emq:{${q}}:job:${id}`, 'parent_policy', 'id'],
      ['SET', dependenciesKey(q, id), '5'],
      ['DEL', `emq:{${q}}:job:${id}`],
      ['RPUSH', flowOutboxKey(q), 'x'],
    ]) {
      const r = await post('/', JSON.stringify(command), 'application/json');
      expect(r.status, command[0]).toBe(403);
    }
    expect(await snapshot(h.admin, q)).toEqual(before);
  });
});
