// The console: a Hono app of server-rendered pages (Hono's JSX) over the producer's HTTP API,
// with a small client script for live refresh and charts. It holds no token and no write path
// of its own: every read and action is a producer call carrying the asker's token (session.ts).
// Order: security headers on every answer; the assets and sign-in open; then the gate (a
// token, and for a POST a same-origin check and a body cap) before any page or action.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { actionRoutes } from './action-routes.js';
import { SCRIPT } from './assets/script.js';
import { STYLE } from './assets/style.js';
import type { Source } from '../producer/webhooks/sources.js';
import type { Api } from './producer.js';
import type { Asker } from './session.js';
import { pageRoutes } from './page-routes.js';
import { SignIn } from './pages/signin.js';
import { RefusedPage, badForm, statusOf } from './refused-page.js';
import { apiFor, ProducerError } from './producer.js';
import { askerOf, isToken, signIn, signOut } from './session.js';
import { sameOrigin, securityHeaders } from './security.js';

/** The routes' environment: who asks (session.ts) and the producer API on their behalf, set by the gate below. */
export interface ConsoleEnv {
  Variables: { asker: Asker; api: Api };
}

export interface ConsoleOptions {
  /** The producer API's base URL. */
  producerUrl: string;
  /** Webhook sources a test delivery may be signed for (EMQ_SOURCES). */
  sources: ReadonlyMap<string, Source>;
  /** The fetch calls to the producer go through (tests). */
  fetch?: typeof fetch;
}

/** A sign-in form's body: a token and its field name. */
const SIGNIN_MAX_BYTES = 4 * 1024;
/** Any other form: a test job's payload (the producer caps it again, EMQ_MAX_PAYLOAD_BYTES). */
const FORM_MAX_BYTES = 2 * 1024 * 1024;

const tooLarge = bodyLimit({ maxSize: FORM_MAX_BYTES, onError: (c) => c.text('payload too large', 413) });

export function createConsoleApp(options: ConsoleOptions): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const fetchImpl = options.fetch;
  app.use(securityHeaders);

  const asset = (body: string, type: string) => (c: { body: (b: string, s: 200, h: Record<string, string>) => Response }) =>
    c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=3600' });
  app.get('/assets/console.js', asset(SCRIPT, 'text/javascript; charset=utf-8'));
  app.get('/assets/console.css', asset(STYLE, 'text/css; charset=utf-8'));

  app.get('/signin', (c) => c.html(<SignIn />));
  app.post('/signin', bodyLimit({ maxSize: SIGNIN_MAX_BYTES, onError: (c) => c.text('payload too large', 413) }), async (c) => {
    if (!sameOrigin(c, false)) return c.html(<RefusedPage err={badForm('a sign-in must come from this console')} back="/signin" />, 403);
    const form = await c.req.parseBody();
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    if (!isToken(token)) return c.html(<SignIn refused={badForm('a token is 1 to 512 printable ASCII characters')} />, 400);
    try {
      // a read any token with `read` may make, on any queues it may use
      await apiFor(options.producerUrl, token, fetchImpl).client.crons();
    } catch (err) {
      if (!(err instanceof ProducerError)) throw err;
      return c.html(<SignIn refused={err} />, statusOf(err));
    }
    signIn(c, token);
    return c.redirect('/', 303);
  });
  app.post('/signout', (c) => {
    if (!sameOrigin(c, askerOf(c)?.bearer === true)) return c.html(<RefusedPage err={badForm('a sign-out must come from this console')} back="/" />, 403);
    signOut(c);
    return c.redirect('/signin', 303);
  });

  // the gate: every page and action below needs a token; a post, this origin
  app.use(async (c, next) => {
    const asker = askerOf(c);
    if (!asker) {
      if (c.req.method === 'GET' && !c.req.path.endsWith('.json')) return c.redirect('/signin', 303);
      return c.json({ code: 'unauthorized', detail: 'sign in, or send Authorization: Bearer <token>' }, 401);
    }
    if (c.req.method === 'POST' && !sameOrigin(c, asker.bearer)) {
      return c.html(<RefusedPage err={badForm('an action must be posted from this console (a same-origin check)')} back="/" />, 403);
    }
    c.set('asker', asker);
    c.set('api', apiFor(options.producerUrl, asker.token, fetchImpl));
    return next();
  });
  app.post('*', tooLarge);
  pageRoutes(app, options);
  actionRoutes(app, options);
  app.notFound((c) =>
    c.html(<RefusedPage err={new ProducerError(404, 'not_found', 'the console has no such page', { detail: 'the console has no such page' })} back="/" />, 404),
  );
  // a fault of the console's own: said without its words (they may name a path or a host)
  app.onError((err, c) => {
    process.stderr.write(`console: ${c.req.method} ${c.req.path}: ${(err as Error).stack ?? String(err)}\n`);
    return c.html(
      <RefusedPage
        err={new ProducerError(500, 'internal', 'the console failed; its log says why', { detail: 'the console failed; its log says why' })}
        back="/"
      />,
      500,
    );
  });
  return app;
}
