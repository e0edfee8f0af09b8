// Requests to commands: Upstash's JSON arrays and path-style URLs, into argument lists.
import type { Arg } from '../../shared/connection.js';

/** The request names no valid command: a 400 with this message. */
export class BadCommand extends Error {}

/**
 * One JSON command: a non-empty array of strings, numbers, booleans and nulls. A boolean or a
 * null is sent as its JSON text (true, false, null), as Upstash does: @upstash/redis sends
 * `hset(key, { f: false })` so, and reads "false" back as false. Arrays and objects are refused.
 */
export function jsonCommand(value: unknown, where = 'the body'): Arg[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadCommand(`${where} must be a non-empty JSON array like ["SET","key","value"]`);
  }
  return value.map((v, i) => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    if (typeof v === 'boolean' || v === null) return String(v);
    throw new BadCommand(`${where}[${i}] is ${Array.isArray(v) ? 'an array' : typeof v}; arguments are strings, numbers, booleans or null`);
  });
}

/** A pipeline or transaction: a non-empty array of JSON commands, at most `max`. */
export function jsonCommands(value: unknown, max: number): Arg[][] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadCommand('the body must be a non-empty JSON array of commands like [["SET","k","v"],["GET","k"]]');
  }
  if (value.length > max) throw new BadCommand(`${value.length} commands in one request; the limit is ${max}`);
  return value.map((c, i) => jsonCommand(c, `command ${i}`));
}

const HEX = /^[0-9a-fA-F]{2}$/;

const utf8 = new TextEncoder();

/** Percent-decodes to bytes, so %FF stays the byte 0xFF (decodeURIComponent would refuse it). */
function segmentBytes(segment: string): Arg {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment); // valid UTF-8: the same bytes, as text
  } catch {
    // bytes that are not UTF-8, or a bad escape: decode byte by byte below
  }
  const out: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '%') {
      const hex = segment.slice(i + 1, i + 3);
      if (!HEX.test(hex)) throw new BadCommand(`bad percent-escape "%${hex}" in the path`);
      out.push(parseInt(hex, 16));
      i += 2;
    } else out.push(...utf8.encode(c));
  }
  return Uint8Array.from(out);
}

/**
 * `/set/foo/bar` → SET foo bar; a POST body, when there is one, is the last argument, raw.
 * More than `max` elements (name and arguments) is refused before the one past it is decoded.
 */
export function pathCommand(path: string, body: Uint8Array | undefined, max = Number.POSITIVE_INFINITY): Arg[] {
  const args: Arg[] = [];
  const segments = body !== undefined && body.length > 0 ? max - 1 : max;
  // the non-empty segments between slashes, in one pass (no array of every segment to filter)
  for (let from = 0; from <= path.length; ) {
    let to = path.indexOf('/', from);
    if (to < 0) to = path.length;
    if (to > from) {
      if (args.length >= segments)
        throw new BadCommand(`the command has more than ${max} elements (its name and arguments); the limit for this token is ${max}`);
      args.push(segmentBytes(path.slice(from, to)));
    }
    from = to + 1;
  }
  if (body !== undefined && body.length > 0) args.push(body);
  if (args.length === 0) throw new BadCommand('no command in the path');
  return args;
}

/** What a command or subcommand name may hold: ASCII only, so no case mapping can alias one. */
const NAME = /^[A-Za-z][A-Za-z0-9_.|-]{0,63}$/;

/**
 * An argument as an ASCII name, upper-cased, for checks (never sent rewritten); '' when it is
 * not one (bytes, non-ASCII, punctuation), which matches no name a policy knows.
 */
export function nameOf(arg: Arg | undefined): string {
  if (arg === undefined) return '';
  if (typeof arg !== 'string') return nameOfText(String.fromCharCode(...arg.subarray(0, 65)));
  // the producer's every request is an EVALSHA, named by the policy, its observer and its reply
  if (arg !== lastText) {
    lastName = nameOfText(arg);
    lastText = arg;
  }
  return lastName;
}

let lastText = '';
let lastName = '';

// a NAME is ASCII only, so toUpperCase maps a-z alone (on other text it would map dotless ı to
// I, ß to SS...)
const nameOfText = (text: string): string => (NAME.test(text) ? text.toUpperCase() : '');

/** The command's name, ASCII upper-cased; '' when it is not an ASCII name. */
export function commandName(args: readonly Arg[]): string {
  return nameOf(args[0]);
}

/**
 * Commands whose second argument names a subcommand (CONFIG GET, XINFO STREAM). The policy
 * checks that name: Valkey echoes an unknown subcommand in its error reply, and an error reply
 * that is not UTF-8 makes glide drop the connection the scope's requests share, so it must be
 * an ASCII name too. glide names these commands with their subcommand when it retypes a reply.
 */
export const CONTAINERS = new Set([
  'ACL',
  'CLIENT',
  'CLUSTER',
  'COMMAND',
  'CONFIG',
  'DEBUG',
  'FUNCTION',
  'LATENCY',
  'MEMORY',
  'MODULE',
  'OBJECT',
  'PUBSUB',
  'SCRIPT',
  'SLOWLOG',
  'XGROUP',
  'XINFO',
]);
