// Doubles back into the text the server sent. glide parses some replies' numbers into doubles
// (a score, a distance, a coordinate), whatever the protocol; the server's RESP2 reply was a
// bulk string, and Upstash clients get that string. Each function prints as one server routine does.

/**
 * How the server prints a score (addReplyDouble): Valkey and Redis 7.2+ the shortest digits
 * that read back as the same double ('shortest'); Redis before 7.2 printf's %.17g ('g17').
 */
export type DoubleStyle = 'shortest' | 'g17';

/** The largest magnitude the server prints as an integer: LLONG_MAX / 2, as a double (2^62). */
const LL_HALF = 2 ** 62;

function special(d: number): string | undefined {
  if (Number.isNaN(d)) return 'nan';
  if (d === Infinity) return 'inf';
  if (d === -Infinity) return '-inf';
  if (d === 0) return Object.is(d, -0) ? '-0' : '0';
  return undefined;
}

/** The shortest digits of |d| and the power of ten of the last one: |d| = digits × 10^k. */
function shortestDigits(d: number): { digits: string; k: number } {
  const [mantissa, exp] = Math.abs(d).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  return { digits, k: Number(exp) - (digits.length - 1) };
}

/** The shortest form, laid out as the server's fpconv_dtoa lays it out. */
function shortest(d: number): string {
  if (Number.isInteger(d) && Math.abs(d) <= LL_HALF) return BigInt(d).toString();
  const sign = d < 0 ? '-' : '';
  const { digits, k } = shortestDigits(d);
  const n = digits.length;
  const exp = Math.abs(k + n - 1);
  if (k >= 0 && exp < n + 7) return sign + digits + '0'.repeat(k);
  if (k < 0 && (k > -7 || exp < 4)) {
    const point = n + k; // digits before the decimal point
    return sign + (point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : `${digits.slice(0, point)}.${digits.slice(point)}`);
  }
  const e = k + n - 1;
  return `${sign}${digits[0]}${n > 1 ? `.${digits.slice(1)}` : ''}e${e < 0 ? '-' : '+'}${Math.abs(e)}`;
}

/** printf's %.17g. */
function g17(d: number): string {
  const [mantissa, expText] = d.toExponential(16).split('e') as [string, string];
  const x = Number(expText);
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (x < -4 || x >= 17) return `${trim(mantissa)}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  return trim(d.toFixed(16 - x));
}

/** A score, a ZINCRBY result: as the server's addReplyDouble prints it. */
export function scoreText(d: number, style: DoubleStyle): string {
  return special(d) ?? (style === 'g17' ? g17(d) : shortest(d));
}

/** A distance (GEODIST, GEOSEARCH WITHDIST): "%.4f". */
export function distanceText(d: number): string {
  return d.toFixed(4);
}

/** The bits of a finite, non-zero double: |d| = m × 2^e exactly. */
function binary(d: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(d));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  return biased === 0 ? { m: fraction, e: -1074 } : { m: fraction | (1n << 52n), e: biased - 1075 };
}

/**
 * "%.17Lf" with trailing zeros cut (the server's ld2string, human mode), of the exact value of
 * d: a coordinate (GEOPOS, GEOSEARCH WITHCOORD) is a double printed that way.
 */
export function humanText(d: number): string {
  const s = special(d);
  if (s !== undefined) return s === '-0' ? '0' : s;
  const { m, e } = binary(d);
  const scale = 10n ** 17n;
  let q: bigint;
  if (e >= 0) q = (m << BigInt(e)) * scale;
  else {
    const shift = BigInt(-e);
    const wide = m * scale;
    q = wide >> shift;
    const twice = (wide - (q << shift)) * 2n;
    const half = 1n << shift;
    if (twice > half || (twice === half && (q & 1n) === 1n)) q += 1n; // round half to even, as printf does
  }
  const whole = (q / scale).toString();
  const fraction = (q % scale).toString().padStart(17, '0').replace(/0+$/, '');
  const text = fraction ? `${whole}.${fraction}` : whole;
  return d < 0 && text !== '0' ? `-${text}` : text;
}

/**
 * INCRBYFLOAT and HINCRBYFLOAT: the server prints its long double sum "%.17Lf" with trailing
 * zeros cut; from the double glide kept, the closest is its shortest digits without an exponent.
 */
export function sumText(d: number): string {
  const s = special(d);
  if (s !== undefined) return s === '-0' ? '0' : s;
  if (Number.isInteger(d)) return BigInt(d).toString();
  const { digits, k } = shortestDigits(d);
  if (k < -17) return humanText(d);
  const point = digits.length + k;
  const body = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (d < 0 ? '-' : '') + body;
}

/**
 * The style of the server whose INFO server section this is: Valkey and Redis 7.2+ print the
 * shortest digits, older Redis %.17g. A server that hides its version is taken as current.
 */
export function styleOf(info: string): DoubleStyle {
  if (/^(?:valkey_version|server_name):/m.test(info)) return 'shortest';
  const version = /^redis_version:(\d+)\.(\d+)/m.exec(info);
  if (!version) return 'shortest';
  const [major, minor] = [Number(version[1]), Number(version[2])];
  return major > 7 || (major === 7 && minor >= 2) ? 'shortest' : 'g17';
}
