// The producer's OpenAPI 3.1 document, served at GET /openapi.json. It is built on first
// request from the tables below and the codes, states and limits the code itself uses, so the
// Worker bundle carries tables, not the document (its gzip budget: test/build.test.ts); the
// prose is in docs/api.md. test/openapi.test.ts holds it to the app (its routes, the headers
// each route reads, every problem code); test/openapi-responses.test.ts, real answers to it.
import { FLOW_MAX_CHILDREN, QUEUE_MAX_LENGTH } from '../../shared/index.js';
import { JOB_STATES } from '../../shared/job-state.js';
import { PROBLEM_CODES, TITLES, type ProblemCode } from './problem.js';

type Json = Record<string, unknown>;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const schema = (name: string) => ref('schemas', name);
const str = { type: 'string' };
const array = (items: Json, maxItems?: number): Json => ({ type: 'array', items, ...(maxItems !== undefined && { minItems: 1, maxItems }) });
/** A closed object: every property listed, each required unless `optional`. */
const obj = (properties: Json, optional = false): Json => ({
  type: 'object',
  properties,
  ...(!optional && { required: Object.keys(properties) }),
  additionalProperties: false,
});
/** A job as JSON carries it: exactly one of its payload as UTF-8 text or as base64. */
const payloaded = (properties: Json): Json => ({
  ...obj({ payload: str, payloadBase64: { type: 'string', contentEncoding: 'base64' }, id: schema('Id'), ...properties }, true),
  oneOf: [{ required: ['payload'] }, { required: ['payloadBase64'] }],
});
const verdicts = (name: string, ...verdict: string[]) => ({ ...schema(name), properties: { verdict: { enum: verdict } } });

/** The status each code is answered with (internal: 500 from the producer, 502 for an error reply of Valkey's). */
const STATUS: Record<number, ProblemCode[]> = {
  400: [
    'invalid_name',
    'invalid_body',
    'invalid_query',
    'invalid_queue',
    'invalid_id',
    'invalid_payload',
    'invalid_batch',
    'invalid_flow',
    'invalid_delivery',
    'invalid_idempotency_key',
    'invalid_delay',
    'invalid_not_before',
    'invalid_group',
  ],
  401: ['unauthorized', 'invalid_signature'],
  403: ['forbidden_queue', 'forbidden_action'],
  404: ['not_found'],
  405: ['not_allowed'],
  409: ['conflict', 'job_exists', 'job_active', 'job_in_flow', 'job_locked', 'not_scheduled', 'schedule_exists'],
  413: ['payload_too_large'],
  422: ['idempotency_conflict'],
  // nginx's code: the client never reads it; the log line and the metrics count it as the client's
  499: ['client_closed'],
  500: ['misconfigured', 'internal'],
  502: ['upstream_auth', 'internal'],
  503: ['unavailable', 'wire_mismatch'],
};

/** What any request that reaches Valkey may meet, and a /v1/queues request too. */
const VALKEY: ProblemCode[] = ['misconfigured', 'internal', 'upstream_auth', 'unavailable', 'wire_mismatch'];
const QUEUE: ProblemCode[] = ['unauthorized', 'forbidden_action', 'forbidden_queue', 'invalid_queue', ...VALKEY];
const JOBS: ProblemCode[] = [...QUEUE, 'invalid_id', 'invalid_payload', 'payload_too_large', 'client_closed', 'conflict'];

interface Route {
  summary: string;
  /** Success answers: status → the JSON body's schema. */
  ok: Record<number, Json>;
  fails?: ProblemCode[];
  /** The header parameters it reads (HEADERS), and its query parameters (QUERY). */
  reads?: string[];
  query?: string[];
  /** The request body: media type → schema. */
  body?: Record<string, Json>;
  /** A /v1/queues route: behind the bearer token. */
  queue?: true;
  /** Behind the bearer token, naming no queue (no Emq-Region). */
  bearer?: true;
  /** Its success answers carry Location. */
  located?: true;
}

