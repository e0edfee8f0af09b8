// Branded ids, exactly the EchoMQ library's (EchoData.BrandedId, EchoData.Snowflake):
//   id        = namespace (3 bytes A-Z) + base62 of a 63-bit snowflake in 11 digits, 14 bytes
//   snowflake = ts << 22 | node << 12 | seq   (ts: ms since 2024-01-01T00:00:00Z)
// The base62 alphabet ascends in ASCII and the width is fixed, so byte order of ids of one
// namespace is numeric order of snowflakes: mint order.
import { InvalidIdError } from './errors.js';

export const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const ID_LENGTH = 14;
/** Milliseconds since the Unix epoch at snowflake time 0: 2024-01-01T00:00:00Z. */
export const SNOWFLAKE_EPOCH_MS = 1_704_067_200_000;
/** base62(2^63 - 1): the largest valid payload; the range check compares bytes against it. */
export const ID_CEILING = 'AzL8n0Y58m7';
export const NODE_MAX = 1023;

const SEQ = 4096; // 2^12
const TS_LIMIT = 2 ** 41; // ts beyond this is past 2093-09-06

const digitOf = new Int8Array(128).fill(-1);
for (let i = 0; i < ID_ALPHABET.length; i++) digitOf[ID_ALPHABET.charCodeAt(i)] = i;

function shown(value: string): string {
  return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value);
}

/**
 * Why `id` is not a branded id (any namespace), or undefined when it is. Checks as the
 * library's reference orders them: length, namespace, charset, range.
 */
export function idShapeProblem(id: string): string | undefined {
  if (id.length !== ID_LENGTH) return `is ${id.length} characters long; a branded id is exactly ${ID_LENGTH}`;
  for (let i = 0; i < 3; i++) {
    const c = id.charCodeAt(i);
    if (c < 65 || c > 90) return 'must start with a namespace of 3 capital letters A-Z (JOB for jobs)';
  }
  for (let i = 3; i < ID_LENGTH; i++) {
    const c = id.charCodeAt(i);
    if (c >= 128 || digitOf[c] === -1) return 'has a character outside base62 (0-9, A-Z, a-z) after the namespace';
  }
  // the range check: the digits against ID_CEILING's, byte by byte (the alphabet ascends in ASCII)
  for (let i = 3; i < ID_LENGTH; i++) {
    const c = id.charCodeAt(i);
    const limit = ID_CEILING.charCodeAt(i - 3);
    if (c !== limit) return c > limit ? `encodes more than 63 bits (its last 11 characters are above ${ID_CEILING})` : undefined;
  }
  return undefined;
}

/** Throws InvalidIdError saying what is wrong unless `id` is a well-formed branded id of any namespace. */
export function checkIdShape(id: unknown, what = 'job id'): asserts id is string {
  if (typeof id !== 'string') throw new InvalidIdError(`${what} must be a string, got ${typeof id}`);
  const problem = idShapeProblem(id);
  if (problem) throw new InvalidIdError(`${what} ${shown(id)} ${problem}: expected a 14-character branded id such as JOB0KHTOWnGLuC`);
}

const CODE = Uint8Array.from(ID_ALPHABET, (c) => c.charCodeAt(0));
const digits = new Uint8Array(11); // scratch: base62 runs to completion, never re-entered

/**
 * The 11 base62 digits of ts * 2^22 + low (ts < 2^41, low < 2^22), without BigInt: long
 * division of three 21-bit limbs, so every step is exact small-integer arithmetic (a float
 * modulo of the 63-bit value was most of a mint's time).
 */
function base62(ts: number, low: number): string {
  let a = Math.floor(ts / 2 ** 20); // bits 42-62
  let b = (ts - a * 2 ** 20) * 2 + (low >>> 21); // bits 21-41
  let c = low & 0x1fffff; // bits 0-20
  for (let i = 10; i >= 0; i--) {
    let q = (a / 62) | 0;
    let r = a - q * 62;
    a = q;
    let t = r * 2 ** 21 + b; // < 62 * 2^21
    q = (t / 62) | 0;
    r = t - q * 62;
    b = q;
    t = r * 2 ** 21 + c;
    q = (t / 62) | 0;
    r = t - q * 62;
    c = q;
    digits[i] = CODE[r]!;
  }
  const d = digits;
  return String.fromCharCode(d[0]!, d[1]!, d[2]!, d[3]!, d[4]!, d[5]!, d[6]!, d[7]!, d[8]!, d[9]!, d[10]!);
}

/** `namespace` + base62(snowflake). Throws RangeError for a bad namespace or a snowflake outside [0, 2^63 - 1]. */
export function encodeId(namespace: string, snowflake: bigint): string {
  if (!/^[A-Z]{3}$/.test(namespace)) throw new RangeError('a namespace is 3 capital letters A-Z');
  if (snowflake < 0n || snowflake > 0x7fffffffffffffffn) throw new RangeError('a snowflake is in [0, 2^63 - 1]');
  return namespace + base62(Number(snowflake >> 22n), Number(snowflake & 0x3fffffn));
}

