// setGroup / readGroup: one group's (lane's) settings, changed with the library's own verbs
// (EchoMQ.Lanes @glimit, @gweight, @gpause, @gresume) in one atomic script, and read back.
import type { Connection, Reply } from './connection.js';
import { runScript } from './dispatch.js';
import { InvalidArgumentError, ProtocolError, fromReply, replyText, shownReply } from './errors.js';
import { groupKeys } from './keyspace.js';
import { groupReadScript, groupSetScript } from './scripts.js';

/** One group as the wire holds it. */
export interface GroupView {
  group: string;
  /** Jobs waiting in its lane, emq:{q}:g:<group>:pending. */
  pending: number;
  /** Its jobs claimed now (gactive's field; 0 when unset). */
  active: number;
  /** Its concurrency ceiling, when one is set. */
  limit?: number;
  /** Its fair-share weight, when one is set (only the library's weighted claim reads it). */
  weight?: number;
  paused: boolean;
  /** On the ring: the library's lane claim serves only groups on it. */
  ringed: boolean;
}

export interface GroupChange {
  limit?: number;
  weight?: number;
  paused?: boolean;
}

/** The most a limit or weight may be (the library takes any positive integer; Lua compares them as doubles). */
export const GROUP_SETTING_MAX = 2 ** 31 - 1;

function setting(name: 'limit' | 'weight', value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > GROUP_SETTING_MAX) {
    throw new InvalidArgumentError(`${name} must be an integer from 1 to ${GROUP_SETTING_MAX}`);
  }
  return String(value);
}

/**
 * Changes a group's limit, weight and pause in one atomic script, each with the library's own
 * writes (in the order weight, pause, limit, resume), and answers the group afterwards. A
 * limit or weight is an integer from 1 to 2^31 - 1; no call removes one (nor does the library).
 */
export async function setGroup(connection: Connection, queue: string, group: string, change: GroupChange): Promise<GroupView> {
  const keys = groupKeys(queue, group); // checks the queue and the group
  if (change === null || typeof change !== 'object') throw new InvalidArgumentError('the change must be an object of limit, weight and paused');
  const unknown = Object.keys(change).filter((k) => k !== 'limit' && k !== 'weight' && k !== 'paused');
  if (unknown.length > 0) throw new InvalidArgumentError(`a group has no setting ${JSON.stringify(unknown[0]!.slice(0, 40))}: only limit, weight and paused`);
  const limit = setting('limit', change.limit);
  const weight = setting('weight', change.weight);
  if (change.paused !== undefined && typeof change.paused !== 'boolean') throw new InvalidArgumentError('paused must be true or false');
  const pause = change.paused === undefined ? '' : change.paused ? 'pause' : 'resume';
  if (limit === '' && weight === '' && pause === '') throw new InvalidArgumentError('nothing to change: give a limit, a weight or paused');
  const outcome = await runScript(connection, groupSetScript, keys, [group, limit, weight, pause]);
  if (!outcome.ok) throw fromReply(outcome.error);
  return groupViewOf(outcome.value, '@group-set');
}

/** A group as the wire holds it (all zeros, unpaused and off the ring when nothing names it). */
export async function readGroup(connection: Connection, queue: string, group: string): Promise<GroupView> {
  const keys = groupKeys(queue, group).slice(0, 6); // checks the queue and the group
  const outcome = await runScript(connection, groupReadScript, keys, [group]);
  if (!outcome.ok) throw fromReply(outcome.error);
  return groupViewOf(outcome.value, '@group-read');
}

const count = (v: Reply | undefined) => (typeof v === 'number' || typeof v === 'bigint' ? Number(v) : Number.NaN);
/** A stored field: '' is unset; else the number the library would read (tonumber). */
const field = (v: Reply | undefined) => {
  const t = replyText(v);
  return t === '' ? undefined : t === undefined ? Number.NaN : Number(t);
};

/** A script's { group, pending, active, limit, weight, paused, ringed } as a GroupView, or ProtocolError. */
export function groupViewOf(reply: Reply, script: string): GroupView {
  const parts = Array.isArray(reply) && reply.length === 7 ? reply : [];
  const [group, pending, active, limit, weight, paused, ringed] = [
    replyText(parts[0]),
    count(parts[1]),
    count(parts[2]),
    field(parts[3]),
    field(parts[4]),
    count(parts[5]),
    count(parts[6]),
  ];
  const stored = (n: number | undefined) => n === undefined || Number.isFinite(n);
  const flag = (n: number) => n === 0 || n === 1;
  if (group === undefined || ![pending, active].every(Number.isSafeInteger) || !stored(limit) || !stored(weight) || !flag(paused) || !flag(ringed)) {
    throw new ProtocolError(`${script} replied ${shownReply(reply)}; expected a group's view`);
  }
  return {
    group,
    pending,
    active,
    ...(limit === undefined ? {} : { limit }),
    ...(weight === undefined ? {} : { weight }),
    paused: paused === 1,
    ringed: ringed === 1,
  };
}
