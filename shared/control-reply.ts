// The replies of the control scripts (lua/job-remove.lua, job-promote.lua, job-reschedule.lua):
// an array whose first element is a flag, 1 done, 0 refused (nothing written) with a reason,
// 2 send again with the keys the row names (nothing written), read strictly.
import { ProtocolError, replyText } from './errors.js';

/**
 * The script's reply as its flag and the texts after it; throws ProtocolError naming the
 * script unless it is an array that opens with 0, 1 or 2. Shared by the control scripts.
 */
export function flagged(name: string, value: unknown): [flag: number, rest: Array<string | undefined>] {
  const flag = Array.isArray(value) ? Number(value[0]) : Number.NaN;
  if (!Array.isArray(value) || ![0, 1, 2].includes(flag)) {
    const shown = JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v instanceof Uint8Array ? replyText(v) : v));
    throw new ProtocolError(`@${name} replied ${shown?.slice(0, 200)}; expected [0|1|2, ...]`);
  }
  return [flag, value.slice(1).map((v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? String(v) : replyText(v)))];
}

/** One of `allowed`, else ProtocolError naming the script. */
export function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T {
  if (!(allowed as readonly (string | undefined)[]).includes(value))
    throw new ProtocolError(`@${name} replied ${JSON.stringify(value)}; expected one of ${allowed.join(', ')}`);
  return value as T;
}

/** How many times a call is sent again with the keys its row names (moved by a lane reassignment in between: rare). */
export const KEY_ROUNDS = 3;