export interface DecodedId {
  namespace: string;
  /** The snowflake as a decimal string (it needs 63 bits; JSON numbers hold 53). */
  snowflake: string;
  unixMs: number;
  node: number;
  seq: number;
}

/** The snowflake a branded id carries. Throws InvalidIdError unless it is well-formed. */
export function snowflakeOf(id: string): bigint {
  checkIdShape(id, 'id');
  let value = 0n;
  for (let i = 3; i < ID_LENGTH; i++) value = value * 62n + BigInt(digitOf[id.charCodeAt(i)]!);
  return value;
}

/** What a branded id of any namespace holds. Throws InvalidIdError unless it is well-formed. */
export function decodeId(id: string): DecodedId {
  const s = snowflakeOf(id);
  return {
    namespace: id.slice(0, 3),
    snowflake: s.toString(),
    unixMs: Number(s >> 22n) + SNOWFLAKE_EPOCH_MS,
    node: Number((s >> 12n) & 0x3ffn),
    seq: Number(s & 0xfffn),
  };
}

export interface MinterOptions {
  /** This minter's node id, 0 to 1023. Two minters must not share one, or their ids can collide. */
  node: number;
  /** Milliseconds since the Unix epoch. */
  now?: () => number;
  /** The namespace minted; JOB by default. */
  namespace?: string;
}

export interface Minter {
  (): string;
  readonly node: number;
}

/**
 * A monotonic minter, as the library's Snowflake: one cell holds `ts << 12 | seq`, and each
 * mint takes max(now's cell, last + 1). So a burst in one millisecond counts seq up, an
 * exhausted seq borrows the next millisecond (running ahead of the clock), and a clock that
 * stands still or steps back keeps counting: never a repeat, never a wait. The cell starts
 * at the current millisecond with seq 0, so the first mint in that millisecond gets seq 1.
 */
export function createMinter({ node, now = Date.now, namespace = 'JOB' }: MinterOptions): Minter {
  if (!Number.isInteger(node) || node < 0 || node > NODE_MAX) throw new RangeError(`a node id is a whole number from 0 to ${NODE_MAX}`);
  if (!/^[A-Z]{3}$/.test(namespace)) throw new RangeError('a namespace is 3 capital letters A-Z');
  const cellOf = () => Math.max(0, Math.floor(now()) - SNOWFLAKE_EPOCH_MS) * SEQ;
  let last = -1;
  let seeded = false;
  const mint = () => {
    const cand = cellOf();
    // seeded at the first mint, not at creation: Workers may create it before any clock runs
    if (!seeded) {
      seeded = true;
      last = cand;
    }
    last = Math.max(cand, last + 1);
    const ts = Math.floor(last / SEQ);
    if (ts >= TS_LIMIT) throw new RangeError('the snowflake clock has passed its horizon (2093-09-06)');
    return namespace + base62(ts, node * SEQ + (last % SEQ));
  };
  return Object.assign(mint, { node });
}

/**
 * A fresh id after a collision. Two minters on one node id that collide mint in lockstep
 * (the same sequence), so the next ids would collide again: skipping a random 0-63 ids
 * first puts them out of step. Skipping keeps every id unique and in mint order.
 */
export function remint(mint: () => string): string {
  for (let skip = drawFrom(0, 63); skip > 0; skip--) mint();
  return mint();
}

/** A random whole number in [min, max]. */
function drawFrom(min: number, max: number): number {
  const [r] = crypto.getRandomValues(new Uint32Array(1));
  return min + (r! % (max - min + 1));
}

/**
 * A node-id pool such as `512-1023` or `7`: [first, last]. Throws RangeError (naming
 * nothing but the rule) unless both ends are whole numbers in 0..1023, first ≤ last.
 */
export function parseNodePool(text: string): [number, number] {
  const m = /^\s*(\d{1,4})\s*(?:-\s*(\d{1,4})\s*)?$/.exec(text);
  const first = m ? Number(m[1]) : NaN;
  const last = m ? Number(m[2] ?? m[1]) : NaN;
  if (!(first >= 0 && last <= NODE_MAX && first <= last)) {
    throw new RangeError(`must be a node id or a range such as 512-1023, within 0-${NODE_MAX}`);
  }
  return [first, last];
}

/** A node id drawn at random from a pool, for a minter no one pinned (a Worker isolate). */
export function drawNode([first, last]: [number, number] = [0, NODE_MAX]): number {
  return drawFrom(first, last);
}

let shared: Minter | undefined;

/** Makes `minter` this process's (or isolate's) own, used by mintId(). */
export function setMinter(minter: Minter): void {
  shared = minter;
}

/** This process's minter: the one set with setMinter, else one on a node id drawn from 0-1023. */
export function processMinter(): Minter {
  return (shared ??= createMinter({ node: drawNode() }));
}

/** A fresh job id from this process's minter. */
export function mintId(): string {
  return processMinter()();
}
