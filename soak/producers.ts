// The soak's producers: each loops over the verbs through the Worker, every job's id minted
// before its first try (or, with Idempotency-Key, answered by the Worker), each request sent
// again on no answer or a 5xx until it gets a 2xx or a 4xx. The mix: flat, batch,
// Idempotency-Key (sent again on purpose), grouped for skewed tenants, delayed, not-before,
// grouped and delayed, same-queue and cross-queue flows, and cancel, promote and reschedule of
// scheduled (and racing flat) jobs.
import { createMinter, mintId } from '../shared/index.js';
import { count, type Fate, type Ledger, payloadOf, type SentJob, type Verb } from './ledger.js';
import { deliver, type Hooks } from './webhooks.js';

export interface SoakProducerOptions {
  worker: URL;
  token: string;
  /** main: flat, scheduled, flows' parents; lanes: grouped; side: cross-queue flow children. */
  queues: { main: string; lanes: string; side: string };
  tenants: readonly string[];
  until: number;
  giveUpMs: number;
  /** The webhooks verb's sources; without them, no webhooks are sent. */
  hooks?: Hooks;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  firstSentAt: number;
  attempts: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

/** Tenant i is chosen in proportion to 1/(i+1): a few heavy tenants, a long tail. */
export function tenantsOf(n: number): string[] {
  const mint = createMinter({ node: 7, namespace: 'PRT' });
  return Array.from({ length: n }, () => mint());
}
function pickTenant(tenants: readonly string[]): string {
  const weights = tenants.map((_, i) => 1 / (i + 1));
  let r = Math.random() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < tenants.length; i++) if ((r -= weights[i]!) <= 0) return tenants[i]!;
  return tenants[0]!;
}

const MIX: Array<[Verb, number]> = [
  ['flat', 25],
  ['batch', 4],
  ['idem', 8],
  ['group', 30],
  ['delay', 5],
  ['notbefore', 4],
  ['gdelay', 3],
  ['flow', 5],
  ['xflow', 4],
  ['cancel', 4],
  ['promote', 2],
  ['reschedule', 2],
  ['webhook', 4],
];
function pickVerb(hooks: boolean): Verb {
  const mix = hooks ? MIX : MIX.filter(([v]) => v !== 'webhook');
  let r = Math.random() * mix.reduce((a, [, w]) => a + w, 0);
  for (const [v, w] of mix) if ((r -= w) <= 0) return v;
  return 'flat';
}
function firstVerb(index: number, hooks: boolean): Verb {
  const verbs = MIX.map(([v]) => v).filter((v) => hooks || v !== 'webhook');
  return verbs[index % verbs.length]!;
}
const pickFate = (): Fate => {
  const r = Math.random();
  return r < 0.03 ? 'once' : r < 0.04 ? 'dead' : 'ok';
};

