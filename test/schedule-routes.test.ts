// The library's repeatables over HTTP (issue 26): `emq producer` over glide and over REST through
// a real gateway (a control token), against every test server. The library's own Pump sweep
// (test/support/library-repeat.ts: its scripts and order of steps) runs against what the routes
// registered: two sweeps a period apart make two flat jobs with distinct, increasing ids and the
// template byte for byte; paused fires nothing; run-now fires on the next sweep; cancelled is
// gone (Repeat.count 0). Every refusal writes nothing.
import { describe, expect, it } from 'vitest';
import { freshQueue, snapshot } from './support/admin.js';
import { libraryRepeat } from './support/library-repeat.js';
import { producerOver, transports } from './support/producer-over.js';

const ALL = 'schedules-all-token-0123456789ab';
const READER = 'schedules-reader-token-01234567';
const TOKENS = JSON.stringify([
  { token: ALL, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
  { token: READER, queues: ['*'], rawPrefixes: true, can: ['read'] },
]);
const HOUR = 3_600_000;

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

describe.each(transports())('the schedule routes: $name', (transport) => {
  const over = producerOver(transport, { EMQ_TOKENS: TOKENS, EMQ_MAX_PAYLOAD_BYTES: '1024' });

  const send = async (method: string, path: string, body?: unknown, token = ALL): Promise<Reply> => {
    const res = await fetch(`${over.producer.url}${path}`, {
      method,
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const refused = async (q: string, status: number, code: string, request: () => Promise<Reply>) => {
    const before = await snapshot(over.admin, q);
    const answer = await request();
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
    expect(await snapshot(over.admin, q)).toEqual(before);
  };

  it("registered over HTTP, the library's Pump fires it each period: flat jobs, increasing ids, the template byte for byte", async () => {
    const q = freshQueue('sch-fire');
    const pump = libraryRepeat(over.admin, q);
    const template = Buffer.from([0, 0xff, 0x80, 10, 0x41]);
    const put = await send('PUT', `/v1/queues/${q}/schedules/nightly`, { every: '1h', payloadBase64: template.toString('base64') });
    expect(put).toEqual({ status: 201, body: { queue: q, name: 'nightly', verdict: 'registered' } });
    const view = await send('GET', `/v1/queues/${q}/schedules/nightly?payload=1`);
    expect(view.body).toMatchObject({ name: 'nightly', everyMs: HOUR, paused: false, payloadBase64: template.toString('base64') });
    const first = Number(view.body.nextRunAt);
    expect(Math.abs(first - Date.now())).toBeLessThan(10_000);
    const one = await pump.sweep(first);
    const two = await pump.sweep(first + HOUR);
    expect(await pump.sweep(first + HOUR)).toEqual([]);
    const ids = [...one, ...two].map((f) => f.id);
    expect(ids).toHaveLength(2);
    expect(ids[0]! < ids[1]!).toBe(true);
    for (const id of ids) {
      expect(await over.admin.row(q, id)).toEqual({ state: 'pending', attempts: '0', payload: template.toString('latin1') });
      expect(Number(await over.admin.text('ZSCORE', `emq:{${q}}:pending`, id))).toBe(0);
    }
    // the same registration again is exists; another period or template is 409 and writes nothing
    expect((await send('PUT', `/v1/queues/${q}/schedules/nightly`, { every: '60m', payloadBase64: template.toString('base64') })).body.verdict).toBe('exists');
    await refused(q, 409, 'schedule_exists', () =>
      send('PUT', `/v1/queues/${q}/schedules/nightly`, { every: '2h', payloadBase64: template.toString('base64') }),
    );
  });

  it('pause: nothing fires; resume: due at the next period; run-now: fired by the next sweep; DELETE: gone', async () => {
    const q = freshQueue('sch-move');
    const pump = libraryRepeat(over.admin, q);
    expect((await send('PUT', `/v1/queues/${q}/schedules/tick`, { every: '1m', payload: 'tick', firstIn: '30s' })).status).toBe(201);
    const paused = await send('POST', `/v1/queues/${q}/schedules/tick/pause`);
    expect(paused.body).toMatchObject({ name: 'tick', paused: true, nextRunAt: null });
    expect(await pump.sweep(Date.now() + 100 * 60_000)).toEqual([]);
    const resumed = await send('POST', `/v1/queues/${q}/schedules/tick/resume`);
    expect(resumed.body).toMatchObject({ paused: false });
    expect(Number(resumed.body.nextRunAt)).toBeGreaterThan(Date.now() - 1_000);
    const now = await send('POST', `/v1/queues/${q}/schedules/tick/run-now`);
    expect(Number(now.body.nextRunAt)).toBeLessThanOrEqual(Date.now());
    expect(await pump.sweep(Date.now())).toHaveLength(1);
    const list = await send('GET', `/v1/queues/${q}/schedules`);
    expect(list.body.schedules).toEqual([expect.objectContaining({ queue: q, name: 'tick', everyMs: 60_000, paused: false })]);
    expect(await send('DELETE', `/v1/queues/${q}/schedules/tick`)).toEqual({ status: 200, body: { queue: q, name: 'tick', verdict: 'cancelled' } });
    expect(await pump.count()).toBe(0);
    await refused(q, 404, 'not_found', () => send('DELETE', `/v1/queues/${q}/schedules/tick`));
    await refused(q, 404, 'not_found', () => send('POST', `/v1/queues/${q}/schedules/tick/pause`));
    expect((await send('GET', `/v1/queues/${q}/schedules/tick`)).status).toBe(404);
  });

  it('refusals write nothing: a bad name, body, period, template; a token without control', async () => {
    const q = freshQueue('sch-bad');
    const put =
      (body: unknown, name = 'n') =>
      () =>
        send('PUT', `/v1/queues/${q}/schedules/${name}`, body);
    await refused(q, 400, 'invalid_name', put({ every: '1h', payload: 'x' }, 'a%3Ab'));
    for (const body of [
      {},
      { every: '1h' },
      { every: 'soon', payload: 'x' },
      { every: '0s', payload: 'x' },
      { every: 3600, payload: 'x' },
      { every: '1h', payload: 'x', colour: 'red' },
      { every: '1h', payloadBase64: '!!' },
      '[1]',
    ]) {
      await refused(q, 400, 'invalid_body', put(body));
    }
    await refused(q, 400, 'invalid_body', put({ every: '1h', payload: 'x', firstIn: '-1s' }));
    await refused(q, 413, 'payload_too_large', put({ every: '1h', payload: 'x'.repeat(1025) }));
    await refused(q, 403, 'forbidden_action', () => send('PUT', `/v1/queues/${q}/schedules/n`, { every: '1h', payload: 'x' }, READER));
    expect((await send('GET', `/v1/queues/${q}/schedules`, undefined, READER)).body).toEqual({ queue: q, schedules: [] });
    await refused(q, 400, 'invalid_query', () => send('GET', `/v1/queues/${q}/schedules?count=0`));
    // found by the control fuzz: a 20-digit cursor past 2^64 - 1 reached ZSCAN, whose error answered 502 internal
    for (const cursor of ['18446744073709551616', '99999999999999999999']) {
      await refused(q, 400, 'invalid_query', () => send('GET', `/v1/queues/${q}/schedules?cursor=${cursor}`));
    }
    expect((await send('GET', `/v1/queues/${q}/schedules?cursor=18446744073709551615`)).status).toBe(200);
  });
});
