// Counting a /pipeline or /multi-exec body's commands before it is parsed: JSON.parse and
// the checks of an 8 MiB body of 2 M tiny commands cost ~1 s of CPU, only for the cap to
// refuse it. One pass over the bytes, never decoded, stopping as soon as the count passes the
// cap. JSON's structure is ASCII, and every byte of a multi-byte UTF-8 character is >= 0x80,
// so none of them is taken for a quote, a bracket or a comma.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const [ARRAY, END_ARRAY, OBJECT, END_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * True when `body` is a JSON array of more than `max` elements (max >= 1). Anything else,
 * malformed JSON included, is false: JSON.parse then says what is wrong.
 */
export function moreElementsThan(body: Uint8Array, max: number): boolean {
  let i = 0;
  while (i < body.length && SPACE.has(body[i]!)) i++;
  if (body[i] !== ARRAY) return false;
  let depth = 0;
  let commas = 0; // at the top level: n elements have n - 1 between them
  for (; i < body.length; i++) {
    const b = body[i]!;
    if (b === QUOTE) {
      // a string: to its closing quote, an escaped character skipped whatever it is
      for (i++; i < body.length && body[i] !== QUOTE; i++) if (body[i] === BACKSLASH) i++;
    } else if (b === ARRAY || b === OBJECT) depth++;
    else if (b === END_ARRAY || b === END_OBJECT) {
      if (--depth === 0) return false;
    } else if (b === COMMA && depth === 1 && ++commas >= max) return true;
  }
  return false;
}
