// Which refusal a call of a project script meets: the script's own gate, or, over REST, the
// gateway's cap on a call larger than any honest one (functions/gateway/script-calls.ts),
// which refuses it before it reaches the script. Either way nothing is written.
import { mostElements } from '../../functions/gateway/script-calls.js';
import type { Script } from '../../shared/scripts.js';

export function refusalOf(target: { name: string }, script: Script, keys: readonly unknown[], args: readonly unknown[], why: RegExp): RegExp {
  const over = 3 + keys.length + args.length > mostElements(script);
  return target.name.startsWith('rest') && over ? new RegExp(`^ERR a call of lua/${script.name}\\.lua has at most \\d+ elements`) : why;
}