const ROUTES: Record<string, Record<string, Route>> = {
  '/healthz': { get: { summary: 'The process', ok: { 200: obj({ status: { const: 'ok' } }) } } },
  '/readyz': { get: { summary: 'The whole Valkey path', ok: { 200: obj({ status: { const: 'ready' } }) }, fails: VALKEY } },
  '/openapi.json': { get: { summary: 'This document', ok: { 200: { type: 'object', required: ['openapi', 'paths'] } } } },
  '/v1/queues/{queue}/jobs': {
    post: {
      summary: 'One job: the body is its payload, byte for byte',
      queue: true,
      located: true,
      reads: ['Emq-Job-Id', 'Idempotency-Key', 'Emq-Group', 'Emq-Delay', 'Emq-Not-Before'],
      body: { '*/*': {} },
      ok: { 201: verdicts('Enqueued', 'enqueued', 'scheduled'), 200: verdicts('Enqueued', 'duplicate') },
      fails: [...JOBS, 'invalid_idempotency_key', 'invalid_delay', 'invalid_not_before', 'invalid_group', 'idempotency_conflict'],
    },
  },
  '/v1/queues/{queue}/batch': {
    post: {
      summary: 'Up to 1,000 jobs: a result per item, in order',
      queue: true,
      body: { 'application/json': array(schema('BatchItem'), 1000) },
      ok: { 200: schema('BatchResult') },
      fails: [...JOBS, 'invalid_batch', 'idempotency_conflict'],
    },
  },
  '/v1/queues/{queue}/flows': {
    post: {
      summary: 'A parent job that runs once its children have completed',
      queue: true,
      located: true,
      body: { 'application/json': schema('Flow') },
      ok: { 201: verdicts('FlowResult', 'enqueued'), 200: verdicts('FlowResult', 'duplicate') },
      fails: [...JOBS, 'invalid_flow', 'job_exists'],
    },
  },
  '/v1/queues/{queue}/jobs/{id}': {
    get: {
      summary: "A job's state and attempts, where it waits, and with ?payload=1 its payload",
      queue: true,
      query: ['payload'],
      ok: { 200: schema('JobStatus') },
      fails: [...QUEUE, 'invalid_id', 'not_found'],
    },
    delete: {
      summary: 'Removes a pending, scheduled or dead job (control); Idempotency-Key: also frees that key if it names this job',
      queue: true,
      reads: ['Idempotency-Key'],
      ok: { 200: schema('Removed') },
      fails: [...QUEUE, 'invalid_id', 'invalid_idempotency_key', 'not_found', 'job_active', 'job_in_flow', 'job_locked'],
    },
    patch: {
      summary: "Moves a scheduled job's due time (control)",
      queue: true,
      reads: ['Emq-Delay', 'Emq-Not-Before'],
      ok: { 200: schema('Rescheduled') },
      fails: [...QUEUE, 'invalid_id', 'invalid_delay', 'invalid_not_before', 'not_found', 'not_scheduled'],
    },
  },
  '/v1/queues/{queue}/jobs/{id}/promote': {
    post: {
      summary: 'A scheduled job becomes due now (control)',
      queue: true,
      ok: { 200: schema('Promoted') },
      fails: [...QUEUE, 'invalid_id', 'not_found', 'not_scheduled'],
    },
  },
  '/v1/queues/{queue}': {
    get: {
      summary: 'The queue: paused, its counts, and its groups (pending-only ones too), a page at a time',
      queue: true,
      query: ['cursor', 'count'],
      ok: { 200: schema('QueueView') },
      fails: [...QUEUE, 'invalid_query', 'invalid_group'],
    },
  },
  '/v1/queues/{queue}/pause': {
    post: { summary: 'Claims stop; admission goes on (control)', queue: true, ok: { 200: schema('Paused') }, fails: QUEUE },
  },
  '/v1/queues/{queue}/resume': {
    post: { summary: 'Claims go on (control)', queue: true, ok: { 200: schema('Paused') }, fails: QUEUE },
  },
  '/v1/queues/{queue}/groups/{group}': {
    get: { summary: 'One group (lane)', queue: true, ok: { 200: schema('GroupView') }, fails: [...QUEUE, 'invalid_group'] },
    put: {
      summary: "Sets a group's limit, weight or pause (control)",
      queue: true,
      body: { 'application/json': schema('GroupChange') },
      ok: { 200: schema('GroupView') },
      fails: [...QUEUE, 'invalid_group', 'invalid_body', 'payload_too_large', 'client_closed'],
    },
  },
  '/v1/queues/{queue}/schedules': {
    get: {
      summary: "The queue's repeatables (EchoMQ.Repeat's registry), a page at a time",
      queue: true,
      query: ['scheduleCursor', 'count'],
      ok: { 200: schema('Schedules') },
      fails: [...QUEUE, 'invalid_query'],
    },
  },
  '/v1/queues/{queue}/schedules/{name}': {
    get: {
      summary: 'One repeatable; with ?payload=1 its template',
      queue: true,
      query: ['payload'],
      ok: { 200: schema('Schedule') },
      fails: [...QUEUE, 'invalid_name', 'not_found'],
    },
    put: {
      summary: "Registers a repeatable with the library's @repeat_register (control); occurrences land flat, fired by EchoMQ.Pump",
      queue: true,
      body: { 'application/json': schema('ScheduleRequest') },
      ok: { 201: verdicts('ScheduleVerdict', 'registered'), 200: verdicts('ScheduleVerdict', 'exists') },
      fails: [...QUEUE, 'invalid_name', 'invalid_body', 'payload_too_large', 'client_closed', 'schedule_exists'],
    },
    delete: {
      summary: "Cancels a repeatable with the library's @repeat_cancel (control)",
      queue: true,
      ok: { 200: verdicts('ScheduleVerdict', 'cancelled') },
      fails: [...QUEUE, 'invalid_name', 'not_found'],
    },
  },
  '/v1/queues/{queue}/schedules/{name}/pause': {
    post: { summary: 'The Pump stops finding it due (control)', queue: true, ok: { 200: schema('Schedule') }, fails: [...QUEUE, 'invalid_name', 'not_found'] },
  },
  '/v1/queues/{queue}/schedules/{name}/resume': {
    post: { summary: 'Due again at its next period (control)', queue: true, ok: { 200: schema('Schedule') }, fails: [...QUEUE, 'invalid_name', 'not_found'] },
  },
  '/v1/queues/{queue}/schedules/{name}/run-now': {
    post: {
      summary: 'Due now: the next Pump sweep fires it (control)',
      queue: true,
      ok: { 200: schema('Schedule') },
      fails: [...QUEUE, 'invalid_name', 'not_found'],
    },
  },
  '/v1/schedules': {
    get: {
      summary: 'The cron schedules this producer fires (EMQ_CRONS) on queues the token may use, each with its next fire; no payloads',
      bearer: true,
      ok: { 200: schema('CronSchedules') },
      fails: ['unauthorized', 'forbidden_action', 'misconfigured'],
    },
  },
  '/v1/webhooks/{source}': {
    post: {
      summary: 'A delivery signed as its source (EMQ_SOURCES) says; no bearer token',
      body: { '*/*': {} },
      ok: { 201: verdicts('Enqueued', 'enqueued', 'scheduled'), 200: verdicts('Enqueued', 'duplicate') },
      fails: ['invalid_signature', 'invalid_delivery', 'payload_too_large', 'client_closed', 'conflict', ...VALKEY],
    },
  },
};

