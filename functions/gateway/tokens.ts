// Gateway tokens: EMQ_GATEWAY_TOKENS="admin:<token>,producer:<token>,control:<token>,...".
// A control token may do what a producer token may, and also run the control scripts (cancel,
// promote, lanes, pause): a deployment that never uses control needs no such token.
// Checked in constant time against every configured token; never logged or echoed.
import { hash, timingSafeEqual } from 'node:crypto';

export type Scope = 'admin' | 'producer' | 'control';

const SCOPES: ReadonlySet<string> = new Set<Scope>(['admin', 'producer', 'control']);

export interface GatewayTokens {
  /** The scope a presented token carries, or undefined. Takes the same time whatever matches. */
  scopeOf(presented: string): Scope | undefined;
  readonly size: number;
}

// one-shot (crypto.hash, Node >= 20.12): the same SHA-256 of the UTF-8 bytes, without a Hash
// object per call; taken as 'binary' (latin1) text, a char per byte, and copied into a Buffer, as a
// Buffer output costs a backing store of its own (measured ~1 µs more per request)
const digest = (s: string) => Buffer.from(hash('sha256', s, 'binary'), 'binary');

/** Parses the token list; errors name the entry's position, never its token. */
export function parseGatewayTokens(spec: string | undefined): GatewayTokens {
  const entries = (spec ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) {
    throw new Error('EMQ_GATEWAY_TOKENS is empty: set it to a comma-separated list of scope:token (scope admin, producer or control)');
  }
  const known: Array<{ scope: Scope; digest: Buffer }> = [];
  entries.forEach((entry, i) => {
    const at = entry.indexOf(':');
    const scope = entry.slice(0, at);
    const token = entry.slice(at + 1);
    if (at < 0 || !SCOPES.has(scope)) {
      throw new Error(`EMQ_GATEWAY_TOKENS entry ${i + 1} must be admin:<token>, producer:<token> or control:<token>`);
    }
    if (token.length < 16) throw new Error(`EMQ_GATEWAY_TOKENS entry ${i + 1}: the token is shorter than 16 characters`);
    known.push({ scope: scope as Scope, digest: digest(token) });
  });
  return {
    size: known.length,
    scopeOf(presented) {
      const d = digest(presented);
      let found: Scope | undefined;
      // no early exit: every token is compared whatever matches
      for (const k of known) if (timingSafeEqual(d, k.digest) && found === undefined) found = k.scope;
      return found;
    },
  };
}
