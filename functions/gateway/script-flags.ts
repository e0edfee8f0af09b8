// Scripts whose `#!lua flags=…` shebang carries flags the server does not know, made to run.
// Upstash's own clients (@upstash/ratelimit from 2.1.0) start every script with
// `#!lua flags=allow-key-locking`, Upstash's flag; Valkey and Redis refuse the whole script
// (`ERR Unexpected flag in script shebang`). The gateway drops the flags the server does not
// know from the shebang line of EVAL, EVAL_RO and SCRIPT LOAD texts and keeps the rest of the
// text byte for byte (the shebang stays, so the server still runs it in its flags mode).
//
// The client keeps the SHA-1 of ITS text, and sends EVALSHA with it. The gateway maps each
// SHA-1 it rewrote (the client's) to the server's (of the text sent) for EVALSHA, EVALSHA_RO
// and SCRIPT EXISTS, answers SCRIPT LOAD with the client's, and puts the client's in place of
// the server's in error texts (Lua errors name the script's SHA-1). A SHA-1 not mapped (never
// seen, dropped from the map, or flushed) goes unchanged: the server has no script of the
// client's text, so it answers NOSCRIPT and the client sends the text again, which is mapped
// again. The server's SHA-1 derives from the text alone, so a mapping holds on every node of a
// cluster; a node that lost the script answers NOSCRIPT the same way.
//
// The map keeps at most MOST_MAPPED SHA-1s, the one used longest ago dropped first (near
// enough: serverOf); a client has a handful of scripts, and the bound keeps a stream of
// distinct texts from growing it. SCRIPT FLUSH through the gateway empties
// it. The work per request is bounded: the first line only (at most SHEBANG_MOST bytes) is
// parsed, as ASCII, and the SHA-1s cost what the server's own hashing of the text costs.
// A text without a leading `#!` (every script of this project's) costs one look at two chars.
import { createHash } from 'node:crypto';
import type { Arg, Outcome, Reply } from '../../shared/connection.js';
import { nameOf } from './args.js';

/** The script flags Valkey 8 and Redis 7 know (their script_flags tables). */
export const KNOWN_FLAGS: ReadonlySet<string> = new Set(['no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys']);

/** SHA-1s mapped at most; the one used longest ago goes first. */
export const MOST_MAPPED = 1_000;

/** The longest shebang line parsed; a longer one goes unchanged (the server judges it). */
export const SHEBANG_MOST = 1_024;

const HASH = 0x23;
const BANG = 0x21;
const NEWLINE = 0x0a;

const startsWithShebang = (text: Arg): boolean =>
  typeof text === 'string' ? text.charCodeAt(0) === HASH && text.charCodeAt(1) === BANG : text[0] === HASH && text[1] === BANG;

/** The first line (without its newline) as ASCII text, or undefined when it is too long, has no newline or is not printable ASCII. */
function firstLine(text: Arg): string | undefined {
  const end = typeof text === 'string' ? text.slice(0, SHEBANG_MOST + 1).indexOf('\n') : text.subarray(0, SHEBANG_MOST + 1).indexOf(NEWLINE);
  if (end < 0) return undefined;
  const line = typeof text === 'string' ? text.slice(0, end) : String.fromCharCode(...text.subarray(0, end));
  return PRINTABLE.test(line) ? line : undefined;
}

// printable ASCII and the blanks the server splits words on: any other byte, and the server judges the line
const PRINTABLE = /^[\t\v\f\r\x20-\x7e]*$/;

/**
 * The shebang line without the flags the server does not know, or undefined when the line is to
 * go as it is: all its flags known, or not in the plain form `#!lua flags=a,b …` (quotes, other
 * options, an empty flag, a known flag in another case: the server's own error answers those,
 * and dropping `NO-WRITES` would drop a promise the client asked for).
 */
