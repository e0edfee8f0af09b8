// The Worker's request logs, request ids and Analytics Engine data points, inside workerd,
// against the real gateway process and Valkey (test/workers/global-setup.ts). One request id
// follows a job from the Worker's log line, through the REST call, to the gateway's log line
// (read from the gateway process's stdout through the setup's /gateway-log). miniflare does
// bind Analytics Engine datasets, but its local dataset's writeDataPoint discards what it is
// given, so the data points are read from a recording binding the Worker is given in its env.
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { producerFor } from '../../functions/producer/worker.js';
import { mintId } from '../../shared/ids.js';

const gw = inject('gateway');
const TOKEN = 'obs-caller-token-0123456789abcdef';
const MARK = `PAYLOAD-MARK-${Math.random().toString(36).slice(2)}`;
type Point = { indexes?: string[]; blobs?: string[]; doubles?: number[] };
const points: Point[] = [];
const dataset = { writeDataPoint: (p: Point) => void points.push(structuredClone(p)) };
const vars = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
};
const bound = { ...vars, EMQ_ANALYTICS: dataset };

let n = 0;
const fresh = () => `wobs-${Date.now().toString(36)}-${(n++).toString(36)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function send(env: Record<string, unknown>, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${TOKEN}`);
  const app = producerFor(env as never);
  return Promise.resolve(app.fetch(new Request(`http://producer${path}`, { ...init, headers }), env));
}

/** What the Worker logged while `run` ran, each line parsed (every line must be JSON). */
async function logged(run: () => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const spy = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    await run();
    return spy.mock.calls.map((args) => {
      expect(args).toHaveLength(1);
      return JSON.parse(args[0] as string) as Record<string, unknown>;
    });
  } finally {
    spy.mockRestore();
  }
}

/** The gateway's log lines caused by the Worker's request `id` (its callerRequestId; waiting for its writes to land). */
async function gatewayLines(id: string, want: (l: Record<string, unknown>) => boolean): Promise<Array<Record<string, unknown>>> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(50)) {
    const text = await (await fetch(inject('gatewayLogUrl'))).text();
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.callerRequestId === id);
    if (lines.some(want)) return lines;
  }
  throw new Error(`no gateway line for ${id}`);
}

afterEach(() => {
  points.length = 0;
});

