// Callers' tokens, from the EMQ_TOKENS secret: a JSON array of
//   { "token": "<at least 16 characters>", "queues": ["orders", "tenant-a.*", "*"] }
// where a queue pattern is an exact name, a prefix ending in `*`, or `*` for every queue.
// Tokens are compared in constant time (SHA-256 digests, every token compared) and never
// appear in errors or logs.

export interface Caller {
  /** Whether this caller may use the queue. */
  allows(queue: string): boolean;
  /** The token's SHA-256 in hex: scopes Idempotency-Keys to the caller without keeping the token. */
  scope: string;
}

export interface Tokens {
  /** The caller a presented token belongs to, or undefined. */
  callerOf(presented: string): Promise<Caller | undefined>;
}

interface Entry {
  digest: Uint8Array;
  caller: Caller;
}

const utf8 = new TextEncoder();
const sha256 = async (s: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', utf8.encode(s)));

function allowing(patterns: string[]): (queue: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith('*')));
  const prefixes = patterns.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  return (q) => exact.has(q) || prefixes.some((p) => q.startsWith(p));
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/** Parses EMQ_TOKENS; an error names the entry by position, never by its token. */
export function parseTokens(spec: string | undefined): Tokens {
  if (!spec) throw new Error('EMQ_TOKENS is not set: a JSON array of {"token": "...", "queues": ["..."]}');
  let list: unknown;
  try {
    list = JSON.parse(spec);
  } catch {
    throw new Error('EMQ_TOKENS is not valid JSON: expected an array of {"token": "...", "queues": ["..."]}');
  }
  if (!Array.isArray(list) || list.length === 0) throw new Error('EMQ_TOKENS must be a non-empty JSON array');
  const raw = list.map((item: unknown, i) => {
    const { token, queues } = (item ?? {}) as { token?: unknown; queues?: unknown };
    if (typeof token !== 'string' || token.length < 16) throw new Error(`EMQ_TOKENS[${i}].token must be a string of at least 16 characters`);
    if (!Array.isArray(queues) || queues.length === 0 || !queues.every((q) => typeof q === 'string' && q.length > 0)) {
      throw new Error(`EMQ_TOKENS[${i}].queues must be a non-empty array of queue names or prefixes ending in *`);
    }
    return { token, allows: allowing(queues as string[]) };
  });
  let entries: Promise<Entry[]> | undefined;
  return {
    async callerOf(presented) {
      // digests are made on first use: Workers allow no crypto at a script's top level
      entries ??= Promise.all(
        raw.map(async (r) => {
          const digest = await sha256(r.token);
          return { digest, caller: { allows: r.allows, scope: hex(digest) } };
        }),
      );
      const d = await sha256(presented);
      let found: Caller | undefined;
      for (const e of await entries) {
        let diff = 0;
        for (let i = 0; i < d.length; i++) diff |= d[i]! ^ e.digest[i]!;
        if (diff === 0 && found === undefined) found = e.caller;
      }
      return found;
    },
  };
}
