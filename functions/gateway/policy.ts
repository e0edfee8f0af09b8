// What each scope may run. A producer may PING, run this project's scripts, by SHA-1
// (EVALSHA) or by their exact text (EVAL), and the queue listing's SCAN (scan.ts), and nothing
// else; of the scripts, the control scripts
// (cancel, promote, lanes, pause: their headers say `Capability: control`) only with a
// control token, which may do all a producer token may. Nobody may run commands
// that block or change the state of the connection their scope's requests share.
import type { Arg } from '../../shared/connection.js';
import type { Script } from '../../shared/scripts.js';
import { CONTAINERS, commandName, nameOf } from './args.js';
import { SCAN_REFUSED, listingScan } from './scan.js';
import { mostElements } from './script-calls.js';
import type { Scope } from './tokens.js';

const SHARED_CONNECTION_BREAKERS = new Set([
  'BLPOP',
  'BRPOP',
  'BRPOPLPUSH',
  'BLMOVE',
  'BLMPOP',
  'BZPOPMIN',
  'BZPOPMAX',
  'BZMPOP',
  'WAIT',
  'WAITAOF',
  'SUBSCRIBE',
  'PSUBSCRIBE',
  'SSUBSCRIBE',
  'UNSUBSCRIBE',
  'PUNSUBSCRIBE',
  'SUNSUBSCRIBE',
  'MONITOR',
  'SYNC',
  'PSYNC',
  'SELECT',
  'AUTH',
  'HELLO',
  'QUIT',
  'RESET',
  'MULTI',
  'EXEC',
  'DISCARD',
  'WATCH',
  'UNWATCH',
  'CLIENT',
  'READONLY',
  'READWRITE',
  'SHUTDOWN',
]);

function sameText(arg: Arg | undefined, text: string): boolean {
  if (arg === undefined) return false;
  if (typeof arg === 'string') return arg === text;
  return arg.length === text.length && new TextDecoder().decode(arg) === text;
}

export interface Policy {
  /** Why `scope` may not run `args`: [status, message], or undefined when it may. */
  refusal(scope: Scope, args: readonly Arg[]): [400 | 403, string] | undefined;
}

export function createPolicy(scripts: readonly Script[], control: readonly Script[] = []): Policy {
  // each script's most elements (script-calls.ts): a call with more is refused before it is sent
  const most = new Map(scripts.map((s) => [s, mostElements(s)]));
  const shas = new Map(scripts.map((s) => [s.sha1, s]));
  const controls = new Set(control);
  const noControl = (scope: Scope, script: Script): [403, string] | undefined =>
    scope === 'producer' && controls.has(script)
      ? [403, `a producer token may not run lua/${script.name}.lua, a control script: the producer needs a control token`]
      : undefined;
  let found: string | undefined;
  let foundScript: Script | undefined;
  const tooMany = (args: readonly Arg[], script: Script): [400, string] | undefined => {
    const cap = most.get(script)!;
    if (args.length <= cap) return undefined;
    return [400, `ERR a call of lua/${script.name}.lua has at most ${cap} elements (its name and arguments); this one has ${args.length}`];
  };
  return {
    refusal(scope, args) {
      const name = commandName(args);
      // names are ASCII, compared as ASCII: no Unicode case mapping can alias a command
      if (name === '') return [400, 'ERR a command name is 1 to 64 ASCII letters, digits or _ . | -'];
      if (CONTAINERS.has(name) && args.length > 1 && nameOf(args[1]) === '') {
        return [400, `ERR a ${name} subcommand is 1 to 64 ASCII letters, digits or _ . | -`];
      }
      // XREAD and XREADGROUP block only when asked to (BLOCK <ms>)
      const blocks = (name === 'XREAD' || name === 'XREADGROUP') && args.slice(1).some((a) => commandName([a]) === 'BLOCK');
      if (SHARED_CONNECTION_BREAKERS.has(name) || blocks) {
        return [400, `ERR ${name} is not available over REST: it would block or change the connection all requests share`];
      }
      if (scope === 'admin') return undefined;
      // a producer's PING is a liveness check: its message would only be echoed back
      if (name === 'PING') return args.length === 1 ? undefined : [400, "ERR a producer token's PING takes no arguments"];
      if (name === 'EVALSHA') {
        const sha = args[1];
        // the producer's requests name the same few scripts over and over: the last one found is kept
        if (typeof sha === 'string' && sha === found) return noControl(scope, foundScript!) ?? tooMany(args, foundScript!);
        const hex = (typeof sha === 'string' ? sha : sha === undefined ? '' : new TextDecoder().decode(sha)).toLowerCase();
        const script = shas.get(hex);
        if (script === undefined) return [403, "a producer token may run EVALSHA only of this project's scripts"];
        if (typeof sha === 'string') [found, foundScript] = [sha, script];
        return noControl(scope, script) ?? tooMany(args, script);
      }
      if (name === 'EVAL') {
        const script = scripts.find((s) => sameText(args[1], s.text));
        if (script) return noControl(scope, script) ?? tooMany(args, script);
        return [403, "a producer token may run EVAL only of this project's scripts, byte for byte"];
      }
      if (name === 'SCAN') return listingScan(args) ? undefined : [403, SCAN_REFUSED];
      return [403, `a producer token may not run ${name}: only PING, EVALSHA or EVAL of this project's scripts, and the queue listing's SCAN`];
    },
  };
}
