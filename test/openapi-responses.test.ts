// Real answers held to the OpenAPI document: the producer app in-process over glide to the test
// Valkey, every route sent what makes each answer the document lists for it (success and every
// problem code), each answer checked by support/openapi.ts's `conforms` (status listed, body
// valid by that status's schema with Ajv, headers listed). What only a failing Valkey path
// answers is made by a connection that throws the typed error the transports throw; a bad
// configuration is the Worker's own (producerFor with no variables). The typed client runs
// through the same checks, its requests held to the document too. The last test fails if any
// documented answer was never met.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createProducerClient } from '../client/index.js';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { producerFor } from '../functions/producer/worker.js';
import type { Connection } from '../shared/connection.js';
import { connectGlide, type GlideConnection } from '../shared/connections/glide.js';
import { AuthError, ConnectionError, InvalidIdError, InvalidPayloadError, ServerError, WireMismatchError, mintId } from '../shared/index.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { conforms, operations, requestConforms, type Exchange } from './support/openapi.js';

const TOKEN = 'openapi-responses-token-0123456789';
const NARROW = 'openapi-narrow-token-0123456789';
const READER = 'openapi-reader-token-0123456789'; // may only read
const WRITER = 'openapi-writer-token-0123456789'; // may only enqueue
const SECRET = 'hook-secret-0123456789abcdef';
const GROUP = 'PRT0KHTOWnGLuC';
const HOOK_Q = freshQueue('oa-hook');
const JAM_Q = freshQueue('oa-jam'); // its pending key is a string: every write to it is refused
const hmacSource = (queue: string) => ({ kind: 'hmac', secrets: [SECRET], queue, signatureHeader: 'X-Sig', idHeader: 'X-Id', encoding: 'hex' });

/** Every answer met, as `KEY status code`, and every problem extra seen. */
const met = new Set<string>();
const extras = new Set<string>();

type App = { fetch: (request: Request) => Response | Promise<Response> };

