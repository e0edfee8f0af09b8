// The arbitraries both surfaces draw from: printable and header junk, ids valid and hostile,
// bodies of every shape and size, raw path segments, token alterations.
import fc from 'fast-check';
import { encodeId } from '../../shared/ids.js';

export const printable = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
export const headerJunk = fc.stringMatching(/^[\t\x20-\x7e\xa0-\xff]{0,60}$/);
export const validId = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map((s) => encodeId('JOB', s));
export const hostileId = fc.oneof(
  validId.map((id) => id.toUpperCase()),
  validId.map((id) => `job${id.slice(3)}`),
  validId.map((id) => `ORD${id.slice(3)}`),
  validId.map((id) => id.slice(0, -1)),
  validId.map((id) => `${id}0`),
  validId.map((id) => `JOBz${id.slice(4)}`),
  validId.map((id) => `${id.slice(0, 10)}-${id.slice(11)}`),
  fc.constantFrom(
    '',
    'JOB',
    'JOB ',
    '0',
    'null',
    '../JOB',
    'JOB%00',
    `JOB${'0'.repeat(11)}\t`,
    'JOB01m8ktkzg6eaatm9sqpt0r51n2',
    'JOBAzL8n0Y58m8',
    'ORD0NgWEfAEJfs',
  ),
  printable,
  headerJunk,
);

export type Body = { t: 'bytes'; bytes: Uint8Array } | { t: 'text'; text: string } | { t: 'sized'; size: number; fill: 'mixed' | 'ascii' | 'ff' };
export const bodyArb = (max: number): fc.Arbitrary<Body> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ t: 'bytes' as const, bytes })) },
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 80 }).map((text) => ({ t: 'text' as const, text })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.uint8Array({ maxLength: 20 }), fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xef, 0xbb, 0xbf]))
        .map(([a, b]) => ({ t: 'bytes' as const, bytes: Uint8Array.from([...a, ...b]) })),
    },
    { weight: 1, arbitrary: fc.constant({ t: 'bytes' as const, bytes: new Uint8Array(0) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('sized' as const),
        size: fc.oneof(fc.integer({ min: 1_000, max: 40_000 }), fc.constantFrom(max, max + 1), fc.integer({ min: max + 1, max: max + 5_000 })),
        fill: fc.constantFrom('mixed' as const, 'ascii' as const, 'ff' as const),
      }),
    },
  );
export function bytesOf(b: Body): Buffer {
  if (b.t === 'bytes') return Buffer.from(b.bytes);
  if (b.t === 'text') return Buffer.from(b.text, 'utf8');
  const out = Buffer.alloc(b.size);
  for (let i = 0; i < b.size; i++) out[i] = b.fill === 'ff' ? 0xff : b.fill === 'ascii' ? 0x61 + (i % 26) : (i * 131 + (i >> 7)) & 0xff;
  return out;
}

/** How a token is altered: appended to, chopped, upper-cased. */
export type Alter = 'none' | 'append' | 'chop' | 'upper';

export const rawSegArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{0,12}$/),
  fc.constantFrom('%', '%ZZ', '%FF', '%2F', '%2e', '%2E%2E', 'jobs', 'batch', 'healthz', 'readyz', 'v1', 'queues', 'webhooks', 'fz-b', 'gh'),
  fc.string({ maxLength: 8 }).map(encodeURIComponent),
);

export function headersOf(list: Array<[string, string | undefined]>, extra: [string, string] | undefined): Array<[string, string]> {
  const out = list.filter((h): h is [string, string] => h[1] !== undefined);
  if (extra) out.push(extra);
  return out;
}