export function shebangWithoutUnknown(line: string): string | undefined {
  if (/["'\\]/.test(line)) return undefined;
  const words = line.split(/[ \t\r\v\f]+/).filter((w) => w !== '');
  if (words[0] !== '#!lua') return undefined;
  const kept: string[] = [];
  let dropped = 0;
  for (const word of words.slice(1)) {
    if (!word.startsWith('flags=')) return undefined;
    if (word.length === 6) continue; // `flags=` alone: no flags, as the server reads it
    for (const flag of word.slice(6).split(',')) {
      if (KNOWN_FLAGS.has(flag)) kept.push(flag);
      else if (flag === '' || KNOWN_FLAGS.has(flag.toLowerCase())) return undefined;
      else dropped++;
    }
  }
  if (dropped === 0) return undefined;
  return kept.length === 0 ? '#!lua' : `#!lua flags=${kept.join(',')}`;
}

/** The script text without the flags the server does not know, or undefined when it goes unchanged. */
export function withoutUnknownFlags(text: Arg): Arg | undefined {
  if (!startsWithShebang(text)) return undefined;
  const line = firstLine(text);
  const shebang = line === undefined ? undefined : shebangWithoutUnknown(line);
  if (shebang === undefined) return undefined;
  // the rest from the newline on, byte for byte (line.length: the line is ASCII, one unit a byte)
  if (typeof text === 'string') return shebang + text.slice(line!.length);
  return Buffer.concat([Buffer.from(shebang, 'latin1'), text.subarray(line!.length)]);
}

const sha1 = (text: Arg): string => createHash('sha1').update(text).digest('hex');
const textOf = (arg: Arg): string => (typeof arg === 'string' ? arg : Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength).toString('latin1'));

/** [the server's SHA-1, the client's, whether the reply is a SHA-1 (SCRIPT LOAD's) or only errors may name it]. */
type Swap = [server: string, client: string, reply: boolean];

/** A reply with the server's SHA-1 put back as the client's, in the form it came (text or bytes). */
function swapped(reply: Reply, server: string, client: string): Reply {
  if (Array.isArray(reply)) return reply.map((r) => swapped(r, server, client));
  if (typeof reply === 'string') return reply === server ? client : reply;
  if (reply instanceof Uint8Array && reply.length === 40 && textOf(reply) === server) return Buffer.from(client, 'latin1');
  return reply;
}

/** Commands as sent, and how to give their outcomes back in the client's SHA-1s. */
export interface Rewritten {
  commands: Arg[][];
  outcomes<T extends Outcome[] | Outcome>(outcomes: T): T;
}

export class ScriptFlags {
  /** The client's SHA-1 → the server's and when it was (re)inserted (a count of insertions), oldest first. */
  private readonly shas = new Map<string, { server: string; at: number }>();
  private inserted = 0;

  constructor(private readonly most = MOST_MAPPED) {}

  get size(): number {
    return this.shas.size;
  }

  /**
   * The commands to send, or undefined when every one goes as it is. In order, so a
   * SCRIPT FLUSH forgets what the commands before it taught and the ones after it see that.
   */
  rewrite(commands: ReadonlyArray<readonly Arg[]>): Rewritten | undefined {
    let sent: Arg[][] | undefined;
    // the command's index → its Swap, for the outcomes
    let swaps: Map<number, Swap> | undefined;
    for (let i = 0; i < commands.length; i++) {
      const done = this.one(commands[i]!);
      if (done === undefined) continue;
      sent ??= commands.map((c) => c as Arg[]);
      sent[i] = done.args;
      if (done.swap) (swaps ??= new Map()).set(i, done.swap);
    }
    if (sent === undefined) return undefined;
    const bySha = swaps;
    return { commands: sent, outcomes: <T extends Outcome[] | Outcome>(o: T) => (bySha ? (answered(o, bySha) as T) : o) };
  }

  /** One command as sent, with the SHA-1s to swap in its outcome; undefined when it goes as it is. */
  private one(args: readonly Arg[]): { args: Arg[]; swap?: Swap | undefined } | undefined {
    const name = nameOf(args[0]);
    if (name === 'EVAL' || name === 'EVAL_RO') return this.text(args, 1, false);
    if (name === 'EVALSHA' || name === 'EVALSHA_RO') {
      const server = this.shas.size === 0 || args[1] === undefined ? undefined : this.serverOf(args[1]);
      return server && { args: [args[0]!, server[0], ...args.slice(2)], swap: [...server, false] };
    }
    if (name !== 'SCRIPT') return undefined;
    const sub = nameOf(args[1]);
    if (sub === 'LOAD') return this.text(args, 2, true);
    if (sub === 'FLUSH') this.shas.clear();
    if (sub !== 'EXISTS' || this.shas.size === 0) return undefined;
    let mapped = false;
    const sent = args.map((a, i) => {
      const server = i < 2 ? undefined : this.serverOf(a);
      if (server) mapped = true;
      return server ? server[0] : a;
    });
    return mapped ? { args: sent } : undefined;
  }

  /** A command carrying a script text at `at`, its text rewritten (and its SHA-1s learned), or undefined. */
  private text(args: readonly Arg[], at: number, reply: boolean): { args: Arg[]; swap: Swap } | undefined {
    const text = args[at];
    const rewritten = text === undefined ? undefined : withoutUnknownFlags(text);
    if (rewritten === undefined) return undefined;
    const client = sha1(text!);
    const server = sha1(rewritten);
    this.learn(client, server);
    const sent = args.slice();
    sent[at] = rewritten;
    return { args: sent, swap: [server, client, reply] };
  }

  private learn(client: string, server: string): void {
    this.shas.delete(client);
    this.shas.set(client, { server, at: ++this.inserted });
    if (this.shas.size > this.most) this.shas.delete(this.shas.keys().next().value!);
  }

  /**
   * [server SHA-1, client SHA-1] for a mapped client SHA-1 (any case). A mapping used is moved
   * to the newest end only once it is in the older half: a delete and set on a Map of 1,000
   * costs ~2.8 µs (V8 compacts it), a get ~0.1 µs; a mapping used within the last most/2
   * insertions is never the one dropped, which is LRU as far as a handful of scripts can tell.
   */
  private serverOf(arg: Arg): [string, string] | undefined {
    if (arg.length !== 40) return undefined;
    const client = textOf(arg).toLowerCase();
    const found = this.shas.get(client);
    if (found === undefined) return undefined;
    if (this.inserted - found.at > this.most / 2) this.learn(client, found.server);
    return [found.server, client];
  }
}

function answeredOne(outcome: Outcome, [server, client, reply]: Swap): Outcome {
  if (!outcome.ok) return outcome.error.includes(server) ? { ok: false, error: outcome.error.replaceAll(server, client) } : outcome;
  return reply ? { ok: true, value: swapped(outcome.value, server, client) } : outcome;
}

/** The outcomes with the client's SHA-1s; a transaction the server aborted is one outcome. */
function answered(outcomes: Outcome[] | Outcome, swaps: Map<number, Swap>): Outcome[] | Outcome {
  if (!Array.isArray(outcomes)) {
    let one = outcomes as Outcome;
    for (const swap of swaps.values()) one = answeredOne(one, swap);
    return one;
  }
  return outcomes.map((o, i) => {
    const swap = swaps.get(i);
    return swap ? answeredOne(o, swap) : o;
  });
}
