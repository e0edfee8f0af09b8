// The producer: Hono routes over the shared enqueue package. Runtime-agnostic: the same
// app is the Worker (REST connection) and runs on Node (glide or REST).
//   POST /v1/queues/:queue/jobs       body = payload; Emq-Job-Id, Emq-Group, Emq-Delay | Emq-Not-Before
//                                     optional → 201 enqueued | 201 scheduled | 200 duplicate
//   POST /v1/queues/:queue/batch      JSON items → 200 {queue, results: [{id, verdict}]}
//   GET  /v1/queues/:queue/jobs/:id   → 200 {id, queue, state, attempts} | 404
//   POST /v1/webhooks/:source         a signed delivery → 201 | 200 duplicate (see webhooks/)
//   GET  /healthz, GET /readyz
//   GET  /openapi.json                the OpenAPI 3.1 document of these routes (openapi.ts)
// With regions (worker.ts), a queue's routes answer Emq-Region: the region whose Valkey takes its jobs.
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import {
  BatchError,
  ConflictError,
  FLOW_MAX_CHILDREN,
  addFlow,
  type FlowResult,
  enqueueOnce,
  enqueueGrouped,
  enqueueGroupedMany,
  enqueueGroupedOnce,
  schedule,
  scheduleMany,
  scheduleOnce,
  createMinter,
  drawNode,
  enqueue,
  admitMany,
  enqueueNew,
  jobState,
  validateId,
  type Minter,
  validateQueue,
  type Connection,
  type Payload,
} from '../../shared/index.js';
import type { RequestScope } from '../../shared/connection.js';
import { scoped } from '../../shared/observe.js';
import { TooLarge, declaredOver, readBody, readRequest } from '../http/body.js';
import { forRequest, noteBytes, noteReason, requestOf } from '../http/request-context.js';
import { parseBatch } from './batch.js';
import { parseFlow } from './flow-body.js';
import { openApi } from './openapi.js';
import { isScheduled, placementOf, type Placement } from './placement.js';
import type { Config } from './config.js';
import { Problem, problemResponse } from './problem.js';
import { flowProblem, problemOf, reportedProblem } from './error-problems.js';
import { dedupeOf } from './webhooks/dedupe.js';
import { envelope } from './webhooks/envelope.js';
import { delivered } from './webhooks/delivery.js';
import type { Caller } from './tokens.js';

export interface ProducerOptions {
  /** The configuration, or the error that made it; a bad one answers 500 misconfigured. */
  config: () => Config;
  /** The connection that takes a queue's jobs (its home region's, with regions); no queue: the local one. */
  connection: (queue?: string) => Connection;
  /** The region that takes a queue's jobs, answered as Emq-Region; none without regions. */
  regionOf?: (queue: string) => string | undefined;
  /** The minter for ids this app mints; default: one on the configured node id (EMQ_NODE_ID / EMQ_NODE_IDS). */
  minter?: Minter;
  /**
   * Who is calling /v1/queues/*, or undefined for 401. Default: the `Authorization: Bearer`
   * token, one of EMQ_TOKENS. Give your own when the app is mounted behind your own auth
   * (its middleware runs first; read what it set from `c`); EMQ_TOKENS is then not used.
   */
  caller?: (c: Context) => Caller | undefined | Promise<Caller | undefined>;
  /** Middleware run first, on every request (request ids, logs, metrics: functions/http/request-context.ts). */
  use?: readonly MiddlewareHandler[];
}

type Env = { Variables: { caller: Caller } };

/** POST …/jobs's checks, made before its body is read: the job's id, Idempotency-Key and placement, and the payload's cap. */
export interface JobPlan {
  queue: string;
  given: string | undefined;
  key: string | undefined;
  placement: Placement;
  maxPayloadBytes: number;
  dedupeTtlSeconds: number;
}

/**
 * POST /v1/queues/:queue/jobs in steps, without a framework: the Hono route takes them, and so
 * do `emq producer`'s node:http listener (node-listener.ts) and the Worker's fetch
 * (worker-jobs.ts), so all answer the same.
 */
export interface JobRoute {
  /**
   * A job request taken before its body is read: its caller, plan, region (Emq-Region) and
   * connection, scoped to the request (`scope`: its id and observer, as forRequest() gives
   * them). Undefined when the app must answer it instead: no or an unknown token, a refused
   * queue or header, a misconfiguration, a body declared over the cap (`header` reads the
   * request's headers, any case).
   */
  take(queue: string, header: (name: string) => string | undefined, scope: RequestScope): TakenJob | undefined;
  /** The request's payload under the plan's cap (past it: 413); `note` is told the bytes read. */
  payload(request: Request, plan: JobPlan, note: (bytes: number) => void): Promise<Payload>;
  admit(valkey: Connection, plan: JobPlan, caller: Caller, payload: Payload): Promise<Admitted>;
}

