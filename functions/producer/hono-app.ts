// The producer as a Hono app: the Worker (worker.ts) serves it, and users mount it under their
// own routes (`echomq-edge/producer`), with their own auth in front through `caller`. Each of
// the core's routes (routes.ts) is a Hono route whose handler hands the request to the core
// (core.ts) and returns its answer, so the app's own `use` middleware, a user's middleware and
// a mount prefix apply to every request alike. Runtime-agnostic.
import type { Context, MiddlewareHandler } from 'hono';
import { HonoBase } from 'hono/hono-base';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { readRequest } from '../http/body.js';
import type { Answer, RequestView } from './call.js';
import { createProducerCore, type CoreOptions, type ProducerCore } from './core.js';
import type { Caller } from './tokens.js';

export interface ProducerOptions extends Omit<CoreOptions, 'caller'> {
  /**
   * Who is calling /v1/queues/*, or undefined for 401. Default: the `Authorization: Bearer`
   * token, one of EMQ_TOKENS. Give your own when the app is mounted behind your own auth
   * (its middleware runs first; read what it set from `c`); EMQ_TOKENS is then not used.
   */
  caller?: (c: Context) => Caller | undefined | Promise<Caller | undefined>;
  /** Hono middleware run first, on every request, before the route hands it to the core. */
  use?: readonly MiddlewareHandler[];
}

/** A Hono context as the core reads a request. */
class HonoRequest implements RequestView {
  constructor(readonly c: Context) {}
  get method() {
    return this.c.req.method;
  }
  get path() {
    return this.c.req.path;
  }
  get env() {
    return this.c.env as unknown;
  }
  header(name: string) {
    return this.c.req.header(name);
  }
  param(name: string) {
    return this.c.req.param(name);
  }
  query(name: string) {
    return this.c.req.query(name);
  }
  body(max: number, read: { bytes: number }) {
    // the raw Request: Hono's copy of it caches the body
    return readRequest(this.c.req.raw, max, (bytes) => {
      read.bytes += bytes;
    });
  }
}

const responseOf = ({ status, headers, body }: Answer) => new Response(body, { status, headers });

/**
 * The producer's Hono app over its core, on Hono's RegExpRouter alone: the router Hono's default
 * picks for these routes, without the fallback router it also bundles (the Worker's size budget:
 * test/build.test.ts).
 */
export function honoApp(core: ProducerCore, use: readonly MiddlewareHandler[] = []): HonoBase {
  const app = new HonoBase({ router: new RegExpRouter() });
  for (const m of use) app.use(m);
  for (const route of core.routes) {
    const handler = (c: Context) => core.serve(route, new HonoRequest(c)).then(responseOf);
    if (route.method === 'ALL') app.all(route.pattern, handler);
    else app.on(route.method, route.pattern, handler);
  }
  app.notFound((c) => core.serve(undefined, new HonoRequest(c)).then(responseOf));
  // only a middleware's throw reaches here: the core answers its routes' errors itself
  app.onError((err, c) => responseOf(core.failed(new HonoRequest(c), err)));
  return app;
}

/** The producer app, to serve as it is or to mount under your own routes. */
export function createProducerApp({ caller: own, use, ...options }: ProducerOptions): HonoBase {
  const caller = own && ((request: RequestView) => own((request as HonoRequest).c));
  return honoApp(createProducerCore({ ...options, caller }), use);
}
