// Default lanes, from EMQ_QUEUE_GROUPS: {"<queue>" | "<prefix>*" | "*": "<branded group id>"}.
// A job for a matching queue that names no Emq-Group joins that group's lane; the queue's
// exact entry wins, else its longest matching prefix (`*` is the empty prefix). No match:
// admission stays flat. Checked at start: a pattern that is not a queue or a prefix, or a
// group that is not a branded id, stops the producer.
import { jsonObject, type Vars } from '../../shared/config/parse.js';
import { validateGroup, validateQueue } from '../../shared/index.js';

/** The default group of a queue, or undefined (flat admission). */
export type QueueGroups = (queue: string) => string | undefined;

export function parseQueueGroups(vars: Vars): QueueGroups {
  const exact = new Map<string, string>();
  const prefixes: Array<[prefix: string, group: string]> = [];
  for (const [pattern, group] of Object.entries(jsonObject(vars, 'EMQ_QUEUE_GROUPS'))) {
    const stem = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
    try {
      if (stem !== '' || stem === pattern) validateQueue(stem);
    } catch (err) {
      throw new Error(`EMQ_QUEUE_GROUPS: "${pattern}" is not a queue, a prefix ending in *, or *: ${(err as Error).message}`);
    }
    try {
      validateGroup(group);
    } catch {
      throw new Error(`EMQ_QUEUE_GROUPS["${pattern}"] is not a branded id (e.g. PRT0KHTOWnGLuC)`);
    }
    if (stem === pattern) exact.set(pattern, group as string);
    else prefixes.push([stem, group as string]);
  }
  prefixes.sort((a, b) => b[0].length - a[0].length); // the longest prefix wins
  return (queue) => exact.get(queue) ?? prefixes.find(([p]) => queue.startsWith(p))?.[1];
}
