// How large a producer's honest calls are, so the gateway refuses a larger one before parsing
// or sending it. Each script's most keys and arguments, as its lua/*.lua header (its contract)
// lays them out; test/gateway-args.test.ts reads every header and checks this table against it.
import { MAX_PIPELINE_COMMANDS } from '../../shared/connections/rest.js';
import { FLOW_MAX_CHILDREN } from '../../shared/flow.js';
import type { Script } from '../../shared/scripts.js';

/** A script's most KEYS and ARGV. */
interface Layout {
  keys: number;
  args: number;
}

const LAYOUTS: Readonly<Record<string, Layout>> = {
  // KEYS row, pending; ARGV id, payload
  enqueue: { keys: 2, args: 2 },
  // KEYS row, pending, dedup; ARGV id, compare, ttl, payload
  'enqueue-once': { keys: 3, args: 4 },
  // KEYS row, lane, ring, paused, glimit, gactive, wake; ARGV id, group, payload
  genqueue: { keys: 7, args: 3 },
  // @genqueue's keys and the dedup key; ARGV id, compare, ttl, group, payload
  'genqueue-once': { keys: 8, args: 5 },
  // KEYS row, schedule; ARGV id, mode, value, [group,] payload
  schedule: { keys: 2, args: 5 },
  // KEYS row, schedule, dedup; ARGV id, compare, ttl, mode, value, [group,] payload
  'schedule-once': { keys: 3, args: 7 },
  // KEYS row, pending, :processed or outbox; ARGV child, parent, pqueue, policy, mode[, payload]
  'flow-child': { keys: 3, args: 6 },
  // KEYS row, :dependencies, :processed; ARGV parent, n, payload
  'flow-parent': { keys: 3, args: 3 },
  // KEYS row, :dependencies, pending, then a row per child; ARGV parent, size, then child,
  // policy, size per child, then the payloads
  flow: { keys: 3 + FLOW_MAX_CHILDREN, args: 3 * FLOW_MAX_CHILDREN + 3 },
  // KEYS row, pending, active, schedule, dead; ARGV id[, 'detail' | 'payload']
  'job-state': { keys: 5, args: 2 },
  // KEYS lane, ring, paused, glimit, gactive, gweight; ARGV group
  'group-read': { keys: 6, args: 1 },
  // KEYS meta, pending, active, schedule, dead, metrics:completed, metrics:failed, ring,
  // paused, glimit, gactive, gweight; ARGV cursor, count
  'queue-info': { keys: 12, args: 2 },
  // control (sent alone, never piped):
  // KEYS row, pending, active, schedule, dead, :logs, :lock, :dependencies, dedup, ring[, lane]
  // [, parent row, parent :dependencies]; ARGV id, dedupId, group, parent
  'job-remove': { keys: 13, args: 4 },
  // KEYS row, schedule, pending[, lane, ring, paused, glimit, gactive, wake]; ARGV id, group
  'job-promote': { keys: 9, args: 2 },
  // KEYS row, schedule; ARGV id, at | in, value
  'job-reschedule': { keys: 2, args: 3 },
  // KEYS meta; ARGV pause | resume
  'queue-pause': { keys: 1, args: 1 },
  // KEYS lane, ring, paused, glimit, gactive, gweight, wake; ARGV group, limit, weight, pause
  'group-set': { keys: 7, args: 4 },
  // the library's @repeat_register: KEYS registry, record; ARGV name, every_ms, template, first_at
  'repeat-register': { keys: 2, args: 4 },
  // the library's @repeat_cancel: KEYS registry, record; ARGV name
  'repeat-cancel': { keys: 2, args: 1 },
  // KEYS registry, record; ARGV name, verb, now
  'repeat-move': { keys: 2, args: 3 },
  // reads (piped: a page's records): KEYS registry, record; ARGV name, template (0 or 1)
  'repeat-read': { keys: 2, args: 2 },
  // KEYS registry; ARGV cursor, count
  'repeat-page': { keys: 1, args: 2 },
  // KEYS the set (pending, a lane, schedule or dead); ARGV cursor, limit
  'job-list': { keys: 1, args: 2 },
};

/**
 * The most calls in one honest producer pipeline: the REST connection sends no more in one
 * (a batch's jobs: the producer takes 1,000 items), and a cross-queue flow checks and lands
 * its FLOW_MAX_CHILDREN children in one each.
 */
export const PIPELINE_CALLS = Math.max(MAX_PIPELINE_COMMANDS, FLOW_MAX_CHILDREN);

/** The script's most KEYS and ARGV; a script this table lacks is a bug (thrown at start). */
export function layoutOf(script: Script): Layout {
  const layout = LAYOUTS[script.name];
  if (!layout) throw new Error(`gateway: no layout for the script ${script.name} in functions/gateway/script-calls.ts`);
  return layout;
}

/** A script call's most elements: EVALSHA (or EVAL), the SHA-1 (or text), the key count, then KEYS and ARGV. */
export const mostElements = (script: Script): number => 3 + layoutOf(script).keys + layoutOf(script).args;

/** Scripts no producer pipelines (besides the control scripts): one call a request. */
const SENT_ALONE = new Set(['flow', 'queue-info', 'group-read', 'repeat-page', 'job-list']);

export interface ProducerCaps {
  /** Most elements in one command: the largest script call's. */
  perCommand: number;
  /**
   * Most elements in one request, the commands' arrays counted too: one call of any script,
   * or PIPELINE_CALLS calls of the scripts a pipeline sends (every one but those always sent
   * alone: @flow, the reads of a queue and a group, and the control scripts).
   */
  total: number;
}

export function producerCaps(scripts: readonly Script[], control: readonly Script[] = []): ProducerCaps {
  const each = scripts.map(mostElements);
  const perCommand = Math.max(1, ...each);
  const piped = Math.max(1, ...scripts.filter((s) => !SENT_ALONE.has(s.name) && !control.includes(s)).map(mostElements));
  return { perCommand, total: Math.max(perCommand, PIPELINE_CALLS * (1 + piped)) };
}