export async function produce(index: number, o: SoakProducerOptions, ledger: Ledger): Promise<void> {
  /** One request, sent again until a 2xx or a 4xx; null when the retry budget runs out. */
  const call = async (method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<Answer | null> => {
    const url = new URL(path, o.worker);
    let firstFailure: number | undefined;
    const firstSentAt = Date.now();
    for (let attempt = 0; ; attempt++) {
      ledger.requests++;
      if (attempt > 0) ledger.retries++;
      let status = 0;
      let text = '';
      try {
        const res = await fetch(url, {
          method,
          ...(body === undefined ? {} : { body: body as string }),
          headers: { Authorization: `Bearer ${o.token}`, ...headers },
          signal: AbortSignal.timeout(20_000),
        });
        status = res.status;
        text = await res.text();
      } catch (err) {
        text = (err as Error).message;
      }
      if (status >= 200 && status < 500) {
        if (firstFailure !== undefined) ledger.longestOutageMs = Math.max(ledger.longestOutageMs, Date.now() - firstFailure);
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {}
        return { status, body: parsed, firstSentAt, attempts: attempt + 1 };
      }
      if (status >= 500 && status !== 503) {
        const seen = ledger.bad5xx.get(status) ?? { count: 0, sample: text.slice(0, 200) };
        seen.count++;
        ledger.bad5xx.set(status, seen);
      }
      firstFailure ??= Date.now();
      if (Date.now() - firstFailure > o.giveUpMs) {
        ledger.gaveUp++;
        return null;
      }
      await sleep(Math.min(1_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2));
    }
  };
  const ack = (a: Answer | null, jobs: SentJob[], what: string): boolean => {
    if (a && (a.status === 200 || a.status === 201)) {
      const at = Date.now();
      for (const j of jobs) (j.acked = true), (j.ackedAt = at);
      if (a.status === 200 && a.attempts > 1) ledger.duplicates++;
      return true;
    }
    if (a) ledger.refused.push(`${what}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
    return false;
  };
  const jobsPath = (q: string) => `/v1/queues/${q}/jobs`;
  const newJob = (verb: Verb, queue: string, fate: Fate, unique: string, extra: Partial<SentJob> = {}) => {
    const id = mintId();
    const p = payloadOf(verb, fate, unique);
    const job: SentJob = { id, queue, verb, fate, digest: p.digest, acked: false, ...extra };
    ledger.jobs.set(id, job);
    return { job, bytes: p.bytes };
  };
  /** POST …/jobs with the id minted first (and sent as its Idempotency-Key); answers the job when acknowledged. */
  const enqueue = async (verb: Verb, queue: string, fate: Fate, unique: string, headers: Record<string, string> = {}, extra: Partial<SentJob> = {}) => {
    const { job, bytes } = newJob(verb, queue, fate, unique, extra);
    // the id as the Idempotency-Key too: a retry whose first try landed and whose job has completed since is still that job (docs/api.md)
    const a = await call('POST', jobsPath(queue), bytes, {
      'Emq-Job-Id': job.id,
      'Idempotency-Key': job.id,
      'Content-Type': 'application/octet-stream',
      ...headers,
    });
    return ack(a, [job], `${verb} ${job.id}`) ? { job, a: a! } : null;
  };
  const control = (verb: string, a: Answer | null) =>
    count(ledger.control, a ? `${verb} ${a.status}${a.body.code ? ` ${a.body.code}` : ''}` : `${verb} given up`);

  const { main, lanes, side } = o.queues;
  for (let n = 0; Date.now() < o.until; n++) {
    const unique = `p${index}-${n}`;
    // the first round deals the verbs out across the producers, so a short run sends each of them
    const verb = n === 0 ? firstVerb(index, o.hooks !== undefined) : pickVerb(o.hooks !== undefined);
    if (verb === 'webhook') await deliver(o.hooks!, unique, pickFate(), { call, ack, ledger });
    else if (verb === 'flat') await enqueue('flat', main, pickFate(), unique);
    else if (verb === 'group') {
      const group = pickTenant(o.tenants);
      await enqueue('group', lanes, pickFate(), unique, { 'Emq-Group': group }, { group });
    } else if (verb === 'delay' || verb === 'gdelay') {
      const ms = between(500, 4_000);
      const queue = verb === 'delay' ? main : lanes;
      const group = verb === 'gdelay' ? pickTenant(o.tenants) : undefined;
      const r = await enqueue(verb, queue, 'ok', unique, { 'Emq-Delay': `${ms}ms`, ...(group ? { 'Emq-Group': group } : {}) }, group ? { group } : {});
      if (r) r.job.dueAfter = r.a.firstSentAt + ms;
    } else if (verb === 'notbefore') {
      const at = Date.now() + between(500, 4_000);
      await enqueue('notbefore', main, 'ok', unique, { 'Emq-Not-Before': String(at) }, { dueAfter: at });
    } else if (verb === 'batch') {
      const items = Array.from({ length: between(5, 30) }, (_, i) => newJob('batch', main, 'ok', `${unique}.${i}`));
      const body = JSON.stringify(items.map(({ job, bytes }) => ({ id: job.id, payloadBase64: b64(bytes), idempotencyKey: job.id })));
      const a = await call('POST', `/v1/queues/${main}/batch`, body, { 'Content-Type': 'application/json' });
      const results = (a?.body.results ?? []) as Array<{ verdict?: string }>;
      if (a?.status === 200 && results.some((r) => r.verdict !== 'enqueued' && r.verdict !== 'duplicate')) a.status = 207; // counted refused
      ack(
        a,
        items.map((i) => i.job),
        `batch ${unique}`,
      );
    } else if (verb === 'idem') {
      const p = payloadOf('idem', 'ok', unique);
      const key = `soak-${unique}`;
      const headers = { 'Idempotency-Key': key, 'Content-Type': 'application/octet-stream' };
      const a = await call('POST', jobsPath(main), p.bytes, headers);
      const id = typeof a?.body.id === 'string' ? a.body.id : `?${unique}`;
      const job: SentJob = { id, queue: main, verb: 'idem', fate: 'ok', digest: p.digest, acked: false };
      ledger.jobs.set(id, job);
      if (ack(a, [job], `idem ${key}`) && Math.random() < 0.3) {
        const again = await call('POST', jobsPath(main), p.bytes, headers);
        if (again?.status === 200 && again.body.id === id) ledger.idemReuse.ok++;
        else ledger.idemReuse.mismatch++;
      }
    } else if (verb === 'flow' || verb === 'xflow') {
      const parent = newJob(verb, main, 'ok', `${unique}.p`, { role: 'parent' });
      const kids = Array.from({ length: between(2, 4) }, (_, i) =>
        newJob(verb, verb === 'xflow' && i > 0 ? side : main, 'ok', `${unique}.${i}`, { role: 'child', parent: parent.job.id }),
      );
      parent.job.children = kids.map((k) => k.job.id);
      const body = JSON.stringify({
        parent: { id: parent.job.id, payloadBase64: b64(parent.bytes) },
        children: kids.map(({ job, bytes }) => ({ id: job.id, payloadBase64: b64(bytes), ...(job.queue !== main ? { queue: job.queue } : {}) })),
      });
      const a = await call('POST', `/v1/queues/${main}/flows`, body, { 'Content-Type': 'application/json' });
      ack(a, [parent.job, ...kids.map((k) => k.job)], `${verb} ${parent.job.id}`);
    } else if (verb === 'cancel') {
      // two in three wait 8 s in the schedule; the rest are flat, raced against the consumers
      const scheduled = n % 3 !== 0;
      const r = await enqueue('cancel', main, 'ok', unique, scheduled ? { 'Emq-Delay': '8s' } : {});
      if (!r) continue;
      if (scheduled) r.job.dueAfter = r.a.firstSentAt + 8_000;
      const a = await call('DELETE', `${jobsPath(main)}/${r.job.id}`);
      control(scheduled ? 'cancel (scheduled)' : 'cancel (flat)', a);
      r.job.cancel = a?.status === 200 ? 'removed' : a?.status === 404 && a.attempts > 1 ? 'maybe' : 'kept';
    } else if (verb === 'promote' || verb === 'reschedule') {
      const r = await enqueue(verb, main, 'ok', unique, { 'Emq-Delay': '60s' });
      if (!r) continue;
      r.job.dueAfter = r.a.firstSentAt + 60_000;
      const ms = between(500, 3_000);
      const a =
        verb === 'promote'
          ? await call('POST', `${jobsPath(main)}/${r.job.id}/promote`)
          : await call('PATCH', `${jobsPath(main)}/${r.job.id}`, undefined, { 'Emq-Delay': `${ms}ms` });
      control(verb, a);
      // a 409 after a try that got no answer: that try had moved it; a 404 then: it had, and the job has run since
      if (a && (a.status === 200 || ((a.status === 409 || a.status === 404) && a.attempts > 1))) r.job.dueAfter = a.firstSentAt + (verb === 'promote' ? 0 : ms);
      else r.job.mayStayScheduled = true;
    }
  }
}
