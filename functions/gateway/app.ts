// The gateway's routes: Upstash's REST protocol in front of Valkey.
//   POST /               one JSON command            → {"result"} | 400 {"error"}
//   POST /pipeline       JSON commands, in order      → [{"result"} | {"error"}, ...]
//   POST /multi-exec     JSON commands, atomically    → the same, or 400 {"error"} if aborted
//   GET|POST /<cmd>/...  path-style; a POST body is the last argument, raw
//   GET /healthz, GET /readyz
// Authorization: Bearer <token> (or ?_token=<token> when queryToken is on).
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { Arg, Outcome } from '../../shared/connection.js';
import { WireMismatchError } from '../../shared/errors.js';
import { publicFound } from '../../shared/fence.js';
import type { Script } from '../../shared/scripts.js';
import { BadCommand, jsonCommand, jsonCommands, pathCommand } from './args.js';
import { moreElementsThan } from './count.js';
import { Unavailable, type Backend } from './backend.js';
import { TooLarge, readBody } from '../http/body.js';
import { noteOutcomes } from './observe.js';
import { createPolicy } from './policy.js';
import { bodyOf } from './reply.js';
import type { Scope, GatewayTokens } from './tokens.js';

export interface GatewayOptions {
  backend: Backend;
  tokens: GatewayTokens;
  /** The scripts a producer token may run. */
  scripts: readonly Script[];
  /** Largest request body, in bytes; refused with 413 as it streams in. */
  maxBodyBytes?: number;
  /**
   * Largest body a producer token may send (never above maxBodyBytes): its largest honest
   * request is a path-style enqueue of one payload or a REST pipeline, each 1 MiB by default.
   */
  producerMaxBodyBytes?: number;
  /** Most commands in one /pipeline or /multi-exec request. */
  maxPipeline?: number;
  /** Seconds a client should wait after a 503. */
  retryAfterSeconds?: number;
  /** True once the process is draining: new requests get 503. */
  draining?: () => boolean;
  /**
   * Accept a token in the URL (`?_token=`), as Upstash does; off by default, since URLs end
   * up in proxy and access logs. Off, a request carrying `_token` is refused whatever it holds.
   */
  queryToken?: boolean;
  /** Middleware run first, on every request (request ids, logs, metrics: functions/http/request-context.ts). */
  use?: readonly MiddlewareHandler[];
}

// @hono/node-server passes the Node request as env.incoming: its url is the target exactly as sent
type Env = { Variables: { scope: Scope }; Bindings: { incoming?: { url?: string } } };

const json = (c: Context, body: unknown, status: 200 | 400 | 401 | 403 | 404 | 405 | 413 | 503 = 200) => c.json(body, status);

