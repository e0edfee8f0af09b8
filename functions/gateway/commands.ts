// The server's command table, so an unknown command is refused before it is sent. Valkey
// echoes an unknown command's name and first arguments (cut at 128 bytes, which can split a
// UTF-8 character) in its error reply, and glide drops the connection on an error reply that
// is not UTF-8: every request in flight on it would fail.
//
// Learned with COMMAND LIST (Valkey 7+, Redis 7+) once per connection. A name it lacks reads
// the table again first when the last read is over REFRESH_MS old, so a module loaded since,
// or a server upgraded behind one of glide's silent reconnects, is seen; an admin repeating
// unknown commands costs at most one COMMAND LIST per REFRESH_MS.
import type { Outcome, Reply } from '../../shared/connection.js';
import { BadCommand, nameOf } from './args.js';

export const REFRESH_MS = 5_000;

/** Every name in the reply, ASCII upper-cased (subcommands as CONFIG|GET; a cluster's per-node replies flattened). */
function namesOf(reply: Reply, into: Set<string>): Set<string> {
  if (Array.isArray(reply)) for (const r of reply) namesOf(r, into);
  else if (typeof reply === 'string' || reply instanceof Uint8Array) {
    const name = nameOf(reply);
    if (name !== '') into.add(name);
  }
  return into;
}

export class CommandTable {
  private names: Set<string> | undefined;
  private readAt = -Infinity;
  private reading: Promise<Set<string>> | undefined;

  constructor(
    /** COMMAND LIST on the connection this table belongs to. */
    private readonly list: () => Promise<Outcome>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The first name the server does not know, or undefined; names are nameOf()'s (ASCII, upper-cased). */
  async unknown(names: readonly string[]): Promise<string | undefined> {
    const known = this.names ?? (await this.read());
    const missing = names.find((n) => !known.has(n));
    if (missing === undefined || this.now() - this.readAt < REFRESH_MS) return missing;
    const again = await this.read();
    return names.find((n) => !again.has(n));
  }

  private read(): Promise<Set<string>> {
    this.reading ??= (async () => {
      const sentAt = this.now();
      try {
        const outcome = await this.list();
        // the gateway's Valkey user may not run COMMAND: then it cannot tell, and sends nothing
        if (!outcome.ok) {
          console.error(`gateway: COMMAND LIST answered an error (${/^\S*/.exec(outcome.error)![0]}): admin commands are refused until it answers`);
          throw new BadCommand("the gateway cannot read the server's command table (COMMAND LIST was refused), so it sends no admin command");
        }
        this.names = namesOf(outcome.value, new Set());
        this.readAt = sentAt;
        return this.names;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}
