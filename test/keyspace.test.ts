import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidIdError, InvalidQueueError, KindError, jobKey, mintId, pendingKey, validateId, validateQueue } from '../shared/index.js';

const queueChar = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-');

describe('queue names', () => {
  it('builds the protocol keys', () => {
    expect(pendingKey('orders')).toBe('emq:{orders}:pending');
    expect(jobKey('orders', 'JOB0JZGkP8sq48')).toBe('emq:{orders}:job:JOB0JZGkP8sq48');
  });

  it('accepts every name of 1-128 allowed characters (property)', () => {
    fc.assert(
      fc.property(
        fc.array(queueChar, { minLength: 1, maxLength: 128 }).map((a) => a.join('')),
        (q) => {
          validateQueue(q);
          expect(pendingKey(q)).toBe(`emq:{${q}}:pending`);
        },
      ),
    );
  });

  it('refuses any name with a character outside the rule, saying which (property)', () => {
    const bad = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((c) => !/^[A-Za-z0-9._-]$/.test(c));
    fc.assert(
      fc.property(fc.string({ unit: queueChar, maxLength: 20 }), bad, fc.string({ unit: queueChar, maxLength: 20 }), (a, c, b) => {
        expect(() => validateQueue(a + c + b)).toThrow(InvalidQueueError);
        expect(() => pendingKey(a + c + b)).toThrow(/contains/);
      }),
    );
  });

  it.each([
    ['', /empty/],
    ['x'.repeat(129), /129 characters long; the limit is 128/],
    ['a{b', /contains '\{'/],
    ['a}b', /contains '\}'/],
    ['a:b', /contains ':'/],
    ['a b', /U\+0020/],
    ['a\tb', /U\+0009/],
    ['a\u0000b', /U\+0000/],
    ['é', /U\+00E9/],
  ])('refuses %j with a message that says why', (q, why) => {
    expect(() => validateQueue(q)).toThrow(InvalidQueueError);
    expect(() => validateQueue(q)).toThrow(why);
  });

  it('refuses a non-string', () => {
    expect(() => validateQueue(42)).toThrow(/must be a string, got number/);
  });
});

describe('job ids', () => {
  it('accepts minted ids (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), () => validateId(mintId())),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['job0JZGkP8sq48', InvalidIdError, /namespace of 3 capital letters/],
    ['', InvalidIdError, /0 characters long/],
    ['JOB', InvalidIdError, /3 characters long; a branded id is exactly 14/],
    ['JOB01m8ktkzg6eaatm9sqpt0r51n2', InvalidIdError, /29 characters long/],
    ['JOBzzzzzzzzzzz', InvalidIdError, /more than 63 bits/],
    ['JOB0JZGkP8sq4:', InvalidIdError, /outside base62/],
    ['JOB0JZGkP8sq4\u00e9', InvalidIdError, /outside base62/],
    ['ORD0NgWEfAEJfs', KindError, /namespace ORD; a job id must be JOB-namespaced/],
    ['USR0KHTOWnGLuC', KindError, /JOB-namespaced/],
  ])('refuses %j', (id, type, why) => {
    expect(() => validateId(id)).toThrow(type);
    expect(() => validateId(id)).toThrow(why);
  });

  it('refuses any 14-character JOB string with a character outside base62 (property)', () => {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...alphabet), minLength: 10, maxLength: 10 }),
        fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !alphabet.includes(c)),
        fc.nat(9),
        (body, c, at) => {
          const id = `JOB0${body.slice(0, at)}${c}${body.slice(at + 1)}`;
          expect(() => validateId(id)).toThrow(InvalidIdError);
        },
      ),
    );
  });

  it('the queue named emq is reserved', () => {
    expect(() => validateQueue('emq')).toThrow(/reserved/);
    validateQueue('emq0.jobs123');
    validateQueue('EMQ');
  });

  it('a job key checks both parts', () => {
    expect(() => jobKey('ok', 'nope')).toThrow(InvalidIdError);
    expect(() => jobKey('ok', 'ORD0NgWEfAEJfs')).toThrow(KindError);
    expect(() => jobKey('no way', mintId())).toThrow(InvalidQueueError);
  });
});