/** Request headers the routes read: name → [description, schema]. */
const HEADERS: Record<string, [string, Json?]> = {
  'Emq-Job-Id': ['Absent: minted', schema('Id')],
  'Idempotency-Key': ['1-255 printable ASCII characters'],
  'Emq-Group': ['The lane', schema('Group')],
  'Emq-Delay': ['<n>ms, s, m, h or d'],
  'Emq-Not-Before': ['RFC 3339, or Unix ms'],
  'X-Request-Id': ['Kept when 1-128 printable ASCII, no space; else one is minted. Echoed, and sent on to the gateway'],
  traceparent: ['W3C Trace Context; passed on when valid'],
};

/** Query parameters the routes read: name → [description, schema]. */
const QUERY: Record<string, [description: string, schema: Json, name?: string]> = {
  payload: ['1: the answer carries the payload', { enum: ['1'] }],
  cursor: ['The last group of the page before', schema('Group')],
  scheduleCursor: ['The cursor the page before answered', { type: 'string', pattern: '^[0-9]{1,20}$' }, 'cursor'],
  count: ['Groups a page, 1-1000 (default 100)', { type: 'integer', minimum: 1, maximum: 1000 }],
};

/** Read by every route (each request's record: core.ts). */
const EVERY_ROUTE_READS = ['X-Request-Id', 'traceparent'];