export interface TakenJob {
  caller: Caller;
  plan: JobPlan;
  region: string | undefined;
  valkey: Connection;
}

type Admitted = { id: string; verdict: 'enqueued' | 'scheduled' | 'duplicate' };

export function createProducerApp(options: ProducerOptions): Hono<Env> {
  return createProducer(options).app;
}

/**
 * The producer app, and its POST …/jobs steps (JobRoute) for a server that takes them itself;
 * none with an own `caller` (it reads the Hono context).
 */
export function createProducer({ config, connection, regionOf, minter: given, caller: own, use = [] }: ProducerOptions): {
  app: Hono<Env>;
  jobs: JobRoute | undefined;
} {
  const app = new Hono<Env>();
  for (const m of use) app.use(m);
  // this app's minter, on its configured node id (or one drawn from the pool once, at first use)
  let minter: Minter | undefined = given;
  const mint = () => {
    if (!minter) {
      const { nodeId, nodePool } = settings();
      minter = createMinter({ node: nodeId ?? drawNode(nodePool) });
    }
    return minter();
  };

  app.onError((err, c) => problemResponse(c, reportedProblem(err, c.req.method, c.req.path, requestOf(c)?.id)));
  app.notFound((c) => problemResponse(c, new Problem(404, 'not_found', `no route ${c.req.method} ${c.req.path}`)));

  const settings = (): Config => {
    try {
      return config();
    } catch (err) {
      // the message names the variable, never a secret's value
      throw new Problem(500, 'misconfigured', (err as Error).message);
    }
  };

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    // a read of a job that never exists: proves the whole path (REST, gateway, Valkey, scripts)
    // no token needed here: problems with fixed details (problemOf); a wire mismatch names
    // both versions but not an error reply's words (NOPERM names the Valkey user)
    await jobState(forRequest(c, connection()), 'emq-readyz', 'JOB00000000000');
    return c.json({ status: 'ready' });
  });
  // no token: it names no queue; under a mount prefix it says so (its servers entry)
  app.get('/openapi.json', (c) => c.json(openApi(c.req.path.slice(0, -'/openapi.json'.length))));

  const bearerOf = (header: string | undefined): Caller | undefined => {
    const { tokens } = settings();
    if (!tokens) throw new Problem(500, 'misconfigured', 'EMQ_TOKENS was not read (configFrom with tokens: false) and the app was given no caller');
    const token = header && /^bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    return token ? tokens.callerOf(token) : undefined;
  };
  const bearer = (c: Context): Caller | undefined => bearerOf(c.req.header('Authorization'));

  app.use('/v1/queues/*', async (c, next) => {
    const caller = await (own ?? bearer)(c);
    if (!caller) {
      throw new Problem(401, 'unauthorized', own ? 'this request has no caller' : 'send Authorization: Bearer <token> with a token from EMQ_TOKENS');
    }
    c.set('caller', caller);
    await next();
  });

  /** The route's queue, valid and allowed for this caller. */
  const allowedQueue = (queue: string, caller: Caller): string => {
    validateQueue(queue);
    if (!caller.allows(queue)) throw new Problem(403, 'forbidden_queue', `this token may not use queue "${queue}"`);
    return queue;
  };
  const queueOf = (c: Context<Env>): string => allowedQueue(c.req.param('queue') ?? '', c.get('caller'));

  /** The queue's connection, telling the caller which region takes its jobs. */
  const via = (c: Context, queue: string): Connection => {
    const region = regionOf?.(queue);
    if (region) c.header('Emq-Region', region);
    return forRequest(c, connection(queue)); // the request's id and observer ride on its calls
  };

  const payloadFrom = (request: Request, max: number, note: (bytes: number) => void) =>
    readRequest(request, max, note).catch((err: unknown) => {
      if (err instanceof TooLarge) throw new Problem(413, 'payload_too_large', `the payload is larger than ${max} bytes`);
      throw err;
    });
  const payloadOf = (c: Context, max: number) => payloadFrom(c.req.raw, max, (bytes) => noteBytes(c, bytes));

  /**
   * One job, placed: scheduled (@schedule, with its group if any) when it has a due time,
   * else into a lane (@genqueue) when it has a group, else flat (@enqueue). With `once`
   * (an Idempotency-Key or a webhook delivery), the -once twin of the same script.
   */
  const admit = async (
    valkey: Connection,
    queue: string,
    job: { id?: string | undefined; payload: Payload; placement: Placement },
    once?: { scope: string; key: string; compare: boolean; ttlSeconds: number },
  ): Promise<Admitted> => {
    const { id, payload, placement } = job;
    const { group } = placement;
    if (isScheduled(placement)) {
      const when = { at: placement.at, inMs: placement.inMs, group };
      if (once) return scheduleOnce(valkey, queue, { ...once, id, mint, payload, ...when });
      if (id !== undefined) return { id, verdict: await schedule(valkey, queue, id, payload, when) };
      return (await scheduleMany(valkey, queue, [{ payload, ...when }], mint))[0]!;
    }
    if (group !== undefined) {
      if (once) return enqueueGroupedOnce(valkey, queue, { ...once, id, mint, payload, group });
      if (id !== undefined) return { id, verdict: await enqueueGrouped(valkey, queue, group, id, payload) };
      return (await enqueueGroupedMany(valkey, queue, [{ group, payload }], mint))[0]!;
    }
    if (once) return enqueueOnce(valkey, queue, { ...once, id, mint, payload });
    if (id !== undefined) return { id, verdict: await enqueue(valkey, queue, id, payload) };
    return { id: await enqueueNew(valkey, queue, payload, mint), verdict: 'enqueued' };
  };

  /** A job's placement from its own group or the queue's default lane (EMQ_QUEUE_GROUPS). */
  const withDefaultLane = (queue: string, placement: Placement, groupOf: (queue: string) => string | undefined): Placement =>
    placement.group === undefined ? { ...placement, group: groupOf(queue) } : placement;

  const planJob = (queue: string, header: (name: string) => string | undefined): JobPlan => {
    const given = header('Emq-Job-Id');
    const key = header('Idempotency-Key');
    if (given !== undefined) validateId(given);
    if (key !== undefined && !/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(key)) {
      throw new Problem(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    const { maxPayloadBytes, dedupeTtlSeconds, maxDelayMs, groupOf } = settings();
    const placement = withDefaultLane(
      queue,
      placementOf({ group: header('Emq-Group'), delay: header('Emq-Delay'), notBefore: header('Emq-Not-Before') }, maxDelayMs),
      groupOf,
    );
    return { queue, given, key, placement, maxPayloadBytes, dedupeTtlSeconds };
  };

  const admitJob = async (valkey: Connection, plan: JobPlan, caller: Caller, payload: Payload): Promise<Admitted> => {
    const { queue, given, key, placement, dedupeTtlSeconds } = plan;
    if (key === undefined) return admit(valkey, queue, { id: given, payload, placement });
    // keys are the caller's own: scoped to the queue (the dedup key's slot) and the token;
    // without Emq-Job-Id, the -once script's caller mints the id (and mints again on a collision)
    const scope = `key:${await caller.scope()}`;
    try {
      return await admit(valkey, queue, { id: given, payload, placement }, { scope, key, compare: true, ttlSeconds: dedupeTtlSeconds });
    } catch (err) {
      if (err instanceof ConflictError) {
        throw new Problem(422, 'idempotency_conflict', `this Idempotency-Key was used with another payload or group (${err.message})`);
      }
      throw err;
    }
  };

  app.post('/v1/queues/:queue/jobs', async (c) => {
    const plan = planJob(queueOf(c), (name) => c.req.header(name));
    const valkey = via(c, plan.queue);
    const payload = await payloadOf(c, plan.maxPayloadBytes);
    const { id, verdict } = await admitJob(valkey, plan, c.get('caller'), payload);
    // the request's own path (…/v1/queues/<queue>/jobs): right under any prefix the app is mounted at
    c.header('Location', `${c.req.path}/${id}`);
    return c.json({ id, queue: plan.queue, verdict }, verdict === 'duplicate' ? 200 : 201);
  });

  app.post('/v1/webhooks/:source', async (c) => {
    const { sources, maxPayloadBytes, dedupeTtlSeconds, groupOf } = settings();
    // any name, configured or not, has its body read under the same cap and is refused alike
    // (webhooks/delivery.ts): names cannot be probed by an answer's text or its timing
    const body = await payloadOf(c, maxPayloadBytes);
    const verified = await delivered(sources, c.req.param('source'), c.req.raw.headers, body);
    if ('code' in verified) {
      noteReason(c, verified.reason); // what the refusal stands for: the operator's log line only
      throw new Problem(verified.status, verified.code, verified.detail);
    }
    const { source, delivery } = verified;
    const payload = envelope(source, delivery, c.req.header('Content-Type') ?? '', body);
    // keyed on what is signed: the delivery id where the scheme signs it, else the body
    const { scope, key } = await dedupeOf(source, delivery, body);
    // the source's lane (else the queue's default lane) and delay, checked at start
    const placement = withDefaultLane(source.queue, { group: source.group, inMs: source.delayMs }, groupOf);
    const { id, verdict } = await admit(
      via(c, source.queue),
      source.queue,
      { payload, placement },
      { scope, key, compare: false, ttlSeconds: dedupeTtlSeconds },
    );
    return c.json({ id, queue: source.queue, verdict }, verdict === 'duplicate' ? 200 : 201);
  });

  app.post('/v1/queues/:queue/batch', async (c) => {
    const queue = queueOf(c);
    const { maxBatchBytes, maxBatchItems, maxPayloadBytes, maxDelayMs, groupOf } = settings();
    const body = await readBody(c, maxBatchBytes).catch((err: unknown) => {
      if (err instanceof TooLarge) throw new Problem(413, 'payload_too_large', `the batch body is larger than ${maxBatchBytes} bytes`);
      throw err;
    });
    const jobs = parseBatch(body, maxBatchItems, maxPayloadBytes, maxDelayMs).map((job) => ({ ...job, ...withDefaultLane(queue, job, groupOf) }));
    // flat, lane and scheduled items alike: one pipeline, a result per item in order
    try {
      return c.json({ queue, results: await admitMany(via(c, queue), queue, jobs, mint) });
    } catch (err) {
      if (!(err instanceof BatchError)) throw err;
      // each item is atomic on its own: say which landed, so none is lost to the caller
      const p = problemOf(err);
      const results = (err as BatchError<string>).results.map((r) =>
        'error' in r ? { id: r.id, code: problemOf(r.error).code } : { id: r.id, verdict: r.verdict },
      );
      throw new Problem(p.status, p.code, `${p.detail}; results says which items landed`, { ...p.extra, results }, p.hidden);
    }
  });

  app.post('/v1/queues/:queue/flows', async (c) => {
    const queue = queueOf(c);
    const { maxBatchBytes, maxPayloadBytes } = settings();
    const body = await readBody(c, maxBatchBytes).catch((err: unknown) => {
      if (err instanceof TooLarge) throw new Problem(413, 'payload_too_large', `the flow body is larger than ${maxBatchBytes} bytes`);
      throw err;
    });
    const flow = parseFlow(body, FLOW_MAX_CHILDREN, maxPayloadBytes);
    const caller = c.get('caller');
    const home = regionOf?.(queue);
    flow.children.forEach(({ queue: other }, index) => {
      if (other === undefined) return;
      if (!caller.allows(other)) throw new Problem(403, 'forbidden_queue', `child ${index}: this token may not use queue "${other}"`, { index });
      // the library's fan-in runs on one Valkey: a child whose queue another region takes could never release its parent
      const region = regionOf?.(other);
      if (region !== home) {
        throw new Problem(
          400,
          'invalid_flow',
          `child ${index}: queue "${other}" is taken by region ${region}, the parent's by ${home}: a flow's jobs share one Valkey`,
          { index },
        );
      }
    });
    let landed: FlowResult;
    try {
      landed = await addFlow(via(c, queue), queue, flow, mint);
    } catch (err) {
      throw flowProblem(err);
    }
    const { verdict, parent, children } = landed;
    // the parent's job, under any mount prefix
    c.header('Location', `${c.req.path.replace(/\/flows$/, '/jobs')}/${parent.id}`);
    return c.json({ queue, parent: { id: parent.id }, children, verdict }, verdict === 'duplicate' ? 200 : 201);
  });

  app.get('/v1/queues/:queue/jobs/:id', async (c) => {
    const queue = queueOf(c);
    const id = c.req.param('id');
    validateId(id);
    const state = await jobState(via(c, queue), queue, id);
    if (!state) throw new Problem(404, 'not_found', `no job ${id} in queue "${queue}"`);
    return c.json({ id, queue, ...state });
  });

  app.all('/v1/*', (c) => problemResponse(c, new Problem(405, 'not_allowed', `${c.req.method} is not allowed on ${c.req.path}`)));

  const jobs: JobRoute = {
    take(queue, header, scope) {
      try {
        const caller = bearerOf(header('Authorization'));
        if (!caller) return undefined;
        const plan = planJob(allowedQueue(queue, caller), header);
        if (declaredOver(header('Content-Length'), header('Transfer-Encoding'), plan.maxPayloadBytes)) return undefined;
        return { caller, plan, region: regionOf?.(plan.queue), valkey: scoped(connection(plan.queue), scope) };
      } catch {
        return undefined; // the app's refusal, answered by the app
      }
    },
    payload: (request, plan, note) => payloadFrom(request, plan.maxPayloadBytes, note),
    admit: admitJob,
  };
  return { app, jobs: own ? undefined : jobs };
}
