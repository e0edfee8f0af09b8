// Reading a node:http request as the Fetch API reads one (the URL and path a Request would
// have, its headers joined), for the two node:http listeners: the gateway and `emq producer`
// (functions/producer/node-http.ts). A target or Host that cannot make a URL is refused (400).
// Node only.
import type { IncomingMessage } from 'node:http';
import { getPath } from 'hono/utils/url';

/**
 * A request target taken as sent, without the URL parser: origin-form, only characters a URL
 * keeps as they are (not an apostrophe: a special URL's query percent-encodes it).
 */
const VALID_TARGET = /^\/[!#$&(-;=?-[\]_a-z~]*$/;
/** A Host taken as sent: lowercase name characters, an optional port of 4 or 5 digits from 1000. */
export const VALID_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
/** A dot segment, which the URL parser resolves. */
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

/** A backslash before the query: the URL parser would read it as '/', so the target is refused. */
const backslashed = (target: string) => {
  const at = target.indexOf('\\');
  if (at < 0) return false;
  const query = target.indexOf('?');
  return query < 0 || at < query;
};

/**
 * The request's URL and its path (dot segments resolved, percent-decoded as Hono's getPath
 * decodes it); undefined when it makes no URL (answer 400). The URL parser runs only for a
 * target or Host that needs it; an absolute-form target is parsed as it is.
 */
export function targetOf(req: IncomingMessage): { url: string; path: string } | undefined {
  const target = req.url ?? '';
  let url: string;
  if (target.charCodeAt(0) !== 47) {
    if (!target.startsWith('http://') && !target.startsWith('https://')) return undefined;
    if (backslashed(target)) return undefined;
    try {
      url = new URL(target).href;
    } catch {
      return undefined;
    }
    return { url, path: getPath({ url } as Request) };
  }
  const host = req.headers.host ?? 'localhost';
  url = `http://${host}${target}`;
  if (!VALID_HOST.test(host) || !VALID_TARGET.test(target) || DOT_SEGMENT.test(target)) {
    if (backslashed(target)) return undefined;
    try {
      const parsed = new URL(url);
      if (parsed.hostname.length !== host.length && parsed.hostname !== host.replace(/:\d+$/, '').toLowerCase()) return undefined;
      url = parsed.href;
    } catch {
      return undefined;
    }
  }
  return { url, path: getPath({ url } as Request) };
}

/**
 * The Authorization header as the Fetch API reads it: every occurrence, joined with ', ' (so
 * two tokens are no token), where node:http would keep only the first.
 */
export function authorizationOf(req: IncomingMessage): string | undefined {
  return joined(req, 'authorization');
}

/** Every occurrence of header `name` (lowercase), joined with ', '. */
function joined(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const at = raw[i]!;
    if (at.length === name.length && at.toLowerCase() === name) value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}

// node:http keeps only the first of these (the rest it joins as Fetch does): read from the raw headers
const FIRST_ONLY = new Set(['authorization', 'content-type', 'user-agent', 'referer', 'from', 'etag', 'age', 'expires', 'location']);

/** Request header `name` (any case) as the Fetch API's Headers read it: every occurrence, joined with ', '. */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (FIRST_ONLY.has(lower)) return joined(req, lower);
  const value = req.headers[lower];
  return typeof value === 'string' ? value : undefined;
}
