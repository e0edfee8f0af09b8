// What every console answer carries, and the check every action passes. The pages hold no
// inline script or style (the client script and the style sheet are files of this origin), so
// the policy can be strict: nothing from another origin, no framing, forms post only here.
import type { Context, MiddlewareHandler } from 'hono';

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const h = c.res.headers;
  if (!h.has('Content-Security-Policy')) h.set('Content-Security-Policy', CSP);
  h.set('X-Content-Type-Options', 'nosniff');
  h.set('X-Frame-Options', 'DENY');
  // not no-referrer: under it a browser sends `Origin: null` with a form post
  h.set('Referrer-Policy', 'same-origin');
  h.set('Cross-Origin-Opener-Policy', 'same-origin');
  h.set('Cross-Origin-Resource-Policy', 'same-origin');
  h.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  // pages show live state and may name what a token sees: never cached (the assets set their own)
  if (!h.has('Cache-Control')) h.set('Cache-Control', 'no-store');
};

/**
 * Whether a POST comes from this console's own pages. A browser sends Sec-Fetch-Site with
 * every form post: it must say same-origin. Without it (an older browser), Origin must be this
 * origin. A request with neither is not a browser's, and is let through only when it carries
 * its token in Authorization (a script's: no browser adds that header to a cross-site post).
 */
export function sameOrigin(c: Context, bearer: boolean): boolean {
  const site = c.req.header('Sec-Fetch-Site');
  if (site !== undefined) return site === 'same-origin';
  const origin = c.req.header('Origin');
  if (origin !== undefined) return origin === new URL(c.req.url).origin;
  return bearer;
}
