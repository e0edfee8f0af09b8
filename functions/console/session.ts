// Who is asking: the token in `Authorization: Bearer` (scripts, tests), else the sign-in
// cookie (HttpOnly, SameSite=Strict, Path=/, Secure over https). The console holds no token
// of its own: each call to the producer carries the asker's, and the producer decides
// (401 unauthorized, 403 forbidden_action for a token without `control`).
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

export const COOKIE = 'emq_console';
/** A token is printable ASCII, and short: anything else is not a token (checked before any call). */
const TOKEN = /^[\x21-\x7e]{1,512}$/;

export const isToken = (text: string | undefined): text is string => text !== undefined && TOKEN.test(text);

export interface Asker {
  token: string;
  /** The token came in Authorization, not the cookie. */
  bearer: boolean;
}

export function askerOf(c: Context): Asker | undefined {
  const header = c.req.header('Authorization');
  if (header !== undefined) {
    const m = /^Bearer ([\x21-\x7e]+)$/.exec(header);
    return m && isToken(m[1]) ? { token: m[1], bearer: true } : undefined;
  }
  const cookie = getCookie(c, COOKIE);
  return isToken(cookie) ? { token: cookie, bearer: false } : undefined;
}

// over https, or behind a proxy that ends TLS and says so (the flag only narrows where the cookie goes)
const secure = (c: Context) => new URL(c.req.url).protocol === 'https:' || c.req.header('X-Forwarded-Proto') === 'https';

export function signIn(c: Context, token: string): void {
  setCookie(c, COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/', secure: secure(c) });
}

export function signOut(c: Context): void {
  deleteCookie(c, COOKIE, { httpOnly: true, sameSite: 'Strict', path: '/', secure: secure(c) });
}
