// Cron schedules fired by the Worker itself, inside workerd: its `scheduled` handler (the
// default export's, as Cloudflare calls it) against the real gateway process and a real Valkey
// (test/workers/global-setup.ts). One trigger makes exactly one job in the right queue with the
// exact payload (read back through the gateway's admin token), flat, in its lane, or due
// `delay` after the fire's minute; the same minute fired again is a duplicate, logged as one;
// a schedule homed in another region is left to it; a bad EMQ_CRONS rejects the trigger and
// answers every request 500 misconfigured, naming the variable, writing nothing.
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import worker, { producerFor } from '../../functions/producer/worker.js';
import { gatewayAdmin } from './gateway-admin.js';

const gw = inject('gateway');
const admin = gatewayAdmin(gw);
const TOKEN = 'crons-caller-token-0123456789';
const NARROW = 'crons-narrow-token-0123456789';
const GROUP = 'PRT0KHTOWnGLuC';
const text = (b: unknown) => new TextDecoder().decode(b as Uint8Array);
let n = 0;
const fresh = (label = 'wc') => `${label}-${Date.now().toString(36)}-${(n++).toString(36)}`;
const [FLAT, LANED, LATER, FAR, NARROWQ] = [fresh(), fresh(), fresh(), `far.${fresh()}`, `narrow.${fresh()}`];
const BYTES = [0, 1, 2, 254, 255];

const env = {
  EMQ_REST_URL: gw.url,
  EMQ_REST_TOKEN: gw.producer,
  EMQ_TOKENS: JSON.stringify([
    { token: TOKEN, queues: ['*'], rawPrefixes: true },
    { token: NARROW, queues: ['narrow.*'], can: ['read'] },
  ]),
  // this Worker is "here"; queues under far.* are homed "there", whose gateway is never reached
  EMQ_REGION: 'here',
  EMQ_HOME_REGIONS: JSON.stringify({ 'far.*': 'there' }),
  EMQ_REGION_URLS: JSON.stringify({ there: 'http://127.0.0.1:1' }),
  EMQ_CRONS: JSON.stringify([
    { name: 'flat', cron: '* * * * *', queue: FLAT, payloadBase64: btoa(String.fromCharCode(...BYTES)) },
    { name: 'laned', cron: '*/5 * * * *', queue: LANED, payload: 'into a lane ✓', group: GROUP },
    { name: 'later', cron: '*/5 * * * *', queue: LATER, payload: 'in 90 s', delay: '90s' },
    { name: 'far', cron: '*/5 * * * *', queue: FAR, payload: 'homed there' },
    { name: 'narrow', cron: '0 3 * * *', queue: NARROWQ, payload: 'a tenant of its own' },
  ]),
};
const MINUTE = Date.UTC(2026, 4, 3, 10, 5); // a fire of every schedule but the nightly one
const keys = async (q: string) => ((await admin('KEYS', `emq:{${q}}:*`)) as Uint8Array[]).map(text).sort();

afterEach(() => vi.restoreAllMocks());

