// How @hono/node-server read a node:http request, for the two listeners that answer without
// it (the gateway, and `emq producer`'s job route): so a request reads there as it did under
// Hono. Node only.
import type { IncomingMessage } from 'node:http';

/** @hono/node-server's test for a request target it may take as sent, without the URL parser. */
export const VALID_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
/** @hono/node-server's test for a Host it may take as sent. */
export const VALID_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

/**
 * The Authorization header as the Fetch API reads it: every occurrence, joined with ', ' (so
 * two tokens are no token), where node:http would keep only the first.
 */
export function authorizationOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}
