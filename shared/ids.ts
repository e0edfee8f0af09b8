// Job ids: `JOB` + the 128 bits of a UUIDv7 (RFC 9562) in lowercase Crockford base32.
// Byte order is mint order: within one minter, ids minted in the same millisecond, or
// while the clock stands still (Workers freeze Date.now() inside a request) or steps
// back, carry a counter in the 74 bits after the timestamp (RFC 9562 §6.2, method 2).
import { ID_ALPHABET, validateId } from './keyspace.js';

export interface MinterOptions {
  /** Milliseconds since the Unix epoch. */
  now?: () => number;
  /** Fills the array with random bytes. */
  random?: (bytes: Uint8Array<ArrayBuffer>) => void;
}

export type Minter = () => string;

const TWO_32 = 2 ** 32;

export function createMinter({
  now = Date.now,
  random = (bytes) => crypto.getRandomValues(bytes),
}: MinterOptions = {}): Minter {
  let last = -1;
  // The 74 bits after the version: a (12 bits), hi (30 bits), lo (32 bits).
  let a = 0;
  let hi = 0;
  let lo = 0;
  const seed = new Uint8Array(10);
  const bytes = new Uint8Array(16);

  const reseed = (ms: number) => {
    random(seed);
    a = ((seed[0]! << 8) | seed[1]!) & 0x7ff; // top bit clear: room for 2^73 increments
    hi = ((seed[2]! << 24) | (seed[3]! << 16) | (seed[4]! << 8) | seed[5]!) & 0x3fffffff;
    lo = ((seed[6]! << 24) | (seed[7]! << 16) | (seed[8]! << 8) | seed[9]!) >>> 0;
    last = ms;
  };

  return () => {
    const ms = Math.floor(now());
    if (ms > last) {
      reseed(ms);
    } else if (++lo === TWO_32) {
      lo = 0;
      if (++hi === 2 ** 30) {
        hi = 0;
        if (++a === 4096) reseed(last + 1); // counter exhausted: borrow the next millisecond
      }
    }
    const t = last;
    const tHigh = Math.floor(t / TWO_32);
    bytes[0] = (tHigh >>> 8) & 0xff;
    bytes[1] = tHigh & 0xff;
    bytes[2] = (t >>> 24) & 0xff;
    bytes[3] = (t >>> 16) & 0xff;
    bytes[4] = (t >>> 8) & 0xff;
    bytes[5] = t & 0xff;
    bytes[6] = 0x70 | (a >>> 8);
    bytes[7] = a & 0xff;
    bytes[8] = 0x80 | (hi >>> 24);
    bytes[9] = (hi >>> 16) & 0xff;
    bytes[10] = (hi >>> 8) & 0xff;
    bytes[11] = hi & 0xff;
    bytes[12] = lo >>> 24;
    bytes[13] = (lo >>> 16) & 0xff;
    bytes[14] = (lo >>> 8) & 0xff;
    bytes[15] = lo & 0xff;
    return 'JOB' + encode(bytes);
  };
}

/** 128 bits as 26 base32 characters: two zero bits lead, so the first character is 0-7. */
function encode(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 2;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ID_ALPHABET[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

let shared: Minter | undefined;

/** A fresh job id from this process's minter. */
export function mintId(): string {
  shared ??= createMinter();
  return shared();
}

export interface DecodedId {
  /** The UUID in its canonical 8-4-4-4-12 form. */
  uuid: string;
  /** The mint time, in milliseconds since the Unix epoch. */
  time: number;
  version: number;
}

/** The UUID an id encodes, and its mint time. Throws as validateId does. */
export function decodeId(id: string): DecodedId {
  validateId(id);
  const bytes = new Uint8Array(16);
  let acc = 0;
  let bits = -2; // drop the two leading zero bits
  let i = 0;
  for (const ch of id.slice(3)) {
    acc = (acc << 5) | ID_ALPHABET.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[i++] = (acc >>> bits) & 0xff;
    }
    acc &= (1 << Math.max(bits, 0)) - 1;
  }
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  const time = parseInt(hex.slice(0, 12), 16);
  return {
    uuid: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    time,
    version: bytes[6]! >>> 4,
  };
}
