// The console (issue 28) in headless Chromium, against `emq producer` (glide) and against
// `npm start` (the Worker under wrangler dev, through its gateway), over a keyspace filled
// through the producer API: sign in with the form; every count on the queues page equals
// GET /v1/queues/{q}; cancel a job by clicking and see it gone; promote a scheduled job; set a
// lane limit; send a signed test webhook twice (enqueued, then duplicate); a hostile payload,
// error and queue name shown inert (no dialog, the text literal, hidden characters escaped).
// Refusals write nothing: a read token's action (403 forbidden_action, shown), a cross-site
// post, no token. Each page's screenshot: test-artifacts/console/<target>/<page>.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectAdmin, freshQueue, snapshot, type Admin } from './support/admin.js';
import { ARTIFACTS, consoleOfNpmStart, consoleOverProducer, launchChromium, type Browser, type ConsoleTarget } from './support/console.js';
import { libraryConsumer } from './support/consumer.js';

const ALL = 'console-all-token-0123456789abcdef';
const READER = 'console-reader-token-0123456789ab';
const A = 'PRT0KHTOWnGLuC';
const B = 'USR0NgWEfAEJfs';
const HOSTILE = '<img src=x onerror=alert(1)>';
const HIDDEN = 'left\u202eright\u0007bell';
/** A source's name is anyone's text too: one that would be markup, with a bidi override. */
const HOSTILE_SOURCE = '<img src=x onerror=alert(3)>"\u202e';
const SOURCES = JSON.stringify({
  gh: { kind: 'github', secrets: ['console-hook-secret-0123456'], queue: 'console-hooks' },
  [HOSTILE_SOURCE]: { kind: 'github', secrets: ['console-hook-secret-0123456'], queue: 'console-hooks' },
});
const TOKENS = JSON.stringify([
  { token: ALL, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] },
  { token: READER, queues: ['*'], rawPrefixes: true, can: ['read'] },
]);
const COUNTS = ['pending', 'active', 'scheduled', 'dead', 'completed', 'failed'] as const;

const TARGETS: Array<{ name: string; dir: string; start: (valkey: string) => Promise<ConsoleTarget> }> = [
  { name: 'emq producer (glide)', dir: 'emq-producer', start: (v) => consoleOverProducer(v, { EMQ_TOKENS: TOKENS, EMQ_SOURCES: SOURCES }) },
  // npm start's dev token may do everything; EMQ_TOKENS given to it join it (the read-only one)
  {
    name: 'npm start (the Worker through the gateway)',
    dir: 'npm-start',
    start: (v) => consoleOfNpmStart(v, { EMQ_DEV_TOKEN: ALL, EMQ_TOKENS: JSON.stringify([JSON.parse(TOKENS)[1]]), EMQ_SOURCES: SOURCES }),
  },
];