describe('real answers match the OpenAPI document', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let glide: GlideConnection;
  let admin: Admin;
  let app: ReturnType<typeof createProducerApp>;
  // the Valkey path fails, from the `after`-th call on, with this error
  let fault: { error: () => Error; after: number } | undefined;
  let calls = 0;
  const trip = () => {
    if (fault && calls++ >= fault.after) throw fault.error();
  };

  beforeAll(async () => {
    glide = await connectGlide(valkeyUrl);
    admin = await connectAdmin(valkeyUrl);
    await admin.call('SET', `emq:{${JAM_Q}}:pending`, 'not a sorted set');
    const faulty: Connection = {
      run: async (command) => (trip(), glide.run(command)),
      pipeline: async (commands) => (trip(), glide.pipeline(commands)),
      close: async () => {},
    };
    const config = configFrom({
      EMQ_TOKENS: JSON.stringify([
        { token: TOKEN, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
        { token: NARROW, queues: ['oa-narrow*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
        { token: READER, queues: ['*'], rawPrefixes: true, can: ['read'] },
        { token: WRITER, queues: ['*'], rawPrefixes: true, can: ['enqueue'] },
      ]),
      EMQ_SOURCES: JSON.stringify({
        hook: hmacSource(HOOK_Q),
        jam: hmacSource(JAM_Q),
        std: { kind: 'standard', secrets: [`whsec_${Buffer.alloc(24, 7).toString('base64')}`], queue: HOOK_Q },
      }),
      EMQ_MAX_PAYLOAD_BYTES: '64',
      EMQ_MAX_BATCH_BYTES: '4096',
      EMQ_CRONS: JSON.stringify([
        { name: 'nightly', cron: '0 3 * * *', queue: 'oa-cron', payload: 'p' },
        { name: 'later', cron: '*/5 * * * *', queue: 'oa-narrow-cron', payloadBase64: '/w==', group: GROUP, delay: '30s' },
      ]),
    });
    // a region, so that Emq-Region is sent and held to the document too
    app = createProducerApp({ config: () => config, connection: () => faulty, regionOf: () => 'here' });
  });
  afterAll(async () => {
    await admin?.call('DEL', `emq:{${JAM_Q}}:pending`);
    await glide?.close();
    admin?.close();
  });

  /** Checks an answer to the document and records it as met. */
  async function record(request: Request, res: Response): Promise<Exchange> {
    const answer = await conforms(request, res);
    met.add(`${answer.key} ${answer.status} ${answer.body.code ?? ''}`.trim());
    for (const name of ['index', 'expected', 'found', 'results', 'flow']) if (name in answer.body) extras.add(name);
    return answer;
  }

  // (the request is not cloned: a cancelled read of one branch of a teed body waits for the other)
  const exchange = async (target: App, request: Request) => record(request, await target.fetch(request));

  const send = (
    method: string,
    path: string,
    { token = TOKEN, headers = {}, body, target = app }: { token?: string | null; headers?: Record<string, string>; body?: string; target?: App } = {},
  ) =>
    exchange(
      target,
      new Request(`http://producer${path}`, {
        method,
        headers: { ...(token !== null && { Authorization: `Bearer ${token}` }), ...headers },
        ...(body !== undefined && { body }),
      }),
    );

  /** A POST whose body stream fails part way, as a client that went away: 499 client_closed. */
  const aborted = (path: string, headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }, method = 'POST') => {
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.error(new Error('the client went away'));
      },
    });
    return exchange(app, new Request(`http://producer${path}`, { method, headers, body, duplex: 'half' } as RequestInit));
  };

  /** Sends under a failing Valkey path (from the `after`-th call on). */
  const failing = async <T>(error: () => Error, go: () => Promise<T>, after = 0): Promise<T> => {
    fault = { error, after };
    calls = 0;
    try {
      return await go();
    } finally {
      fault = undefined;
    }
  };

  const FAULTS: Array<[status: number, code: string, error: () => Error]> = [
    [503, 'unavailable', () => new ConnectionError('the test cut the path')],
    [503, 'wire_mismatch', () => new WireMismatchError('echomq:1.0.0', 'echomq:9.0.0')],
    [502, 'upstream_auth', () => new AuthError('the test refused the token')],
    [502, 'internal', () => new ServerError('ERR the test says no')],
    [500, 'internal', () => new Error('a bug the test made')],
  ];
  /** Every way the Valkey path fails, and the Worker with no configuration, for one request. */
  async function pathFailures(go: (target?: App) => Promise<Exchange>) {
    for (const [status, code, error] of FAULTS) {
      const answer = await failing(error, () => go());
      expect([answer.status, answer.body.code]).toEqual([status, code]);
    }
    const misconfigured = await go(producerFor({}));
    expect([misconfigured.status, misconfigured.body.code]).toEqual([500, 'misconfigured']);
  }

  const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');
  const hook = (body: string, headers: Record<string, string> = {}, source = 'hook', target?: App) =>
    send('POST', `/v1/webhooks/${source}`, { token: null, body, headers: { 'X-Sig': sign(body), 'X-Id': mintId(), ...headers }, ...(target && { target }) });

  it('GET /healthz, /openapi.json and /readyz', async () => {
    expect((await send('GET', '/healthz', { token: null })).status).toBe(200);
    expect((await send('GET', '/openapi.json', { token: null })).status).toBe(200);
    expect((await send('GET', '/readyz', { token: null })).status).toBe(200);
    await pathFailures((target) => send('GET', '/readyz', { token: null, ...(target && { target }) }));
  });

  it('POST /v1/queues/{queue}/jobs: each verdict and each refusal', async () => {
    const q = freshQueue('oa-jobs');
    const jobs = (init: Parameters<typeof send>[2] = {}, queue = q) => send('POST', `/v1/queues/${queue}/jobs`, { body: 'x', ...init });
    const id = mintId();
    expect((await jobs({ headers: { 'Emq-Job-Id': id } })).body.verdict).toBe('enqueued');
    expect((await jobs({ headers: { 'Emq-Job-Id': id } })).body.verdict).toBe('duplicate');
    expect((await jobs({ headers: { 'Emq-Delay': '1s', 'Emq-Group': GROUP } })).body.verdict).toBe('scheduled');
    await jobs({ headers: { 'Idempotency-Key': 'k-1' } });
    const refusals: Array<[string, Promise<Exchange>]> = [
      ['unauthorized', jobs({ token: null })],
      ['unauthorized', jobs({ token: 'not-a-token-0123456789' })],
      ['forbidden_queue', jobs({ token: NARROW })],
      ['forbidden_action', jobs({ token: READER })],
      ['invalid_queue', jobs({}, 'emq')],
      ['invalid_id', jobs({ headers: { 'Emq-Job-Id': 'JOB-nope' } })],
      ['invalid_idempotency_key', jobs({ headers: { 'Idempotency-Key': 'k'.repeat(256) } })],
      ['invalid_delay', jobs({ headers: { 'Emq-Delay': '5' } })],
      ['invalid_not_before', jobs({ headers: { 'Emq-Not-Before': 'soon' } })],
      ['invalid_group', jobs({ headers: { 'Emq-Group': 'lane-a' } })],
      ['payload_too_large', jobs({ body: 'x'.repeat(65) })],
      ['idempotency_conflict', jobs({ headers: { 'Idempotency-Key': 'k-1' }, body: 'another payload' })],
      ['conflict', jobs({}, JAM_Q)],
    ];
    for (const [code, answer] of refusals) expect((await answer).body.code).toBe(code);
    expect((await aborted(`/v1/queues/${q}/jobs`)).status).toBe(499);
    expect(
      (
        await failing(
          () => new InvalidPayloadError('the test refused the bytes'),
          () => jobs(),
        )
      ).body.code,
    ).toBe('invalid_payload');
    await pathFailures((target) => jobs(target && { target }));
  });

  it('POST /v1/queues/{queue}/batch: results, and each refusal (with index, and results when Valkey refused some)', async () => {
    const q = freshQueue('oa-batch');
    const batch = (items: unknown, init: Parameters<typeof send>[2] = {}, queue = q) =>
      send('POST', `/v1/queues/${queue}/batch`, { body: typeof items === 'string' ? items : JSON.stringify(items), ...init });
    const ok = await batch([{ payload: 'a' }, { payloadBase64: '/wA=', group: GROUP }, { payload: 'c', delay: '1m' }, { payload: 'd', notBefore: Date.now() }]);
    expect(ok.body.results.map((r: { verdict: string }) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled', 'scheduled']);
    const one = [{ payload: 'x' }];
    const bad = await batch([{ payload: 'x' }, { payload: 'y', delay: 'soon' }]);
    expect([bad.body.code, bad.body.index]).toEqual(['invalid_batch', 1]);
    await batch([{ payload: 'k', idempotencyKey: 'oa-key' }]);
    const conflict = await batch([{ payload: 'other', idempotencyKey: 'oa-key' }]);
    expect([conflict.status, conflict.body.code]).toEqual([422, 'idempotency_conflict']);
    const jammed = await batch(one, {}, JAM_Q);
    expect([jammed.status, jammed.body.code, jammed.body.results.length]).toEqual([409, 'conflict', 1]);
    expect((await batch(one, { token: null })).body.code).toBe('unauthorized');
    expect((await batch(one, { token: NARROW })).body.code).toBe('forbidden_queue');
    expect((await batch(one, { token: READER })).body.code).toBe('forbidden_action');
    expect((await batch(one, {}, 'emq')).body.code).toBe('invalid_queue');
    expect((await batch(`[${'{"payload":"x"},'.repeat(300)}{"payload":"x"}]`)).body.code).toBe('payload_too_large');
    expect((await aborted(`/v1/queues/${q}/batch`)).body.code).toBe('client_closed');
    expect(
      (
        await failing(
          () => new InvalidIdError('the test refused the id'),
          () => batch(one),
        )
      ).body.code,
    ).toBe('invalid_id');
    expect(
      (
        await failing(
          () => new InvalidPayloadError('the test refused the bytes'),
          () => batch(one),
        )
      ).body.code,
    ).toBe('invalid_payload');
    await pathFailures((target) => batch(one, target && { target }));
  });

  it('POST /v1/queues/{queue}/flows: each verdict and each refusal (with index, and flow when cut off)', async () => {
    const q = freshQueue('oa-narrow-flows');
    const flows = (flow: unknown, init: Parameters<typeof send>[2] = {}, queue = q) =>
      send('POST', `/v1/queues/${queue}/flows`, { body: typeof flow === 'string' ? flow : JSON.stringify(flow), ...init });
    const parent = mintId();
    const taken = mintId();
    const simple = { parent: { payload: 'p' }, children: [{ payload: 'c' }] };
    expect((await flows({ parent: { payload: 'p', id: parent }, children: [{ payload: 'c', id: taken }] })).status).toBe(201);
    expect((await flows({ parent: { payload: 'p', id: parent }, children: [{ payload: 'c' }] })).body.verdict).toBe('duplicate');
    const exists = await flows({ parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', id: taken }] });
    expect([exists.status, exists.body.code, exists.body.index]).toEqual([409, 'job_exists', 1]);
    const invalid = await flows({ parent: { payload: 'p' }, children: [{ payload: 'a' }, { payload: 'b', onFailure: 'retry' }] });
    expect([invalid.body.code, invalid.body.index]).toEqual(['invalid_flow', 1]);
    const elsewhere = await flows({ parent: { payload: 'p' }, children: [{ payload: 'a', queue: 'oa-other' }] }, { token: NARROW });
    expect([elsewhere.body.code, elsewhere.body.index]).toEqual(['forbidden_queue', 0]);
    // children in other queues land one by one after the parent is held: cut off there, the problem
    // carries the ids to send again with (the path is cut ever later until the cut falls there:
    // how many calls come first depends on which scripts Valkey has cached)
    const spread = { parent: { payload: 'p' }, children: [{ payload: 'a', queue: freshQueue('oa-narrow-kid') }, { payload: 'b' }] };
    let cut: Exchange | undefined;
    for (let after = 0; after < 10 && !cut?.body.flow; after++) {
      cut = await failing(
        () => new ConnectionError('the test cut the path'),
        () => flows(spread),
        after,
      );
      expect([cut.status, cut.body.code]).toEqual([503, 'unavailable']);
    }
    expect(cut?.body.flow?.children).toHaveLength(2);
    expect((await flows(simple, { token: null })).body.code).toBe('unauthorized');
    expect((await flows(simple, { token: NARROW }, 'oa-wide')).body.code).toBe('forbidden_queue');
    expect((await flows(simple, { token: READER })).body.code).toBe('forbidden_action');
    expect((await flows(simple, {}, 'emq')).body.code).toBe('invalid_queue');
    expect((await flows(simple, {}, JAM_Q)).body.code).toBe('conflict');
    expect((await flows({ parent: { payload: 'p' }, children: Array.from({ length: 300 }, () => ({ payload: 'x' })) })).body.code).toBe('payload_too_large');
    expect((await aborted('/v1/queues/oa-flows-aborted/flows')).body.code).toBe('client_closed');
    expect(
      (
        await failing(
          () => new InvalidIdError('the test refused the id'),
          () => flows(simple),
        )
      ).body.code,
    ).toBe('invalid_id');
    expect(
      (
        await failing(
          () => new InvalidPayloadError('the test refused the bytes'),
          () => flows(simple),
        )
      ).body.code,
    ).toBe('invalid_payload');
    await pathFailures((target) => flows(simple, target && { target }));
  });

  it('GET /v1/queues/{queue}/jobs/{id}: the job, and each refusal', async () => {
    const q = freshQueue('oa-status');
    const id = mintId();
    await send('POST', `/v1/queues/${q}/jobs`, { body: 'x', headers: { 'Emq-Job-Id': id } });
    const status = (init: Parameters<typeof send>[2] = {}, queue = q, job = id) => send('GET', `/v1/queues/${queue}/jobs/${job}`, init);
    expect((await status()).body).toEqual({ id, queue: q, state: 'pending', attempts: 0 });
    expect((await status({}, q, mintId())).body.code).toBe('not_found');
    expect((await status({}, q, 'JOB-nope')).body.code).toBe('invalid_id');
    expect((await status({}, 'emq')).body.code).toBe('invalid_queue');
    expect((await status({ token: null })).body.code).toBe('unauthorized');
    expect((await status({ token: NARROW })).body.code).toBe('forbidden_queue');
    expect((await status({ token: WRITER })).body.code).toBe('forbidden_action');
    await pathFailures((target) => status(target && { target }));
  });

  it('POST /v1/webhooks/{source}: each verdict and each refusal', async () => {
    const body = `{"n":"${mintId()}"}`;
    expect((await hook(body)).status).toBe(201);
    expect((await hook(body)).body.verdict).toBe('duplicate');
    expect((await hook(body, { 'X-Sig': sign('another body') })).body.code).toBe('invalid_signature');
    expect((await hook(body, {}, 'nowhere')).body.code).toBe('invalid_signature');
    const stale = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1000000000', 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
    expect((await hook(body, stale, 'std')).body.code).toBe('invalid_signature'); // answered as any signature refusal
    const unnamed = await send('POST', '/v1/webhooks/hook', { token: null, body, headers: { 'X-Sig': sign(body) } });
    expect(unnamed.body.code).toBe('invalid_delivery');
    expect((await hook('x'.repeat(65))).body.code).toBe('payload_too_large');
    expect((await aborted('/v1/webhooks/hook', {})).body.code).toBe('client_closed');
    expect((await hook(body, {}, 'jam')).body.code).toBe('conflict');
    await pathFailures((target) => hook(`{"n":"${mintId()}"}`, {}, 'hook', target));
  });

  it('GET /v1/schedules: the table a token may see, and each refusal', async () => {
    const all = await send('GET', '/v1/schedules');
    expect(all.body.schedules.map((s: { name: string }) => s.name)).toEqual(['nightly', 'later']);
    expect((await send('GET', '/v1/schedules', { token: NARROW })).body.schedules).toMatchObject([{ name: 'later', group: GROUP, delay: '30s' }]);
    expect((await send('GET', '/v1/schedules', { token: null })).body.code).toBe('unauthorized');
    expect((await send('GET', '/v1/schedules', { token: WRITER })).body.code).toBe('forbidden_action');
    const misconfigured = await send('GET', '/v1/schedules', { target: producerFor({}) });
    expect([misconfigured.status, misconfigured.body.code]).toEqual([500, 'misconfigured']);
  });

  it('another path answers 404 not_found, another method on /v1/* 405 not_allowed, both problems', async () => {
    expect((await send('GET', '/nowhere', { token: null })).body.code).toBe('not_found');
    expect((await send('PUT', `/v1/queues/${freshQueue('oa')}/jobs`, { body: 'x' })).body.code).toBe('not_allowed');
  });

  it("the typed client's requests and its answers match the document", async () => {
    const q = freshQueue('oa-client');
    const client = createProducerClient({
      url: 'http://producer',
      token: TOKEN,
      retries: 0,
      nodeId: 7,
      fetch: async (input, init) => {
        const request = new Request(input as string, init);
        await requestConforms(request.clone());
        const answer = await app.fetch(request);
        await record(request, answer.clone());
        return answer;
      },
    });
    const { id } = await client.enqueue(q, 'hello', { group: GROUP, delay: 1000 });
    expect((await client.enqueue(q, new Uint8Array([0xff]), { id, notBefore: new Date() })).verdict).toBe('duplicate');
    const many = await client.enqueueMany(q, [
      { payload: 'a' },
      { payload: new Uint8Array([0xff]), group: GROUP },
      { payload: 'c', notBefore: Date.now() + 60_000 },
    ]);
    expect(many.map((r) => r.verdict)).toEqual(['enqueued', 'enqueued', 'scheduled']);
    const flow = await client.flow(q, { parent: { payload: 'p' }, children: [{ payload: 'c' }, { payload: new Uint8Array([0xff]), onFailure: 'ignore' }] });
    expect(flow.children).toHaveLength(2);
    expect((await client.status(q, flow.parent.id))?.state).toBe('awaiting_children');
    expect(await client.status(q, mintId())).toBeNull();

    // the control calls and the repeatables, each request and answer held to the document
    const later = await client.enqueue(q, new Uint8Array([0xff, 0]), { group: GROUP, delay: '1h' });
    expect(await client.job(q, later.id, { payload: true })).toMatchObject({ state: 'scheduled', group: GROUP, payloadBase64: '/wA=' });
    expect((await client.reschedule(q, later.id, { notBefore: new Date(Date.now() + 7_200_000) }))?.verdict).toBe('rescheduled');
    expect((await client.reschedule(q, later.id, { delay: 60_000 }))?.verdict).toBe('rescheduled');
    expect((await client.promote(q, later.id))?.verdict).toBe('promoted');
    expect((await client.queue(q, { count: 5 })).groups.map((g) => g.group)).toEqual([GROUP]);
    expect((await client.setGroup(q, GROUP, { limit: 2 })).limit).toBe(2);
    expect((await client.group(q, GROUP)).pending).toBe(2);
    expect((await client.pause(q)).paused).toBe(true);
    expect((await client.resume(q)).paused).toBe(false);
    expect((await client.remove(q, later.id, { idempotencyKey: 'k-9' }))?.verdict).toBe('removed');
    expect(await client.remove(q, later.id)).toBeNull();
    expect((await client.registerSchedule(q, 'nightly', { every: '1h', template: new Uint8Array([0xff, 1]), firstIn: 1000 })).verdict).toBe('registered');
    expect((await client.schedules(q, { count: 10 })).schedules.map((s) => s.name)).toEqual(['nightly']);
    expect(await client.schedule(q, 'nightly', { payload: true })).toMatchObject({ everyMs: 3_600_000, payloadBase64: '/wE=' });
    expect((await client.pauseSchedule(q, 'nightly'))?.paused).toBe(true);
    expect((await client.resumeSchedule(q, 'nightly'))?.paused).toBe(false);
    expect((await client.runScheduleNow(q, 'nightly'))?.name).toBe('nightly');
    expect((await client.cancelSchedule(q, 'nightly'))?.verdict).toBe('cancelled');
    expect(await client.schedule(q, 'nightly')).toBeNull();
    expect(Array.isArray(await client.crons())).toBe(true);
  });

  it('the control routes and the queue and group reads: each answer and each refusal', async () => {
    const q = freshQueue('oa-ctl');
    const later = (id = mintId()) =>
      send('POST', `/v1/queues/${q}/jobs`, { body: 'x', headers: { 'Emq-Job-Id': id, 'Emq-Delay': '1h', 'Emq-Group': GROUP } }).then(() => id);
    const codeOf = async (answer: Promise<Exchange>) => (await answer).body.code;
    // the refusals every /v1/queues route shares, and the Valkey path's failures
    const common = async (method: string, path: (queue: string) => string, init: Parameters<typeof send>[2] = {}, only: string = WRITER) => {
      expect(await codeOf(send(method, path(q), { ...init, token: null }))).toBe('unauthorized');
      expect(await codeOf(send(method, path(q), { ...init, token: only === WRITER && method !== 'GET' ? READER : WRITER }))).toBe('forbidden_action');
      expect(await codeOf(send(method, path(q), { ...init, token: NARROW }))).toBe('forbidden_queue');
      expect(await codeOf(send(method, path('emq'), init))).toBe('invalid_queue');
      await pathFailures((target) => send(method, path(q), { ...init, ...(target && { target }) }));
    };
    const job = (id: string) => (queue: string) => `/v1/queues/${queue}/jobs/${id}`;

    // GET a job with its payload; DELETE, PATCH, promote
    const id = await later();
    expect((await send('GET', `/v1/queues/${q}/jobs/${id}?payload=1`)).body).toMatchObject({ id, state: 'scheduled', group: GROUP, payload: 'x' });
    const moved = await send('PATCH', job(id)(q), { headers: { 'Emq-Delay': '2h' } });
    expect(moved.body.verdict).toBe('rescheduled');
    expect(await codeOf(send('PATCH', job(id)(q), { headers: { 'Emq-Delay': 'soon' } }))).toBe('invalid_delay');
    expect(await codeOf(send('PATCH', job(id)(q), { headers: { 'Emq-Not-Before': 'soon' } }))).toBe('invalid_not_before');
    expect(await codeOf(send('PATCH', job(mintId())(q), { headers: { 'Emq-Delay': '1m' } }))).toBe('not_found');
    expect(await codeOf(send('PATCH', job('JOB-nope')(q), { headers: { 'Emq-Delay': '1m' } }))).toBe('invalid_id');
    await common('PATCH', job(id), { headers: { 'Emq-Delay': '1m' } });
    expect((await send('POST', `${job(id)(q)}/promote`)).body.verdict).toBe('promoted');
    expect(await codeOf(send('POST', `${job(id)(q)}/promote`))).toBe('not_scheduled');
    expect(await codeOf(send('PATCH', job(id)(q), { headers: { 'Emq-Delay': '1m' } }))).toBe('not_scheduled');
    expect(await codeOf(send('POST', `${job(mintId())(q)}/promote`))).toBe('not_found');
    expect(await codeOf(send('POST', `${job('JOB-nope')(q)}/promote`))).toBe('invalid_id');
    await common('POST', (queue) => `${job(id)(queue)}/promote`);
    expect((await send('DELETE', job(id)(q))).body).toEqual({ id, queue: q, verdict: 'removed', state: 'pending' });
    expect(await codeOf(send('DELETE', job(id)(q)))).toBe('not_found');
    expect(await codeOf(send('DELETE', job('JOB-nope')(q)))).toBe('invalid_id');
    expect(await codeOf(send('DELETE', job(id)(q), { headers: { 'Idempotency-Key': 'k'.repeat(256) } }))).toBe('invalid_idempotency_key');
    const claimed = await send('POST', `/v1/queues/${q}/jobs`, { body: 'busy' });
    await admin.call('EVAL', "return redis.call('ZADD', KEYS[1], 1, ARGV[1])", '1', `emq:{${q}}:active`, claimed.body.id as string);
    expect(await codeOf(send('DELETE', job(claimed.body.id as string)(q)))).toBe('job_active');
    const locked = await later();
    await admin.call('SET', `emq:{${q}}:job:${locked}:lock`, 'worker-1');
    expect(await codeOf(send('DELETE', job(locked)(q)))).toBe('job_locked');
    const flow = await send('POST', `/v1/queues/${q}/flows`, { body: JSON.stringify({ parent: { payload: 'p' }, children: [{ payload: 'c' }] }) });
    expect(await codeOf(send('DELETE', job((flow.body.parent as { id: string }).id)(q)))).toBe('job_in_flow');
    await common('DELETE', job(await later()));

    // the queue: a page, a bad count or cursor; pause and resume
    await send('POST', `/v1/queues/${q}/jobs`, { body: 'laned', headers: { 'Emq-Group': GROUP } });
    const page = await send('GET', `/v1/queues/${q}?count=1`);
    expect(page.body).toMatchObject({ queue: q, paused: false, groups: [{ group: GROUP }] });
    expect(await codeOf(send('GET', `/v1/queues/${q}?count=1001`))).toBe('invalid_query');
    expect(await codeOf(send('GET', `/v1/queues/${q}?cursor=lane-a`))).toBe('invalid_group');
    await common('GET', (queue) => `/v1/queues/${queue}`);
    expect((await send('POST', `/v1/queues/${q}/pause`)).body).toMatchObject({ queue: q, paused: true });
    expect((await send('POST', `/v1/queues/${q}/resume`)).body).toEqual({ queue: q, paused: false });
    await common('POST', (queue) => `/v1/queues/${queue}/pause`);
    await common('POST', (queue) => `/v1/queues/${queue}/resume`);

    // a group: read it, set it, and each refusal of a setting
    const group = (queue: string) => `/v1/queues/${queue}/groups/${GROUP}`;
    expect((await send('GET', group(q))).body).toMatchObject({ group: GROUP, paused: false });
    expect(await codeOf(send('GET', `/v1/queues/${q}/groups/lane-a`))).toBe('invalid_group');
    await common('GET', group);
    const json = { 'Content-Type': 'application/json' };
    expect((await send('PUT', group(q), { body: '{"limit":2,"weight":3,"paused":true}', headers: json })).body).toMatchObject({
      limit: 2,
      weight: 3,
      paused: true,
    });
    expect(await codeOf(send('PUT', group(q), { body: '{"limit":0}', headers: json }))).toBe('invalid_body');
    expect(await codeOf(send('PUT', `/v1/queues/${q}/groups/lane-a`, { body: '{"limit":1}', headers: json }))).toBe('invalid_group');
    expect(await codeOf(send('PUT', group(q), { body: `{"limit":1,"pad":"${'x'.repeat(1024)}"}`, headers: json }))).toBe('payload_too_large');
    expect((await aborted(group(q), { Authorization: `Bearer ${TOKEN}` }, 'PUT')).body.code).toBe('client_closed');
    await common('PUT', group, { body: '{"paused":false}', headers: json });
  });

  it("the library's repeatables: each answer and each refusal", async () => {
    const q = freshQueue('oa-sch');
    const one = (queue: string, name = 'nightly') => `/v1/queues/${queue}/schedules/${name}`;
    const json = { 'Content-Type': 'application/json' };
    const put = (body: unknown, queue = q, init: Parameters<typeof send>[2] = {}) =>
      send('PUT', one(queue), { body: typeof body === 'string' ? body : JSON.stringify(body), headers: json, ...init });
    const codeOf = async (answer: Promise<Exchange>) => (await answer).body.code;
    const common = async (method: string, path: (queue: string) => string, init: Parameters<typeof send>[2] = {}) => {
      expect(await codeOf(send(method, path(q), { ...init, token: null }))).toBe('unauthorized');
      expect(await codeOf(send(method, path(q), { ...init, token: method === 'GET' ? WRITER : READER }))).toBe('forbidden_action');
      expect(await codeOf(send(method, path(q), { ...init, token: NARROW }))).toBe('forbidden_queue');
      expect(await codeOf(send(method, path('emq'), init))).toBe('invalid_queue');
      await pathFailures((target) => send(method, path(q), { ...init, ...(target && { target }) }));
    };
    expect((await put({ every: '1h', payload: 'x' })).status).toBe(201);
    expect((await put({ every: '1h', payload: 'x' })).body.verdict).toBe('exists');
    expect(await codeOf(put({ every: '2h', payload: 'x' }))).toBe('schedule_exists');
    expect(await codeOf(put({ every: 'soon', payload: 'x' }))).toBe('invalid_body');
    expect(await codeOf(send('PUT', one(q, 'a%3Ab'), { body: '{"every":"1h","payload":"x"}', headers: json }))).toBe('invalid_name');
    expect(await codeOf(put({ every: '1h', payload: 'x'.repeat(65) }))).toBe('payload_too_large');
    expect((await aborted(one(q), { Authorization: `Bearer ${TOKEN}` }, 'PUT')).body.code).toBe('client_closed');
    await common('PUT', (queue) => one(queue), { body: '{"every":"1h","payload":"x"}', headers: json });
    expect((await send('GET', `${one(q)}?payload=1`)).body).toMatchObject({ name: 'nightly', everyMs: 3_600_000, payload: 'x' });
    expect(await codeOf(send('GET', one(q, 'other')))).toBe('not_found');
    expect(await codeOf(send('GET', one(q, 'a%3Ab')))).toBe('invalid_name');
    await common('GET', (queue) => one(queue));
    expect((await send('GET', `/v1/queues/${q}/schedules?count=10`)).body.schedules).toHaveLength(1);
    expect(await codeOf(send('GET', `/v1/queues/${q}/schedules?cursor=x`))).toBe('invalid_query');
    await common('GET', (queue) => `/v1/queues/${queue}/schedules`);
    for (const move of ['pause', 'resume', 'run-now']) {
      expect((await send('POST', `${one(q)}/${move}`)).body).toMatchObject({ name: 'nightly' });
      expect(await codeOf(send('POST', `${one(q, 'other')}/${move}`))).toBe('not_found');
      expect(await codeOf(send('POST', `${one(q, 'a%3Ab')}/${move}`))).toBe('invalid_name');
      await common('POST', (queue) => `${one(queue)}/${move}`);
    }
    expect((await send('DELETE', one(q))).body.verdict).toBe('cancelled');
    expect(await codeOf(send('DELETE', one(q)))).toBe('not_found');
    expect(await codeOf(send('DELETE', one(q, 'a%3Ab')))).toBe('invalid_name');
    await common('DELETE', (queue) => one(queue));
  });

  it('every answer the document lists was met: each success status, and each problem code at its status', () => {
    const listed: string[] = [];
    for (const { key, op } of operations) {
      for (const [status, response] of Object.entries(
        op.responses as Record<string, { content: Record<string, { schema: { properties?: { code: { enum: string[] } } } }> }>,
      )) {
        const codes = response.content['application/problem+json']?.schema.properties?.code.enum;
        if (codes) listed.push(...codes.map((code) => `${key} ${status} ${code}`));
        else listed.push(`${key} ${status}`);
      }
    }
    expect(listed.filter((answer) => !met.has(answer))).toEqual([]);
    expect([...extras].sort()).toEqual(['expected', 'flow', 'found', 'index', 'results']);
  });
});
