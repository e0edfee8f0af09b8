// Emq-Wait: a producer's or control token's request asks the gateway to WAIT, after its script
// calls' writes, until that many replicas have them, on the node that took each (in a cluster,
// each written slot's primary), on the same connection the writes went on: the caller never
// sends WAIT itself (the policy refuses it: it blocks the shared connection), and how long it
// may block is the gateway's to cap (EMQ_GATEWAY_WAIT_MAX_MS). The answer says how many
// replicas confirmed, the fewest over the nodes written: Emq-Wait-Replicas.
import type { IncomingMessage } from 'node:http';
import type { Arg, Outcome, WaitFor } from '../../shared/connection.js';
import { BadCommand, commandName } from './args.js';

/** The most replicas one request may ask for. */
export const WAIT_MAX_REPLICAS = 16;

/** The request's Emq-Wait (1 to 16) and Emq-Wait-Timeout-Ms (1 up, capped at `capMs`; absent: the cap), or undefined when not asked; a malformed one is BadCommand (400). */
export function waitOf(req: IncomingMessage, capMs: number): WaitFor | undefined {
  const replicas = req.headers['emq-wait'];
  if (replicas === undefined) return undefined;
  if (typeof replicas !== 'string' || !/^[0-9]{1,2}$/.test(replicas) || Number(replicas) < 1 || Number(replicas) > WAIT_MAX_REPLICAS) {
    throw new BadCommand(`Emq-Wait is a whole number of replicas from 1 to ${WAIT_MAX_REPLICAS}`);
  }
  const given = req.headers['emq-wait-timeout-ms'];
  if (given !== undefined && (typeof given !== 'string' || !/^[1-9][0-9]{0,8}$/.test(given))) {
    throw new BadCommand('Emq-Wait-Timeout-Ms is a whole number of ms from 1');
  }
  return { replicas: Number(replicas), timeoutMs: given === undefined ? capMs : Math.min(Number(given), capMs) };
}

const latin1 = new TextDecoder('latin1');
const textOf = (arg: Arg) => (typeof arg === 'string' ? arg : latin1.decode(arg));

/** The first key of each script call (EVAL/EVALSHA with keys) whose outcome is ok: the slots a WAIT must cover. */
export function writtenKeys(commands: ReadonlyArray<readonly Arg[]>, outcomes: readonly Outcome[]): string[] {
  const keys: string[] = [];
  commands.forEach((args, i) => {
    const name = commandName(args);
    if ((name !== 'EVAL' && name !== 'EVALSHA') || !outcomes[i]?.ok || args[2] === undefined || args[3] === undefined) return;
    if (Number(textOf(args[2])) > 0) keys.push(textOf(args[3]));
  });
  return keys;
}
