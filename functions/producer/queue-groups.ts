// Default lanes, from EMQ_QUEUE_GROUPS: {"<queue>" | "<stem>.*" | "<prefix>*" | "*": "<branded group id>"}.
// A job for a matching queue that names no Emq-Group joins that group's lane; the queue's
// exact entry wins, else its longest matching pattern (queue-patterns.ts: `a.*` is one segment
// under a; a raw prefix and `*` are fine here, as routing is no authorization). No match:
// admission stays flat. Checked at start: a bad pattern, or a group that is not a branded id,
// stops the producer.
import { jsonObject, type Vars } from '../../shared/config/parse.js';
import { validateGroup } from '../../shared/index.js';
import { queueLookup } from './queue-patterns.js';

/** The default group of a queue, or undefined (flat admission). */
export type QueueGroups = (queue: string) => string | undefined;

export function parseQueueGroups(vars: Vars): QueueGroups {
  const entries = Object.entries(jsonObject(vars, 'EMQ_QUEUE_GROUPS'));
  const groupOf = queueLookup(entries as Array<[string, string]>, { rawPrefixes: true }, (pattern) => `EMQ_QUEUE_GROUPS: "${pattern}"`);
  for (const [pattern, group] of entries) {
    try {
      validateGroup(group);
    } catch {
      throw new Error(`EMQ_QUEUE_GROUPS["${pattern}"] is not a branded id (e.g. PRT0KHTOWnGLuC)`);
    }
  }
  return groupOf;
}