describe('the Worker: one request id from the Worker to the gateway, logs, data points', () => {
  it("the response and the Worker's line carry its minted id (the caller's logged beside it), the gateway's lines carry it as callerRequestId; one trace", async () => {
    const q = fresh();
    const given = `wk-${mintId()}`;
    const traceId = crypto.getRandomValues(new Uint8Array(16)).reduce((s, b) => s + b.toString(16).padStart(2, '0'), '');
    const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
    let res!: Response;
    const lines = await logged(async () => {
      res = await send(bound, `/v1/queues/${q}/jobs`, { method: 'POST', body: MARK, headers: { 'X-Request-Id': given, traceparent } });
    });
    expect(res.status).toBe(201);
    const id = res.headers.get('X-Request-Id')!;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      app: 'worker',
      msg: 'request',
      id,
      callerRequestId: given,
      trace: traceId,
      method: 'POST',
      route: '/v1/queues/:queue/jobs',
      status: 201,
      queue: q,
      verdict: 'enqueued',
      bytes: MARK.length,
    });
    const theirs = await gatewayLines(id, (l) => l.status === 200);
    expect(theirs.find((l) => l.status === 200)).toMatchObject({ app: 'gateway', queue: q, verdict: 'enqueued', trace: traceId });
    const all = JSON.stringify(lines) + (await (await fetch(inject('gatewayLogUrl'))).text());
    for (const secret of [MARK, TOKEN, gw.producer, gw.admin]) expect(all).not.toContain(secret);
  });

  it('with an X-Request-Id too long to log, the Worker mints its id, logs no caller id, and sends its id on', async () => {
    const q = fresh();
    let res!: Response;
    const lines = await logged(async () => {
      res = await send(bound, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { 'X-Request-Id': 'x'.repeat(200) } });
    });
    expect(res.status).toBe(201);
    const id = res.headers.get('X-Request-Id')!;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(lines[0]!.id).toBe(id);
    expect(lines[0]!.callerRequestId).toBeUndefined();
    expect(lines[0]!.trace).toBeUndefined();
    await gatewayLines(id, (l) => l.status === 200 && l.queue === q);
  });

  it('with EMQ_ANALYTICS bound: a request point and a point per script verdict', async () => {
    const q = fresh();
    const [a, b] = [mintId(), mintId()];
    expect((await send(bound, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'a', headers: { 'Emq-Job-Id': a } })).status).toBe(201);
    expect(points).toHaveLength(2);
    expect(points[0]).toEqual({
      indexes: ['/v1/queues/:queue/jobs'],
      blobs: ['request', '', 'POST', '/v1/queues/:queue/jobs', 'enqueued', ''],
      doubles: [201, points[0]!.doubles![1], 1, 1, 0, 0, 0, 0, 0],
    });
    expect(points[1]).toEqual({
      indexes: ['/v1/queues/:queue/jobs'],
      blobs: ['script', '', 'enqueue', 'enqueued', '', '/v1/queues/:queue/jobs'],
      doubles: [1],
    });

    // the schedule script once, so the batch finds it cached (no NOSCRIPT round in its counts)
    expect((await send(bound, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'w', headers: { 'Emq-Delay': '1h' } })).status).toBe(201);
    points.length = 0;
    const batch = JSON.stringify([
      { id: a, payload: 'a' },
      { id: b, payload: 'b' },
      { payload: 'c', delay: '1h' },
    ]);
    const res = await send({ ...bound, EMQ_REGION: 'eu-west' }, `/v1/queues/${q}/batch`, { method: 'POST', body: batch });
    expect(res.status).toBe(200);
    const [request, ...scripts] = points;
    expect(request!.blobs).toEqual(['request', 'eu-west', 'POST', '/v1/queues/:queue/batch', 'mixed', '']);
    // status, ms, body bytes, script calls, NOSCRIPT, transient, REST retries, pipelines, pipelined commands
    expect(request!.doubles!.filter((_, i) => i !== 1)).toEqual([200, batch.length, 3, 0, 0, 0, 1, 3]);
    expect(scripts.map((p) => [...p.blobs!.slice(2, 5), p.doubles![0]]).sort()).toEqual([
      ['enqueue', 'duplicate', '', 1],
      ['enqueue', 'enqueued', '', 1],
      ['schedule', 'scheduled', '', 1],
    ]);
    for (const p of points) expect(JSON.stringify(p)).not.toContain(q); // no queue name, no id
  });

  it('unbound: no data points; a refusal is logged with its problem code; EMQ_LOG=off logs nothing', async () => {
    const q = fresh();
    const lines = await logged(async () => {
      expect((await send(vars, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'x' })).status).toBe(201);
      expect((await send(vars, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { 'Emq-Job-Id': 'nope' } })).status).toBe(400);
    });
    expect(points).toHaveLength(0);
    expect(lines.map((l) => [l.status, l.code])).toEqual([
      [201, undefined],
      [400, 'invalid_id'],
    ]);
    const quiet = await logged(async () => {
      expect((await send({ ...vars, EMQ_LOG: 'off' }, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'x' })).status).toBe(201);
    });
    expect(quiet).toEqual([]);
  });

  it('a bad EMQ_LOG, or EMQ_ANALYTICS as a var, answers 500 misconfigured naming it', async () => {
    const q = fresh();
    for (const [name, env] of [
      ['EMQ_LOG', { ...vars, EMQ_LOG: 'loud' }],
      ['EMQ_ANALYTICS', { ...vars, EMQ_ANALYTICS: 'not-a-binding' }],
    ] as const) {
      const res = await send(env, `/v1/queues/${q}/jobs`, { method: 'POST', body: 'x' });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ code: 'misconfigured' });
      expect(text).toContain(name);
    }
  });
});
