// Binary-safe JSON commands: with `Emq-Arg-Encoding: base64` on a request to /, /pipeline or
// /multi-exec, every argument is the standard base64 of its bytes. JSON carries text only, so
// without it a producer must send each payload that is not UTF-8 alone, path-style: one
// request per job. With it a whole batch or flow of binary payloads is one request.
// Fail-safe by design: an endpoint that does not know the header (Upstash) reads the base64
// command names (ZXZhbHNoYQ== for evalsha) as unknown commands and writes nothing; our answer
// echoes the header, so the client learns which endpoint it has.
import type { Arg } from '../../shared/connection.js';
import { isBase64 } from '../../shared/base64.js';
import { BadCommand } from './args.js';

export const ARG_ENCODING = 'emq-arg-encoding';
/** The answer's header saying the arguments were read as base64. */
export const DECODED = { 'Emq-Arg-Encoding': 'base64' } as const;

/** Whether the request asks for base64 arguments (ASCII, any case); any other value is refused. */
export function wantsBase64(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value === 'string' && value.length === 6 && value.toLowerCase() === 'base64') return true;
  throw new BadCommand('Emq-Arg-Encoding must be base64 when given');
}

/** One argument's bytes: ASCII as text (names, keys, ids: what the policy and observer compare), else bytes. */
function decodeArg(arg: Arg, where: string): Arg {
  if (typeof arg !== 'string' || !isBase64(arg)) throw new BadCommand(`${where} is not standard padded base64 (Emq-Arg-Encoding: base64)`);
  const bytes = Buffer.from(arg, 'base64');
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! > 0x7f) return bytes;
  return bytes.toString('latin1');
}

/** Every argument of every command, decoded in place; a bad one is a 400 naming it. */
export function decodeCommands(commands: Arg[][]): Arg[][] {
  for (let c = 0; c < commands.length; c++) {
    const args = commands[c]!;
    for (let i = 0; i < args.length; i++) args[i] = decodeArg(args[i]!, `command ${c} argument ${i}`);
  }
  return commands;
}