export function createGateway({
  backend,
  tokens,
  scripts,
  maxBodyBytes = 8 * 1024 * 1024,
  producerMaxBodyBytes = 2 * 1024 * 1024,
  maxPipeline = 10_000,
  retryAfterSeconds = 1,
  draining = () => false,
  queryToken = false,
  use = [],
}: GatewayOptions): Hono<Env> {
  const policy = createPolicy(scripts);
  const app = new Hono<Env>();
  for (const m of use) app.use(m);
  // read after authentication, so a request without a token never has its body read
  const capOf = (c: Context<Env>) => (c.get('scope') === 'producer' ? Math.min(producerMaxBodyBytes, maxBodyBytes) : maxBodyBytes);

  const unavailable = (c: Context, why: string) => {
    c.header('Retry-After', String(retryAfterSeconds));
    return json(c, { error: `Valkey is unavailable: ${why}` }, 503);
  };

  // `{emq}:version` holds another wire version: the producer scope waits, the admin scope
  // may still look (and fix it)
  const mismatched = (c: Context, err: WireMismatchError) => {
    c.header('Retry-After', String(retryAfterSeconds));
    return json(c, { error: err.message, code: 'wire_mismatch', expected: err.expected, found: err.found }, 503);
  };

  app.onError((err, c) => {
    if (err instanceof Unavailable) return unavailable(c, err.message);
    if (err instanceof WireMismatchError) return mismatched(c, err);
    if (err instanceof BadCommand) return json(c, { error: `ERR ${err.message}` }, 400);
    if (err instanceof SyntaxError) return json(c, { error: 'ERR the body is not valid JSON' }, 400);
    if (err instanceof TooLarge) return json(c, { error: `ERR the request body is larger than ${capOf(c)} bytes` }, 413);
    console.error(`gateway: ${c.req.method} ${c.req.path}: ${(err as Error).stack ?? String(err)}`);
    return json(c, { error: 'ERR internal error in the gateway' }, 400);
  });

  // /readyz needs no token: ready or not and a stable reason, never Valkey's or glide's words
  // (an address, the user); a wire mismatch names both versions, as the fence asks
  const notReady = (c: Context, reason: string, more: Record<string, string> = {}) => {
    c.header('Retry-After', String(retryAfterSeconds));
    return json(c, { status: 'unavailable', reason, ...more }, 503);
  };

  app.use('*', async (c, next) => {
    if (draining()) {
      c.header('Connection', 'close');
      return c.req.path === '/readyz' ? notReady(c, 'draining') : unavailable(c, 'the gateway is shutting down');
    }
    await next();
    // a request that was in flight when draining began: its client must not reuse the socket
    if (draining()) c.res.headers.set('Connection', 'close');
  });

  app.get('/healthz', (c) => json(c, { status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      const pong = await backend.command('producer', ['PING']);
      if (!pong.ok) return notReady(c, 'valkey_refused');
      await backend.admit();
      return json(c, { status: 'ready' });
    } catch (err) {
      if (err instanceof Unavailable) return notReady(c, 'valkey_unreachable');
      if (!(err instanceof WireMismatchError)) {
        console.error(`gateway: /readyz: ${(err as Error).stack ?? String(err)}`);
        return notReady(c, 'internal');
      }
      const found = publicFound(err.found);
      const error = new WireMismatchError(err.expected, found).message;
      return notReady(c, 'wire_mismatch', { error, code: 'wire_mismatch', expected: err.expected, found });
    }
  });

  app.use('*', async (c, next) => {
    const header = c.req.header('Authorization');
    const bearer = header && /^bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const inUrl = c.req.query('_token');
    if (inUrl !== undefined && !queryToken) {
      return json(
        c,
        { error: 'Unauthorized: a token in the URL (?_token=) is off on this gateway (EMQ_GATEWAY_QUERY_TOKEN); send Authorization: Bearer <token>' },
        401,
      );
    }
    const presented = bearer || inUrl;
    const scope = presented ? tokens.scopeOf(presented) : undefined;
    if (!scope) return json(c, { error: 'Unauthorized: send Authorization: Bearer <token>' }, 401);
    c.set('scope', scope);
    await next();
  });

  const notAllowed = (c: Context) => {
    c.header('Allow', 'GET, POST');
    return json(c, { error: `ERR method ${c.req.raw.method} is not allowed; use GET or POST` }, 405);
  };

  const base64 = (c: Context) => c.req.header('Upstash-Encoding')?.toLowerCase() === 'base64';

  /** The first command the scope may not run, as a response; nothing is executed then. */
  const refuse = (c: Context<Env>, commands: ReadonlyArray<readonly Arg[]>) => {
    for (const args of commands) {
      const why = policy.refusal(c.get('scope'), args);
      if (why) return json(c, { error: why[1] }, why[0]);
    }
    return undefined;
  };

  /**
   * The first command the server does not know, as a 400; nothing is sent then (Valkey would
   * echo its bytes in an error reply). Asked for the admin scope only: a producer may send only
   * PING, EVAL and EVALSHA, and its Valkey user need not be allowed COMMAND.
   */
  const unknown = async (c: Context<Env>, commands: ReadonlyArray<readonly Arg[]>) => {
    const name = await backend.unknownCommand(commands);
    if (name === undefined) return undefined;
    return json(c, { error: `ERR unknown command '${name}': the server has no such command, so it was not sent` }, 400);
  };

  /**
   * The producer scope's calls wait for the `{emq}:version` fence; the admin scope's do not (an
   * operator may need them to fix the key). After the checks, so that a refusal stays a
   * refusal while Valkey is down.
   */
  const fence = (c: Context<Env>) => (c.get('scope') === 'producer' ? backend.admit() : undefined);

  const single = async (c: Context<Env>, args: Arg[]) => {
    const refused = refuse(c, [args]) ?? (c.get('scope') === 'admin' ? await unknown(c, [args]) : undefined);
    if (refused) return refused;
    const held = fence(c); // no promise at all while the fence was read lately
    if (held) await held;
    const outcome = await backend.command(c.get('scope'), args);
    noteOutcomes(c, 'single', [args], [outcome]);
    const body = bodyOf(outcome, base64(c));
    return json(c, body, 'error' in body ? 400 : 200);
  };

  // JSON is UTF-8: a body that is not would be altered by decoding, so it is refused
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const readJson = async (c: Context<Env>, maxCommands?: number) => {
    const bytes = await readBody(c, capOf(c));
    if (maxCommands !== undefined && moreElementsThan(bytes, maxCommands)) {
      throw new BadCommand(`more than ${maxCommands} commands in one request; the limit is ${maxCommands}`);
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new BadCommand('the body is not valid UTF-8, so it is not JSON; send bytes path-style as a POST body');
    }
    return JSON.parse(text) as unknown;
  };

  app.post('/', async (c) => single(c, jsonCommand(await readJson(c))));

  app.post('/pipeline', async (c) => {
    const commands = jsonCommands(await readJson(c, maxPipeline), maxPipeline);
    const refused = refuse(c, commands) ?? (c.get('scope') === 'admin' ? await unknown(c, commands) : undefined);
    if (refused) return refused;
    const held = fence(c);
    if (held) await held;
    const scope = c.get('scope');
    const outcomes = await Promise.all(commands.map((args) => backend.command(scope, args)));
    noteOutcomes(c, 'pipeline', commands, outcomes);
    return json(
      c,
      outcomes.map((o) => bodyOf(o, base64(c))),
    );
  });

  app.post('/multi-exec', async (c) => {
    const commands = jsonCommands(await readJson(c, maxPipeline), maxPipeline);
    const refused = refuse(c, commands) ?? (c.get('scope') === 'admin' ? await unknown(c, commands) : undefined);
    if (refused) return refused;
    const held = fence(c);
    if (held) await held;
    const outcomes = await backend.transaction(c.get('scope'), commands);
    noteOutcomes(c, 'multi_exec', commands, outcomes);
    if (!Array.isArray(outcomes)) return json(c, bodyOf(outcomes as Outcome, false), 400);
    return json(
      c,
      outcomes.map((o) => bodyOf(o, base64(c))),
    );
  });

  // The path as sent: Hono's c.req.path is partly decoded (and %FF must stay a byte), and the
  // Request's URL has dot segments resolved (so %2E%2E would drop an argument).
  const rawPath = (c: Context<Env>) => (c.env?.incoming?.url ?? new URL(c.req.url).pathname).split('?')[0]!;
  app.get('/*', (c) => {
    // Hono serves HEAD from the GET routes, which would run the command
    if (c.req.raw.method === 'HEAD') return notAllowed(c);
    return single(c, pathCommand(rawPath(c), undefined));
  });
  app.post('/*', async (c) => single(c, pathCommand(rawPath(c), await readBody(c, capOf(c)))));
  app.all('/*', notAllowed);

  return app;
}