function operation(path: string, { summary, ok, fails = [], reads = [], query = [], body, queue, bearer, located }: Route): Json {
  // every route that names a queue answers which region takes its jobs, once it knows
  const region = queue || path.startsWith('/v1/webhooks');
  const headers = (status: number) => ({
    'X-Request-Id': ref('headers', 'X-Request-Id'),
    ...(located && status < 300 && { Location: ref('headers', 'Location') }),
    ...(region && { 'Emq-Region': ref('headers', 'Emq-Region') }),
    ...(status === 401 && { 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') }),
    ...(status === 503 && { 'Retry-After': ref('headers', 'Retry-After') }),
  });
  const answer = (status: number, description: string, type: string, schema: Json) => ({
    description,
    headers: headers(status),
    content: { [type]: { schema } },
  });
  const responses: Json = {};
  for (const [status, body] of Object.entries(ok)) responses[status] = answer(Number(status), status === '201' ? 'Created' : 'OK', 'application/json', body);
  for (const [status, codes] of Object.entries(STATUS)) {
    const here = codes.filter((c) => fails.includes(c));
    const problem = { ...schema('Problem'), properties: { code: { enum: here }, status: { const: Number(status) } } };
    if (here.length > 0) responses[status] = answer(Number(status), here.join(', '), 'application/problem+json', problem);
  }
  return {
    summary,
    ...((queue || bearer) && { security: [{ bearer: [] }] }),
    parameters: [...[...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!), ...query, ...reads, ...EVERY_ROUTE_READS].map((name) => ref('parameters', name)),
    ...(body && { requestBody: { required: true, content: Object.fromEntries(Object.entries(body).map(([type, schema]) => [type, { schema }])) } }),
    responses,
  };
}

function build(): Json {
  const id = schema('Id');
  const queue = schema('Queue');
  const inPath = (name: string, schema: Json) => ({ name, in: 'path', required: true, schema });
  const childIds = array(obj({ queue, id }));
  const count = { type: 'integer', minimum: 0 };
  const positive = { type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 };
  const bool = { type: 'boolean' };
  const map = <T>(o: Record<string, T>, f: (name: string, value: T) => unknown) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(k, v)]));
  return {
    openapi: '3.1.1',
    info: { title: 'EchoMQ edge producer', version: '1', description: 'Another method on /v1/* answers 405 not_allowed; another path, 404 not_found.' },
    paths: map(ROUTES, (path, methods) => map(methods, (_, route) => operation(path, route))),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'EMQ_TOKENS' } },
      parameters: {
        queue: inPath('queue', queue),
        id: inPath('id', id),
        source: inPath('source', str),
        name: inPath('name', { type: 'string', pattern: '^[A-Za-z0-9._-]{1,255}$' }),
        group: inPath('group', schema('Group')),
        ...map(QUERY, (key, [description, schema, name = key]) => ({ name, in: 'query', description, schema })),
        ...map(HEADERS, (name, [description, schema = str]) => ({ name, in: 'header', description, schema })),
      },
      headers: {
        'X-Request-Id': { description: "The request's id: the caller's own when sane, else minted", required: true, schema: str },
        Location: { description: 'The job (a flow: its parent)', required: true, schema: str },
        'Emq-Region': { description: "The region whose Valkey takes the queue's jobs", schema: str },
        'Retry-After': { description: 'Seconds', schema: { type: 'integer' } },
        'WWW-Authenticate': { schema: str },
      },
      schemas: {
        Id: { type: 'string', pattern: '^JOB[0-9A-Za-z]{11}$' },
        Group: { type: 'string', pattern: '^[A-Z]{3}[0-9A-Za-z]{11}$' },
        Queue: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', maxLength: QUEUE_MAX_LENGTH },
        Verdict: { enum: ['enqueued', 'scheduled', 'duplicate'] },
        Enqueued: obj({ id, queue, verdict: schema('Verdict') }),
        BatchItem: payloaded({
          group: schema('Group'),
          delay: str,
          notBefore: { type: ['string', 'integer'] },
          idempotencyKey: { type: 'string', pattern: '^[\\x21-\\x7e][\\x20-\\x7e]{0,254}$' },
        }),
        BatchResult: obj({ queue, results: array(obj({ id, verdict: schema('Verdict') })) }),
        FlowJob: payloaded({}),
        FlowChild: payloaded({ queue, onFailure: { enum: ['fail-parent', 'ignore'] } }),
        Flow: obj({ parent: schema('FlowJob'), children: array(schema('FlowChild'), FLOW_MAX_CHILDREN) }),
        FlowResult: obj({ queue, parent: obj({ id }), children: childIds, verdict: { enum: ['enqueued', 'duplicate'] } }),
        JobStatus: {
          ...obj(
            {
              id,
              queue,
              state: { enum: JOB_STATES },
              attempts: count,
              group: schema('Group'),
              runAt: { type: 'integer' },
              parent: id,
              parentQueue: queue,
              lastError: str,
              payload: str,
              payloadBase64: { type: 'string', contentEncoding: 'base64' },
            },
            true,
          ),
          required: ['id', 'queue', 'state', 'attempts'],
        },
        GroupView: {
          ...obj({ group: schema('Group'), pending: count, active: count, limit: positive, weight: positive, paused: bool, ringed: bool }, true),
          required: ['group', 'pending', 'active', 'paused', 'ringed'],
        },
        GroupChange: { ...obj({ limit: positive, weight: positive, paused: bool }, true), minProperties: 1 },
        QueueView: {
          ...obj(
            {
              queue,
              paused: bool,
              counts: obj(Object.fromEntries(['pending', 'active', 'scheduled', 'dead', 'completed', 'failed'].map((n) => [n, count]))),
              groups: { type: 'array', items: schema('GroupView') },
              cursor: schema('Group'),
            },
            true,
          ),
          required: ['queue', 'paused', 'counts', 'groups'],
        },
        Removed: obj({ id, queue, verdict: { const: 'removed' }, state: { enum: ['pending', 'scheduled', 'dead'] } }),
        Promoted: obj({ id, queue, verdict: { const: 'promoted' } }),
        Rescheduled: obj({ id, queue, verdict: { const: 'rescheduled' }, runAt: { type: 'integer' } }),
        ScheduleRequest: {
          ...obj({ every: str, firstIn: str, payload: str, payloadBase64: { type: 'string', contentEncoding: 'base64' } }, true),
          required: ['every'],
          oneOf: [{ required: ['payload'] }, { required: ['payloadBase64'] }],
        },
        ScheduleVerdict: obj({ queue, name: str, verdict: { enum: ['registered', 'exists', 'cancelled'] } }),
        Schedule: {
          ...obj(
            {
              queue,
              name: str,
              everyMs: { type: 'integer', minimum: 1 },
              nextRunAt: { type: ['integer', 'null'] },
              paused: bool,
              payload: str,
              payloadBase64: { type: 'string', contentEncoding: 'base64' },
            },
            true,
          ),
          required: ['queue', 'name', 'everyMs', 'nextRunAt', 'paused'],
        },
        Schedules: {
          ...obj({ queue, schedules: { type: 'array', items: schema('Schedule') }, cursor: { type: 'string' } }, true),
          required: ['queue', 'schedules'],
        },
        Paused: { ...obj({ queue, paused: bool, note: str }, true), required: ['queue', 'paused'] },
        CronSchedules: obj({
          schedules: {
            type: 'array',
            items: {
              ...obj(
                {
                  name: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,255}$' },
                  cron: str,
                  queue,
                  group: schema('Group'),
                  delay: str,
                  nextFireAt: { type: 'integer' },
                },
                true,
              ),
              required: ['name', 'cron', 'queue', 'nextFireAt'],
            },
          },
        }),
        ProblemCode: { oneOf: PROBLEM_CODES.map((code) => ({ const: code, title: TITLES[code] })) },
        Problem: {
          ...obj({
            type: { type: 'string', pattern: '^urn:emq:problem:[a-z_]+$' },
            code: schema('ProblemCode'),
            title: str,
            status: { type: 'integer' },
            detail: str,
            // extras: the batch item or flow child at fault; wire_mismatch's two versions; each
            // item of a batch Valkey refused in part; the ids to send a flow cut off again with
            index: { type: 'integer', minimum: 0 },
            expected: str,
            found: str,
            results: array({ oneOf: [obj({ id, verdict: schema('Verdict') }), obj({ id, code: schema('ProblemCode') })] }),
            flow: obj({ parent: obj({ id }), children: childIds }),
          }),
          required: ['type', 'code', 'title', 'status', 'detail'],
        },
      },
    },
  };
}

let built: Json | undefined;

/** The document; `prefix`: the path the app is mounted at, if any (its servers entry). */
export function openApi(prefix = ''): Json {
  built ??= build();
  return prefix ? { ...built, servers: [{ url: prefix }] } : built;
}