describe.each(TARGETS)('the console over $name', ({ dir, start }) => {
  const valkey = inject('servers')[0]!.url;
  let target: ConsoleTarget;
  let browser: Browser;
  let admin: Admin;
  let page: Page;
  const dialogs: string[] = [];
  const q = freshQueue('console-a');
  const q2 = freshQueue('console-b');
  const ids = {} as Record<'flat' | 'other' | 'later' | 'soon' | 'hostile' | 'hidden' | 'dead' | 'laneA' | 'laneB', string>;

  /** The producer API with the all-capable token. */
  const api = async (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${target.producer}${path}`, { method, ...init, headers: { Authorization: `Bearer ${ALL}`, ...init.headers } });
    return { status: res.status, body: (await res.json()) as { [k: string]: unknown; counts?: Record<string, number>; paused?: boolean; state?: string } };
  };
  const post = async (queue: string, payload: string, headers: Record<string, string> = {}) => {
    const r = await api('POST', `/v1/queues/${queue}/jobs`, { body: payload, headers });
    expect(r.status).toBeLessThan(300);
    return r.body.id as string;
  };
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, dir, `${name}.png`), fullPage: true });
  const jobsIn = async (state: string) => Promise.all((await page.locator(`#jobs-${state} tbody tr`).all()).map((r) => r.getAttribute('data-job')));
  const cell = (scope: string, key: string) => page.locator(`${scope} [data-count="${key}"]`).first().textContent();

  beforeAll(async () => {
    [target, browser, admin] = await Promise.all([start(valkey), launchChromium(), connectAdmin(valkey)]);
    page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('dialog', (d) => void (dialogs.push(d.message()), d.dismiss()));
    // the keyspace, through the API: flat, laned and scheduled jobs, hostile payloads
    ids.flat = await post(q, 'flat one');
    ids.other = await post(q, 'flat two');
    ids.laneA = await post(q, 'lane a', { 'Emq-Group': A });
    await post(q, 'lane a again', { 'Emq-Group': A });
    ids.laneB = await post(q, 'lane b', { 'Emq-Group': B });
    ids.later = await post(q, 'later', { 'Emq-Delay': '2h' });
    ids.soon = await post(q, 'sooner', { 'Emq-Delay': '1h' });
    ids.hostile = await post(q, HOSTILE);
    ids.hidden = await post(q, HIDDEN);
    await post(q2, 'b');
    // a dead job with a hostile last error, as the library's worker leaves one (the row and the dead set)
    ids.dead = (await post(q2, 'doomed', { 'Emq-Delay': '1d' })) as string;
    await api('DELETE', `/v1/queues/${q2}/jobs/${ids.dead}`);
    await admin.call(
      'HSET',
      `emq:{${q2}}:job:${ids.dead}`,
      'state',
      'dead',
      'attempts',
      '3',
      'payload',
      'd',
      'last_error',
      `<script>alert(2)</script> "x" ${HIDDEN}`,
    );
    await admin.call('ZADD', `emq:{${q2}}:dead`, '0', ids.dead);
    // one of lane A's jobs claimed by the library's consumer: a claim in flight for the share chart
    expect((await libraryConsumer(admin, q).gclaim())?.group).toBeDefined();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await target?.stop();
    admin?.close();
  });

  it('sends a browser without a token to sign in; the form sets an HttpOnly, SameSite=Strict cookie and no page holds the token', async () => {
    await page.goto(target.console);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await shot('signin');
    await page.fill('input[name="token"]', 'not-a-token-anyone-has-000000');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.locator('.refused').getAttribute('data-code')).toBe('unauthorized');
    expect(await browser.context.cookies()).toEqual([]);
    await page.fill('input[name="token"]', ALL);
    await page.click('button[type="submit"]');
    await page.waitForURL((u) => u.pathname === '/');
    const [cookie] = await browser.context.cookies();
    expect(cookie).toMatchObject({ name: 'emq_console', httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.content()).not.toContain(ALL);
  });

  it('the queues page: every count equals GET /v1/queues/{q}, paused or not, a depth chart, refreshed live', async () => {
    await page.goto(target.console);
    for (const name of [q, q2]) {
      const row = `#queues tr[data-queue="${name}"]`;
      const truth = await api('GET', `/v1/queues/${name}`);
      for (const k of COUNTS) expect(Number(await cell(row, k)), `${name} ${k}`).toBe(truth.body.counts![k]);
      expect(await page.locator(`${row} [data-field="paused"]`).textContent()).toBe(truth.body.paused ? 'paused' : 'running');
      expect(await page.locator(`${row} [data-spark] svg polyline`).count()).toBe(1);
    }
    // flat pending (laned jobs wait in their lanes: the queue page's rows), one claimed, two scheduled
    expect(await cell(`#queues tr[data-queue="${q}"]`, 'pending')).toBe('4');
    expect(await cell(`#queues tr[data-queue="${q}"]`, 'scheduled')).toBe('2');
    expect(await cell(`#queues tr[data-queue="${q}"]`, 'active')).toBe('1');
    // live: a job enqueued now shows up without a reload, and the chart gains a sample
    await post(q2, 'b again');
    await expect.poll(() => cell(`#queues tr[data-queue="${q2}"]`, 'pending'), { timeout: 10_000 }).toBe('2');
    expect(Number(await page.locator(`#queues tr[data-queue="${q2}"] [data-spark]`).getAttribute('data-samples'))).toBeGreaterThan(1);
    await shot('queues');
  });

  it("a queue's page: lanes (pending-only ones too), the share of claims, the schedule soonest first, pending and dead jobs", async () => {
    await page.goto(`${target.console}/q/${q}`);
    const lane = (g: string, f: string) =>
      page.locator(`#lanes tr[data-group="${g}"] [data-${f === 'pending' || f === 'active' ? 'count' : 'field'}="${f}"]`).textContent();
    expect([await lane(A, 'pending'), await lane(A, 'active'), await lane(A, 'ringed')]).toEqual(['1', '1', 'on the ring']);
    expect([await lane(B, 'pending'), await lane(B, 'active')]).toEqual(['1', '0']);
    await expect.poll(() => page.locator('[data-chart="share"] svg rect').count()).toBe(1);
    const scheduled = await jobsIn('scheduled');
    expect(scheduled).toEqual([ids.soon, ids.later]);
    const pending = await jobsIn('pending');
    expect(pending).toContain(ids.flat);
    expect(pending).not.toContain(ids.laneB);
    await shot('queue');
    // a lane's own pending jobs, from its row
    await page.locator(`#lanes tr[data-group="${B}"] td.name a`).click();
    await page.waitForURL((u) => u.searchParams.get('group') === B);
    expect(await jobsIn('pending')).toEqual([ids.laneB]);
    await page.goto(`${target.console}/q/${q2}`);
    const error = page.locator(`#jobs-dead tr[data-job="${ids.dead}"] td.error`);
    expect(await error.textContent()).toBe('<script>alert(2)</script> "x" left\\u202eright\\u0007bell');
    expect(await page.locator('#jobs-dead script').count()).toBe(0);
  });

  it('cancels a job by clicking, and it is gone', async () => {
    await page.goto(`${target.console}/q/${q}`);
    await page.locator(`#jobs-pending tr[data-job="${ids.other}"] button.danger`).click();
    await page.waitForURL((u) => u.searchParams.get('done') === 'cancelled');
    expect(await page.locator('.notice').textContent()).toBe('Job cancelled.');
    expect(await page.locator(`#jobs-pending tr[data-job="${ids.other}"]`).count()).toBe(0);
    expect((await api('GET', `/v1/queues/${q}/jobs/${ids.other}`)).status).toBe(404);
    await page.goto(`${target.console}/q/${q}/jobs/${ids.other}`);
    expect(await page.locator('#gone').count()).toBe(1);
  });

  it('promotes a scheduled job from its page', async () => {
    await page.goto(`${target.console}/q/${q}/jobs/${ids.later}`);
    expect(await page.locator('[data-field="state"]').textContent()).toBe('scheduled');
    await page.click('#run-now');
    await page.waitForURL((u) => u.searchParams.get('done') === 'promoted');
    expect(await page.locator('[data-field="state"]').textContent()).toBe('pending');
    expect((await api('GET', `/v1/queues/${q}/jobs/${ids.later}`)).body.state).toBe('pending');
  });

  it('sets a lane limit', async () => {
    await page.goto(`${target.console}/q/${q}`);
    const row = page.locator(`#lanes tr[data-group="${B}"]`);
    await row.locator('input[name="limit"]').fill('3');
    await row.locator('button[value="set"]').click();
    await page.waitForURL((u) => u.searchParams.get('done') === 'lane');
    expect(await page.locator(`#lanes tr[data-group="${B}"] [data-field="limit"]`).textContent()).toBe('3');
    expect((await api('GET', `/v1/queues/${q}/groups/${B}`)).body).toMatchObject({ group: B, limit: 3 });
  });

  it('sends a test job with a group and a delay from the form', async () => {
    await page.goto(`${target.console}/send`);
    await page.fill('#send-job input[name="queue"]', q2);
    await page.fill('#send-job textarea[name="payload"]', 'from the form');
    await page.fill('#send-job input[name="group"]', A);
    await page.fill('#send-job input[name="delay"]', '1h');
    await page.click('#send-job button');
    await page.waitForURL((u) => u.searchParams.get('done') === 'enqueued');
    expect(await page.locator('[data-field="state"]').textContent()).toBe('scheduled');
    expect(await page.locator('[data-field="group"]').textContent()).toBe(A);
    expect(await page.locator('#payload').textContent()).toBe('from the form');
  });

  it('sends a signed test webhook, then the same delivery again: enqueued, then duplicate', async () => {
    await page.goto(`${target.console}/send`);
    expect(await page.locator('#send-webhook option').allTextContents()).toEqual(['gh', '<img src=x onerror=alert(3)>"\\u202e']);
    expect(await page.locator('img').count()).toBe(0);
    await page.selectOption('#send-webhook select', 'gh');
    await page.locator('#send-webhook button').click();
    await expect.poll(() => page.locator('#webhook-verdict').textContent()).toBe('enqueued');
    const first = await page.locator('#webhook-result a').textContent();
    await page.click('#webhook-resend');
    await expect.poll(() => page.locator('#webhook-verdict').textContent()).toBe('duplicate');
    expect(await page.locator('#webhook-result a').textContent()).toBe(first);
    expect(await page.content()).not.toContain('console-hook-secret');
    await shot('send');
  });

  it('shows a hostile payload literally: no dialog, no element, hidden characters escaped', async () => {
    await page.goto(`${target.console}/q/${q}/jobs/${ids.hostile}`);
    expect(await page.locator('#payload').textContent()).toBe(HOSTILE);
    expect(await page.locator('#payload img, img').count()).toBe(0);
    await page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    await shot('job');
    await page.goto(`${target.console}/q/${q}/jobs/${ids.hidden}`);
    expect(await page.locator('#payload').textContent()).toBe('left\\u202eright\\u0007bell');
    expect(await page.locator('#payload .esc').count()).toBe(2);
  });

  it('refuses, writing nothing: a read token acting (403 forbidden_action, shown), a cross-site post, a post with no token', async () => {
    const before = await snapshot(admin, q);
    const send = (headers: Record<string, string>) => fetch(`${target.console}/q/${q}/pause`, { method: 'POST', headers, redirect: 'manual' });
    const reader = await send({ Authorization: `Bearer ${READER}` });
    expect(reader.status).toBe(403);
    expect(await reader.text()).toContain('forbidden_action');
    const cookie = `emq_console=${encodeURIComponent(ALL)}`;
    expect((await send({ Cookie: cookie, Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    expect((await send({ Cookie: cookie })).status).toBe(403);
    expect((await send({})).status).toBe(401);
    expect(await snapshot(admin, q)).toEqual(before);
    // the same action from the page itself goes through
    await page.goto(`${target.console}/q/${q}`);
    await page.click('#queue-toggle');
    await page.waitForURL((u) => u.searchParams.get('done') === 'paused');
    expect((await api('GET', `/v1/queues/${q}`)).body.paused).toBe(true);
  });

  it('every answer carries a strict CSP and no inline script or style', async () => {
    const res = await fetch(`${target.console}/q/${q}`, { headers: { Authorization: `Bearer ${ALL}` } });
    const csp = res.headers.get('Content-Security-Policy') ?? '';
    for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"]) expect(csp).toContain(d);
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toContain(ALL);
  });
});
