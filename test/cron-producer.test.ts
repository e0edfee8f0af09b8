// `emq producer` firing EMQ_CRONS on Node, against the run's real Valkey: two producers with the
// same table firing the same minute make one job (in-process, at a chosen minute, through
// RunningProducer.fire; and as two real `emq producer` processes on their own timers, waiting
// for the next minute), each attempt logged as a request and counted in /metrics; a bad
// EMQ_CRONS stops `emq producer` (exit 2) before it listens, naming the variable; GET
// /v1/schedules over node:http; SIGTERM stops the timers with the server.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startProducer, type RunningProducer } from '../functions/producer/node.js';
import { connectAdmin, freshQueue, type Admin } from './support/admin.js';
import { emq } from './support/cli.js';
import { startProducerProcess } from './support/producer.js';

const TOKEN = 'cron-producer-token-0123456789';
const METRICS = 'cron-producer-metrics-0123456789';
const GROUP = 'PRT0KHTOWnGLuC';
const tokens = JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]);
const tableOf = (q: string, more: Record<string, unknown> = {}) =>
  JSON.stringify([{ name: 'every-minute', cron: '* * * * *', queue: q, payload: 'tick ✓', ...more }]);

describe('emq producer fires its cron schedules', () => {
  const valkeyUrl = inject('servers')[0]!.url;
  let admin: Admin;
  beforeAll(async () => {
    admin = await connectAdmin(valkeyUrl);
  });
  afterAll(() => admin?.close());

  const pending = async (q: string) => (await admin.call('ZRANGE', `emq:{${q}}:pending`, '0', '-1')) as Buffer[];

  it('two producers firing the same minute make one job: the second is a duplicate, logged and counted', async () => {
    const q = freshQueue('cron-two');
    const env = { VALKEY_URL: valkeyUrl, EMQ_TOKENS: tokens, PORT: '0', EMQ_CRONS: tableOf(q, { group: GROUP }), EMQ_METRICS_TOKEN: METRICS, EMQ_LOG: 'off' };
    const producers: RunningProducer[] = [await startProducer(env), await startProducer(env)];
    try {
      const minute = Date.UTC(2026, 4, 3, 10, 7);
      // the same minute, each replica at its own second of it
      const [a, b] = await Promise.all([producers[0]!.fire(minute + 3_000), producers[1]!.fire(minute + 41_500)]);
      const verdicts = [...a!, ...b!].map((f) => ('verdict' in f ? f.verdict : f.code)).sort();
      expect(verdicts).toEqual(['duplicate', 'enqueued']);
      // in its lane, as Emq-Group would put it
      const ids = (await admin.call('ZRANGE', `emq:{${q}}:g:${GROUP}:pending`, '0', '-1')) as Buffer[];
      expect(ids).toHaveLength(1);
      expect(((await admin.call('HGET', `emq:{${q}}:job:${ids[0]}`, 'payload')) as Buffer).toString()).toBe('tick ✓');
      // the next minute is another job
      expect((await producers[0]!.fire(minute + 60_000)).map((f) => 'verdict' in f && f.verdict)).toEqual(['enqueued']);
      // the two fires race: the one that lost the minute answered duplicate, and counted it
      const loser = a!.some((f) => 'verdict' in f && f.verdict === 'duplicate') ? producers[0]! : producers[1]!;
      const exposition = await (await fetch(`${loser.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS}` } })).text();
      expect(exposition).toMatch(/emq_cron_fires_total\{verdict="duplicate",code=""\} 1/);
      expect(exposition).toMatch(/emq_http_requests_total\{route="scheduled",method="CRON",status="200"\} 1/);
      // GET /v1/schedules: the table and its next fire, no payload
      const listed = (await (await fetch(`${producers[0]!.url}/v1/schedules`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
        schedules: Array<Record<string, unknown>>;
      };
      expect(listed.schedules).toEqual([{ name: 'every-minute', cron: '* * * * *', queue: q, group: GROUP, nextFireAt: expect.any(Number) }]);
      expect(listed.schedules[0]!.nextFireAt as number).toBeGreaterThan(Date.now());
      expect(listed.schedules[0]!.nextFireAt as number).toBeLessThanOrEqual(Date.now() + 60_000);
    } finally {
      await Promise.all(producers.map((p) => p.stop()));
    }
  });

  it('a minute no schedule fires in fires nothing', async () => {
    const q = freshQueue('cron-none');
    const producer = await startProducer({
      VALKEY_URL: valkeyUrl,
      EMQ_TOKENS: tokens,
      PORT: '0',
      EMQ_LOG: 'off',
      EMQ_CRONS: tableOf(q, { cron: '0 3 * * *' }),
    });
    try {
      expect(await producer.fire(Date.UTC(2026, 4, 3, 10, 7))).toEqual([]);
      expect(await producer.fire(Date.UTC(2026, 4, 3, 3, 0, 12))).toHaveLength(1);
      expect(await pending(q)).toHaveLength(1);
    } finally {
      await producer.stop();
    }
  });

  it('two emq producer processes on their own timers fire the next minute once; SIGTERM stops them', { timeout: 150_000 }, async () => {
    // both must start within one minute, so that both arm the same next minute
    const second = new Date().getUTCSeconds();
    if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const q = freshQueue('cron-procs');
    const env = { VALKEY_URL: valkeyUrl, EMQ_TOKENS: tokens, EMQ_CRONS: tableOf(q) };
    const procs = await Promise.all([startProducerProcess(env), startProducerProcess(env)]);
    try {
      const fired = () =>
        procs.map((p) =>
          p
            .stdout()
            .split('\n')
            .filter((l) => l.includes('"route":"scheduled"')),
        );
      for (const deadline = Date.now() + 75_000; fired().some((lines) => lines.length === 0); ) {
        if (Date.now() > deadline) throw new Error(`no fire logged: ${procs.map((p) => p.stdout() + p.stderr()).join('\n')}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const lines = fired()
        .flat()
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => l.verdict).sort()).toEqual(['duplicate', 'enqueued']);
      expect(lines.every((l) => l.method === 'CRON' && l.schedule === 'every-minute' && l.queue === q)).toBe(true);
      expect(await pending(q)).toHaveLength(1);
    } finally {
      expect(await Promise.all(procs.map((p) => p.stop()))).toEqual([0, 0]);
    }
  });

  it.each([
    ['a cron Cloudflare does not take', { name: 'x', cron: '0 0 ? * *', queue: 'q', payload: 'p' }, /EMQ_CRONS\[0\]\.cron: the expression /],
    [
      'a payload over EMQ_MAX_PAYLOAD_BYTES',
      { name: 'x', cron: '* * * * *', queue: 'q', payload: 'secret-payload-'.repeat(10) },
      /EMQ_CRONS\[0\]: the payload is 150 bytes/,
    ],
    ['a duration without a unit', { name: 'x', cron: '* * * * *', queue: 'q', payload: 'p', delay: '10' }, /EMQ_CRONS\[0\]\.delay: /],
  ])('a bad EMQ_CRONS (%s) stops emq producer with exit 2 before it listens, naming it', async (_, entry, message) => {
    const run = await emq(['producer'], '', {
      VALKEY_URL: valkeyUrl,
      EMQ_TOKENS: tokens,
      PORT: '0',
      EMQ_MAX_PAYLOAD_BYTES: '100',
      EMQ_CRONS: JSON.stringify([entry]),
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain('secret-payload');
  });
});
