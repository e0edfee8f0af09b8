// The one SCAN a producer or control token may send: the queue listing's own step,
// `SCAN <cursor> MATCH <QUEUE_SCAN_MATCH> COUNT <1-5000>` (shared/queue-list.ts), and nothing
// else: another pattern could read any key's name, an unbounded COUNT would stall the server.
// On a cluster the gateway walks every primary for it (shared/connections/glide-scan.ts), as
// a REST client cannot route a command to a node.
import type { Arg } from '../../shared/connection.js';
import { QUEUE_SCAN_COUNT_MAX, QUEUE_SCAN_MATCH, parseScanCursor } from '../../shared/queue-list.js';
import { nameOf } from './args.js';

const text = (arg: Arg | undefined) => (arg === undefined ? '' : typeof arg === 'string' ? arg : String.fromCharCode(...arg.subarray(0, 200)));

/** The listing's step as [cursor, match, count], or undefined when `args` is any other SCAN. */
export function listingScan(args: readonly Arg[]): [cursor: string, match: string, count: number] | undefined {
  if (args.length !== 6 || nameOf(args[2]) !== 'MATCH' || nameOf(args[4]) !== 'COUNT') return undefined;
  const [cursor, match, count] = [text(args[1]), text(args[3]), text(args[5])];
  if (match !== QUEUE_SCAN_MATCH || parseScanCursor(cursor) === undefined) return undefined;
  const n = /^[1-9][0-9]{0,3}$/.test(count) ? Number(count) : 0;
  return n >= 1 && n <= QUEUE_SCAN_COUNT_MAX ? [cursor, match, n] : undefined;
}

export const SCAN_REFUSED = `a producer token may run SCAN only as the queue listing sends it: SCAN <cursor> MATCH ${QUEUE_SCAN_MATCH} COUNT <1-${QUEUE_SCAN_COUNT_MAX}>`;
