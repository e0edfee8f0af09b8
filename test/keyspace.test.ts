import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidIdError, InvalidQueueError, KindError, jobKey, mintId, pendingKey, validateId, validateQueue } from '../shared/index.js';

const queueChar = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-');

describe('queue names', () => {
  it('builds the protocol keys', () => {
    expect(pendingKey('orders')).toBe('emq:{orders}:pending');
    expect(jobKey('orders', 'JOB01m8ktkzg6eaatm9sqpt0r51n2')).toBe('emq:{orders}:job:JOB01m8ktkzg6eaatm9sqpt0r51n2');
  });

  it('accepts every name of 1-128 allowed characters (property)', () => {
    fc.assert(
      fc.property(fc.array(queueChar, { minLength: 1, maxLength: 128 }).map((a) => a.join('')), (q) => {
        validateQueue(q);
        expect(pendingKey(q)).toBe(`emq:{${q}}:pending`);
      }),
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
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), () => validateId(mintId())), { numRuns: 1000 });
  });

  it.each([
    ['job01m8ktkzg6eaatm9sqpt0r51n2', KindError, /JOB-namespaced/],
    ['', KindError, /JOB-namespaced/],
    ['JOB', InvalidIdError, /3 characters long, not 29/],
    ['JOB01M8KTKZG6EAATM9SQPT0R51N2', InvalidIdError, /uppercase/],
    ['JOB81m8ktkzg6eaatm9sqpt0r51n2', InvalidIdError, /above 7/],
    ['JOB01m8ktkzg6eaatm9sqpt0r51nu', InvalidIdError, /no i, l, o, u/],
    ['JOB01m8ktkzg6eaatm9sqpt0r51n:', InvalidIdError, /outside/],
    ['JOB01m8ktkzg6eaatm9sqpt0r51n2x', InvalidIdError, /30 characters long/],
  ])('refuses %j', (id, type, why) => {
    expect(() => validateId(id)).toThrow(type);
    expect(() => validateId(id)).toThrow(why);
  });

  it('refuses any 29-character JOB string with a character outside the alphabet (property)', () => {
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...alphabet), minLength: 25, maxLength: 25 }),
        fc.string({ minLength: 1, maxLength: 1 }).filter((c) => !alphabet.includes(c)),
        fc.nat(24),
        (body, c, at) => {
          const id = `JOB0${body.slice(0, at)}${c}${body.slice(at + 1)}`;
          expect(() => validateId(id)).toThrow(InvalidIdError);
        },
      ),
    );
  });

  it('a job key checks both parts', () => {
    expect(() => jobKey('ok', 'nope')).toThrow(KindError);
    expect(() => jobKey('no way', mintId())).toThrow(InvalidQueueError);
  });
});