describe('the Worker fires its cron schedules (scheduled handler)', () => {
  it('one trigger makes exactly one job per matching schedule, in its queue, with its exact payload; a retry of that minute is a duplicate', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const controller = { cron: '* * * * *', scheduledTime: MINUTE, noRetry() {} };
    await worker.scheduled(controller, env);
    const [id] = (await admin('ZRANGE', `emq:{${FLAT}}:pending`, '0', '-1')) as Uint8Array[];
    expect(await admin('ZCARD', `emq:{${FLAT}}:pending`)).toBe(1);
    expect([...((await admin('HGET', `emq:{${FLAT}}:job:${text(id)}`, 'payload')) as Uint8Array)]).toEqual(BYTES);
    expect(text(await admin('HGET', `emq:{${FLAT}}:job:${text(id)}`, 'state'))).toBe('pending');
    // parked like an Idempotency-Key: the dedup key holds the job's id
    const dedup = (await keys(FLAT)).filter((k) => k.includes(':de:'));
    expect(dedup).toHaveLength(1);
    expect(text(await admin('GET', dedup[0]!))).toBe(text(id));

    // the same scheduledTime again, and a later second of the same minute: the same job, duplicate
    const again = await producerFor(env).scheduled({ cron: '* * * * *', scheduledTime: MINUTE });
    const late = await producerFor(env).scheduled({ cron: '* * * * *', scheduledTime: MINUTE + 59_999 });
    expect(again).toEqual([{ name: 'flat', queue: FLAT, id: text(id), verdict: 'duplicate' }]);
    expect(late).toEqual(again);
    expect(await admin('ZCARD', `emq:{${FLAT}}:pending`)).toBe(1);

    const logged = lines.filter((l) => l.includes('"route":"scheduled"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.map((l) => [l.method, l.queue, l.schedule, l.verdict, l.status])).toEqual([
      ['CRON', FLAT, 'flat', 'enqueued', 201],
      ['CRON', FLAT, 'flat', 'duplicate', 200],
      ['CRON', FLAT, 'flat', 'duplicate', 200],
    ]);

    // the next minute is another fire
    const next = await producerFor(env).scheduled({ cron: '* * * * *', scheduledTime: MINUTE + 60_000 });
    expect(next[0]).toMatchObject({ verdict: 'enqueued' });
    expect(await admin('ZCARD', `emq:{${FLAT}}:pending`)).toBe(2);
  });

  it('admits as POST …/jobs does: into its lane, or due its delay after the minute; a schedule homed elsewhere is left to its region', async () => {
    const fired = await producerFor(env).scheduled({ cron: '*/5 * * * *', scheduledTime: MINUTE + 1_234 });
    expect(fired.map((f) => [f.name, 'verdict' in f && f.verdict])).toEqual([
      ['laned', 'enqueued'],
      ['later', 'scheduled'],
    ]);
    const laned = (await admin('ZRANGE', `emq:{${LANED}}:g:${GROUP}:pending`, '0', '-1')) as Uint8Array[];
    expect(laned).toHaveLength(1);
    expect(text(await admin('HGET', `emq:{${LANED}}:job:${text(laned[0])}`, 'payload'))).toBe('into a lane ✓');
    const later = (await admin('ZRANGE', `emq:{${LATER}}:schedule`, '0', '-1', 'WITHSCORES')) as Uint8Array[];
    expect(Number(text(later[1]))).toBe(MINUTE + 90_000);
    expect(await keys(FAR)).toEqual([]);
  });

  it('GET /v1/schedules: the table a token may see, with next fires, never a payload; read capability', async () => {
    const get = (token: string) => producerFor(env).fetch(new Request('http://producer/v1/schedules', { headers: { Authorization: `Bearer ${token}` } }), env);
    const all = await get(TOKEN);
    expect(all.status).toBe(200);
    const body = (await all.json()) as { schedules: Array<Record<string, unknown>> };
    expect(body.schedules.map((s) => s.name)).toEqual(['flat', 'laned', 'later', 'far', 'narrow']);
    expect(body.schedules[2]).toMatchObject({ name: 'later', cron: '*/5 * * * *', queue: LATER, delay: '90s' });
    expect(body.schedules[1]).toMatchObject({ group: GROUP });
    for (const s of body.schedules) {
      expect(s.nextFireAt).toBeGreaterThan(Date.now() - 1_000);
      expect(Object.keys(s).some((k) => k.startsWith('payload'))).toBe(false);
    }
    const narrow = (await (await get(NARROW)).json()) as { schedules: Array<{ name: string }> };
    expect(narrow.schedules.map((s) => s.name)).toEqual(['narrow']);
    expect((await get('not-a-token-0123456789')).status).toBe(401);
  });

  it('a bad EMQ_CRONS: the trigger rejects and every request answers 500 misconfigured, naming it, writing nothing', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const q = fresh('wcbad');
    const bad = { ...env, EMQ_CRONS: JSON.stringify([{ name: 'x', cron: '0 0 * * 0', queue: q, payload: 'secret cargo' }]) };
    const controller = { cron: '0 0 * * 0', scheduledTime: MINUTE, noRetry() {} };
    await expect(worker.scheduled(controller, bad)).rejects.toThrow(/^EMQ_CRONS\[0\]\.cron: /);
    const res = await producerFor(bad).fetch(
      new Request(`http://producer/v1/queues/${q}/jobs`, { method: 'POST', body: 'x', headers: { Authorization: `Bearer ${TOKEN}` } }),
      bad,
    );
    expect(res.status).toBe(500);
    const problem = await res.text();
    expect(JSON.parse(problem)).toMatchObject({ code: 'misconfigured' });
    expect(problem).toContain('EMQ_CRONS[0].cron');
    expect(problem).not.toContain('secret cargo');
    expect(await keys(q)).toEqual([]);
  });
});
