// Queue patterns (functions/producer/queue-patterns.ts): the grammar, the matcher EMQ_TOKENS and
// trustedCaller authorize with, the longest-match lookup EMQ_HOME_REGIONS and EMQ_QUEUE_GROUPS
// route with, and the refusals at start. The same rule over real HTTP is producer-tenants.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configFrom } from '../functions/producer/config.js';
import { parseQueueGroups } from '../functions/producer/queue-groups.js';
import { PatternError, checkPattern, queueLookup, queueMatcher } from '../functions/producer/queue-patterns.js';
import { parseCallerTokens, trustedCaller } from '../functions/producer/tokens.js';

const STRICT = { rawPrefixes: false };
const RAW = { rawPrefixes: true };
const at = (i: number) => `p[${i}]`;
const matcher = (patterns: string[], options = STRICT) => queueMatcher(patterns, options, at);
const TOKEN = 'queue-patterns-token-0123456789';

describe('the matcher', () => {
  it('"acme.*" is one segment under acme: acme.x, never acme.x.y, acme., acme or acmex', () => {
    const m = matcher(['acme.*']);
    for (const q of ['acme.x', 'acme.mail', 'acme.a-b_c', `acme.${'z'.repeat(123)}`]) expect(m(q), q).toBe(true);
    for (const q of ['acme.corp.payroll', 'acme.x.y', 'acme.', 'acme..x', 'acme', 'acmex', 'acme-corp.x', 'acm.x', '.acme.x', 'x.acme.y']) {
      expect(m(q), q).toBe(false);
    }
  });

  it('a stem may have dots: "acme.corp.*" is one segment under acme.corp', () => {
    const m = matcher(['acme.corp.*']);
    expect(['acme.corp.payroll', 'acme.corp.x'].map(m)).toEqual([true, true]);
    expect(['acme.corp', 'acme.corp.x.y', 'acme.corpx.y', 'acme.x'].map(m)).toEqual([false, false, false, false]);
  });

  it('exact names match only themselves, byte for byte: no case mapping, no normalisation', () => {
    const m = matcher(['orders', 'acme.*']);
    expect(['orders', 'Orders', 'ORDERS', 'orders.x', 'order', 'ACME.x', 'Acme.x'].map(m)).toEqual([true, false, false, false, false, false, false]);
    // odd input the route would refuse anyway is simply not matched
    for (const q of ['acme.ﬀ', 'acme.ı', 'acme.x\n', 'acme.x\u0000', 'acme.x/y', 'acme.*', '', 'ａｃｍｅ.x', 'acme\u2024x'])
      expect(m(q), JSON.stringify(q)).toBe(false);
  });

  it('tenants that are prefixes of each other never reach each other: a, a.b, ab, a-b', () => {
    const tenants = ['a', 'a.b', 'ab', 'a-b', 'a.b.c', 'a_b'];
    for (const t of tenants) {
      const m = matcher([`${t}.*`]);
      for (const other of tenants) expect(m(`${other}.q`), `${t}.* vs ${other}.q`).toBe(other === t);
    }
  });

  it('raw prefixes, only where allowed: "acme*" is every name starting acme, "*" every queue', () => {
    expect(matcher(['acme*'], RAW)('acme-corp.x.y')).toBe(true);
    expect(matcher(['acme*'], RAW)('acm')).toBe(false);
    expect(matcher(['*'], RAW)('anything.at.all')).toBe(true);
    expect(matcher(['x', 'acme.*', 'b*'], RAW)('b.c.d')).toBe(true);
  });

  it('refuses "*", bare prefixes and empty stems unless told rawPrefixes, naming the pattern by position', () => {
    expect(() => matcher(['ok', '*'])).toThrow(/^p\[1\] is \*, which allows every queue; .*set rawPrefixes: true to mean it$/);
    expect(() => matcher(['acme*'])).toThrow(/^p\[0\] is a bare prefix .*"acme\.\*"/);
    expect(() => queueMatcher(['*'], { rawPrefixes: false, optIn: 'X' }, at)).toThrow(/set X to mean it/);
    // what `${tenant}.*` and `${tenant}*` make of an empty tenant
    expect(() => matcher(['.*'])).toThrow(/^p\[0\] ends in \.\* but what comes before it is not/);
    expect(() => matcher(['*'])).toThrow(PatternError);
  });

  it('refuses what is no queue name and no pattern', () => {
    const bad = [
      '',
      'a*b',
      '*.x',
      'a.*.b',
      'a..*',
      '.a.*',
      'a.b..*',
      '**',
      'a.**',
      'emq',
      'a b',
      'acme.é',
      'ａ',
      'a'.repeat(129),
      `${'a'.repeat(127)}.*`,
      'x{y}.*',
    ];
    for (const p of bad) expect(() => checkPattern(p, RAW), JSON.stringify(p)).toThrow(PatternError);
    for (const p of [7, null, undefined, ['a']]) expect(() => checkPattern(p, RAW)).toThrow(/must be a string/);
    // the error never repeats the pattern (EMQ_TOKENS is a secret)
    expect(() => checkPattern('secret-looking*', STRICT)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret-looking') }));
    for (const p of ['a', 'a.*', 'a.b.*', 'A-_9.z.*', `${'a'.repeat(126)}.*`, 'a'.repeat(128), 'emq.*', 'emq.x'])
      expect(() => checkPattern(p, STRICT), p).not.toThrow();
  });
});

describe('the lookup (EMQ_HOME_REGIONS, EMQ_QUEUE_GROUPS)', () => {
  const lookup = (map: Record<string, string>) => queueLookup(Object.entries(map), RAW, (k) => `m["${k}"]`);

  it('the exact entry, else the longest pattern (a.* counts as the prefix "a."), else undefined', () => {
    const l = lookup({ '*': 'all', 'a*': 'raw-a', 'a.*': 'seg-a', 'a.l*': 'raw-a.l', 'a.lane': 'exact', 'a.b.*': 'seg-ab' });
    const queues = ['a.lane', 'a.lx', 'a.x', 'a.x.y', 'a.', 'ab', 'a.b.c', 'a.b.c.d', 'a.l.x', 'zzz'];
    expect(queues.map(l)).toEqual(['exact', 'raw-a.l', 'seg-a', 'raw-a', 'raw-a', 'raw-a', 'seg-ab', 'raw-a', 'raw-a.l', 'all']);
    expect(lookup({ 'a.*': 'seg' })('b.x')).toBeUndefined();
  });

  it('EMQ_QUEUE_GROUPS uses it and names a bad entry', () => {
    const groups = parseQueueGroups({
      EMQ_QUEUE_GROUPS: JSON.stringify({ 'fz-a.lane': 'DEF0KHTOWnGLuC', 'fz-a.l*': 'PFX0KHTOWnGLuC', 't.*': 'TEN0KHTOWnGLuC' }),
    });
    expect(['fz-a.lane', 'fz-a.lx', 't.x', 't.x.y', 'fz-a.x'].map(groups)).toEqual([
      'DEF0KHTOWnGLuC',
      'PFX0KHTOWnGLuC',
      'TEN0KHTOWnGLuC',
      undefined,
      undefined,
    ]);
    expect(() => parseQueueGroups({ EMQ_QUEUE_GROUPS: '{"a.*.b": "DEF0KHTOWnGLuC"}' })).toThrow(
      /^EMQ_QUEUE_GROUPS: "a\.\*\.b" is not a queue name or a pattern/,
    );
  });
});

describe('EMQ_TOKENS', () => {
  const tokens = (entries: unknown[]) => JSON.stringify(entries);

  it('finding 3 (second review): "*" or a bare prefix without "rawPrefixes": true stops start, naming the entry by position, never the token', () => {
    const cases: Array<[unknown[], RegExp]> = [
      [
        [{ token: TOKEN, queues: ['*'] }],
        /^EMQ_TOKENS\[0\]\.queues\[0\] is \*, which allows every queue; .*set "rawPrefixes": true in EMQ_TOKENS\[0\] to mean it$/,
      ],
      [
        [
          { token: TOKEN, queues: ['a.*'] },
          { token: `${TOKEN}x`, queues: ['b', 'acme*'] },
        ],
        /^EMQ_TOKENS\[1\]\.queues\[1\] is a bare prefix/,
      ],
      [[{ token: TOKEN, queues: ['.*'] }], /^EMQ_TOKENS\[0\]\.queues\[0\] ends in \.\*/],
      [[{ token: TOKEN, queues: ['a b'] }], /^EMQ_TOKENS\[0\]\.queues\[0\] is not a queue name or a pattern/],
      [[{ token: TOKEN, queues: [3] }], /^EMQ_TOKENS\[0\]\.queues\[0\] must be a string/],
      [[{ token: TOKEN, queues: ['*'], rawPrefixes: 'yes' }], /^EMQ_TOKENS\[0\]\.rawPrefixes must be true or false$/],
      [[{ token: TOKEN, queues: [] }], /^EMQ_TOKENS\[0\]\.queues must be a non-empty array/],
    ];
    for (const [entries, message] of cases) {
      let err: Error | undefined;
      try {
        configFrom({ EMQ_TOKENS: tokens(entries) });
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toMatch(message);
      expect(err?.message).not.toContain(TOKEN);
    }
  });

  it('"rawPrefixes": true lets an entry mean "*" and bare prefixes; other entries stay strict', () => {
    const t = parseCallerTokens(
      tokens([
        { token: TOKEN, queues: ['*'], rawPrefixes: true },
        { token: `${TOKEN}-acme`, queues: ['acme.*'] },
      ]),
    );
    expect(t.callerOf(TOKEN)?.allows('any.queue.at.all')).toBe(true);
    const acme = t.callerOf(`${TOKEN}-acme`)!;
    expect(['acme.mail', 'acme.corp.payroll', 'acme-corp.x'].map((q) => acme.allows(q))).toEqual([true, false, false]);
  });
});

describe('trustedCaller', () => {
  it('the tenant form: tenant.name for each name, tenant.<one segment> for *', () => {
    const c = trustedCaller({ tenant: 'acme', queues: ['emails', 'reports'], scope: 's' });
    expect(['acme.emails', 'acme.reports', 'acme.other', 'acme.emails.x', 'emails', 'acme.corp.emails'].map((q) => c.allows(q))).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    const all = trustedCaller({ tenant: 'acme', queues: ['*'], scope: 's' });
    expect(['acme.x', 'acme.x.y', 'acmex.y'].map((q) => all.allows(q))).toEqual([true, false, false]);
  });

  it('finding 3 (second review): refuses an empty or dotted tenant, names that cross it, "*" and bare prefixes, with a TypeError naming the problem', () => {
    const refused: Array<[() => unknown, RegExp]> = [
      [() => trustedCaller({ tenant: '', queues: ['x'], scope: 's' }), /^trustedCaller: tenant must be one segment/],
      [() => trustedCaller({ tenant: 'acme.corp', queues: ['x'], scope: 's' }), /tenant must be one segment/],
      [() => trustedCaller({ tenant: undefined as unknown as string, queues: ['x'], scope: 's' }), /tenant must be one segment/],
      [() => trustedCaller({ tenant: 'acme', queues: ['corp.payroll'], scope: 's' }), /^trustedCaller: queues\[0\] must be one segment/],
      [() => trustedCaller({ tenant: 'acme', queues: ['x', ''], scope: 's' }), /queues\[1\] must be one segment/],
      [() => trustedCaller({ tenant: 'acme', queues: ['x*'], scope: 's' }), /queues\[0\] must be one segment/],
      [() => trustedCaller({ tenant: 'acme', queues: ['x'], scope: 's', rawPrefixes: true } as never), /rawPrefixes is for the pattern form/],
      [() => trustedCaller({ tenant: 'a', queues: ['z'.repeat(127)], scope: 's' }), /queues\[0\] is not a queue name/],
      [() => trustedCaller({ queues: ['*'], scope: 's' }), /^trustedCaller: queues\[0\] is \*, which allows every queue; .*rawPrefixes: true/],
      [() => trustedCaller({ queues: [`${''}.*`], scope: 's' }), /^trustedCaller: queues\[0\] ends in \.\*/],
      [() => trustedCaller({ queues: ['ok', 'acme*'], scope: 's' }), /^trustedCaller: queues\[1\] is a bare prefix/],
      [() => trustedCaller({ queues: [], scope: 's' }), /queues must be a non-empty array/],
      [() => trustedCaller({ queues: ['a.*'], scope: '' }), /scope must be a non-empty string/],
    ];
    for (const [make, message] of refused) expect(make).toThrow(message);
    for (const [make] of refused) expect(make).toThrow(TypeError);
    expect(trustedCaller({ queues: ['*'], scope: 's', rawPrefixes: true }).allows('x.y.z')).toBe(true);
  });
});

describe('property: tenant ids never reach each other', () => {
  const runs = Number(process.env.FUZZ_RUNS ?? 200);
  // tenant ids as a deployment might make them: dotted or not, prefixes of each other
  const segment = fc.stringMatching(/^[a-c_-]{1,3}$/);
  const tenant = fc.oneof(
    fc.constantFrom('a', 'a.b', 'ab', 'a-b', 'a.b.c', 'b', 'a_b', 'ab.c'),
    fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('.')),
  );

  it("a tenant t's t.* (and the tenant form, for one-segment tenants) allows t.<segment> and nothing of another tenant", () => {
    fc.assert(
      fc.property(tenant, tenant, segment, (t, u, name) => {
        const mine = trustedCaller({ queues: [`${t}.*`], scope: t });
        const token = parseCallerTokens(JSON.stringify([{ token: TOKEN, queues: [`${t}.*`] }])).callerOf(TOKEN)!;
        const own = `${t}.${name}`;
        const theirs = `${u}.${name}`;
        expect(mine.allows(own)).toBe(true);
        expect(mine.allows(theirs)).toBe(t === u);
        expect(token.allows(theirs)).toBe(t === u);
        // deeper names of t's are another tenant's (`${t}.${name}` as a tenant), never t's
        expect(mine.allows(`${own}.${name}`)).toBe(false);
        if (!t.includes('.') && !u.includes('.')) {
          expect(trustedCaller({ tenant: t, queues: ['*'], scope: t }).allows(theirs)).toBe(t === u);
        }
      }),
      { numRuns: runs },
    );
  });
});
