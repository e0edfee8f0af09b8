// The flow body's checks, before anything reaches Valkey: each refusal names what is wrong
// (and the child's index); a good body keeps every payload byte.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../functions/producer/flow-body.js';
import { Problem } from '../functions/producer/problem.js';

const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const ID = 'JOB0JZGkP8sq48';
const ID2 = 'JOB0JZGkP8sq49';
const refused = (body: unknown, max = 1000, maxPayload = 64) => {
  try {
    parseFlow(enc(body), max, maxPayload);
  } catch (err) {
    expect(err).toBeInstanceOf(Problem);
    const p = err as Problem;
    expect([p.status, p.code]).toEqual([400, 'invalid_flow']);
    return { detail: p.detail, index: p.extra.index };
  }
  throw new Error('accepted');
};

describe('parseFlow', () => {
  it('a good flow: payloads as bytes (text and base64), ids, queues, onFailure defaulting to fail-parent', () => {
    const flow = parseFlow(
      enc({
        parent: { payload: 'sum', id: ID },
        children: [{ payloadBase64: '/wA=' }, { payload: 'é', id: ID2, queue: 'other', onFailure: 'ignore' }],
      }),
      1000,
      64,
    );
    expect(flow.parent).toEqual({ id: ID, payload: enc('sum') });
    expect(flow.children).toEqual([
      { payload: new Uint8Array([0xff, 0]), queue: undefined, onFailure: 'fail-parent' },
      { id: ID2, payload: enc('é'), queue: 'other', onFailure: 'ignore' },
    ]);
  });

  it.each([
    ['not JSON', '{', /UTF-8 JSON object/, undefined],
    ['an array', [], /UTF-8 JSON object/, undefined],
    ['an unknown top-level field', { parent: { payload: 'p' }, children: [{ payload: 'c' }], x: 1 }, /unknown field "x"/, undefined],
    ['no parent', { children: [{ payload: 'c' }] }, /^parent must be an object/, undefined],
    ['a parent with both payloads', { parent: { payload: 'p', payloadBase64: 'AA==' }, children: [{ payload: 'c' }] }, /^parent: needs exactly one/, undefined],
    ['a parent with children inside', { parent: { payload: 'p', children: [] }, children: [{ payload: 'c' }] }, /^parent: put children/, undefined],
    ['a parent id of another kind', { parent: { payload: 'p', id: 'ACC0JZGkP8sq48' }, children: [{ payload: 'c' }] }, /^parent: /, undefined],
    ['no children', { parent: { payload: 'p' }, children: [] }, /non-empty array/, undefined],
    ['children not an array', { parent: { payload: 'p' }, children: { payload: 'c' } }, /non-empty array/, undefined],
    ['a nested child', { parent: { payload: 'p' }, children: [{ payload: 'c' }, { payload: 'c', children: [{ payload: 'g' }] }] }, /^child 1: nested/, 1],
    ['an unknown child field', { parent: { payload: 'p' }, children: [{ payload: 'c', delay: '1s' }] }, /^child 0: unknown field "delay"/, 0],
    ['a bad child queue', { parent: { payload: 'p' }, children: [{ payload: 'c', queue: 'a:b' }] }, /^child 0: queue: /, 0],
    ['the reserved queue', { parent: { payload: 'p' }, children: [{ payload: 'c', queue: 'emq' }] }, /^child 0: queue: .*reserved/, 0],
    ['a bad onFailure', { parent: { payload: 'p' }, children: [{ payload: 'c', onFailure: 'fp' }] }, /^child 0: onFailure/, 0],
    ['a child with the parent id', { parent: { payload: 'p', id: ID }, children: [{ payload: 'c', id: ID }] }, /^child 0: .*the parent's/, 0],
    [
      'two children with one id',
      {
        parent: { payload: 'p' },
        children: [
          { payload: 'c', id: ID2 },
          { payload: 'c', id: ID2 },
        ],
      },
      /^child 1: .*child 0's/,
      1,
    ],
    ['a child payload over the limit', { parent: { payload: 'p' }, children: [{ payload: 'x'.repeat(65) }] }, /^child 0: payload is 65 bytes/, 0],
    ['a lone surrogate', { parent: { payload: 'p' }, children: [{ payload: '\ud800' }] }, /^child 0: payload has a lone surrogate/, 0],
  ])('refuses %s', (_, body, detail, index) => {
    const r = refused(body);
    expect(r.detail).toMatch(detail);
    expect(r.index).toBe(index);
  });

  it('1 to maxChildren children', () => {
    const kids = (n: number) => Array.from({ length: n }, () => ({ payload: 'c' }));
    expect(parseFlow(enc({ parent: { payload: 'p' }, children: kids(3) }), 3, 64).children).toHaveLength(3);
    expect(refused({ parent: { payload: 'p' }, children: kids(4) }, 3).detail).toMatch(/4 children; a flow holds at most 3/);
  });
});
