// Counting a JSON body's commands and their elements before it is parsed: JSON.parse and the
// checks of a 2 MiB body of 500,000 tiny arguments cost a second of CPU, only for a cap to
// refuse it. One pass over the bytes, never decoded, stopping as soon as a count passes its
// cap. JSON's structure is ASCII, and every byte of a multi-byte UTF-8 character is >= 0x80,
// so none of them is taken for a quote, a bracket or a comma.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const [ARRAY, END_ARRAY, OBJECT, END_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The caps a body is counted against. */
export interface Caps {
  /** 1: the body is one command (POST /); 2: an array of commands (/pipeline, /multi-exec). */
  level: 1 | 2;
  /** Most commands: the top-level array's elements (level 2). */
  commands: number;
  /** Most elements in one command, its name included. */
  perCommand: number;
  /** Most elements in the whole body, at every depth (a pipeline's commands are elements too). */
  total: number;
}

/**
 * Why `body` holds more than `caps` allow, or undefined. Every container's elements are
 * counted, arrays and objects at any depth (a valid command nests none, but JSON.parse would
 * build them); an empty container counts one. Malformed JSON may count either way: JSON.parse
 * then says what is wrong.
 */
export function overCaps(body: Uint8Array, caps: Caps): string | undefined {
  let i = 0;
  while (i < body.length && SPACE.has(body[i]!)) i++;
  const first = body[i];
  if (first !== ARRAY && first !== OBJECT) return undefined; // a scalar holds one value
  const { level, commands: maxCommands, perCommand, total: maxTotal } = caps;
  let depth = 0;
  let commas = 0; // level 2: the top-level commas, the current command's index
  let inCommand = 0; // the current command's elements
  let total = 0;
  for (; i < body.length; i++) {
    const b = body[i]!;
    if (b === QUOTE) {
      // a string: to its closing quote, an escaped character skipped whatever it is
      for (i++; i < body.length && body[i] !== QUOTE; i++) if (body[i] === BACKSLASH) i++;
      continue;
    }
    if (b === ARRAY || b === OBJECT) {
      // a container's first element is counted as it opens, each further one at its comma
      if (++depth === level) inCommand = 1;
      else if (depth > level) inCommand++;
    } else if (b === COMMA) {
      if (depth >= level) inCommand++;
      else if (depth === 1 && ++commas >= maxCommands) return `more than ${maxCommands} commands in one request; the limit is ${maxCommands}`;
    } else {
      if ((b === END_ARRAY || b === END_OBJECT) && --depth === 0) return undefined;
      continue;
    }
    if (depth >= level && inCommand > perCommand) {
      const which = level === 2 ? `command ${commas}` : 'the command';
      return `${which} has more than ${perCommand} elements (its name and arguments); the limit for this token is ${perCommand}`;
    }
    if (++total > maxTotal) return `more than ${maxTotal} elements in one request (its commands and their arguments); the limit for this token is ${maxTotal}`;
  }
  return undefined;
}
