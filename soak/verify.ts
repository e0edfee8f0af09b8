// The soak's verdict: the producers' ledger held against the consumers' completion log and
// against what Valkey holds at the end. Every acknowledged job completed exactly once (an
// `ok` from the library's @complete, by its token), none the producers did not send, none
// claimed before it was due, flow parents after all their children, cancelled jobs never,
// the doomed in the dead set; fairness between tenants measured; and no key left over but
// the library's own.
import type { GlideClient, GlideString } from '@valkey/valkey-glide';
import type { LogLine } from './library/consumer.js';
import { type Ledger, type SentJob, VERBS } from './ledger.js';

export interface Findings {
  acked: number;
  /** Acknowledged, neither cancelled nor doomed: must complete once. */
  expected: number;
  completed: number;
  lost: number;
  /** Completed again within one admission (a second ok for one id and token run). */
  doubled: number;
  /** Run again after its first run completed: a producer's retry of a request whose answer was lost re-admitted the id once its row was gone (attempts from 1 again). */
  readmitted: number;
  /** Claimed by a process killed with the complete in flight, never claimed again, its row gone: done, unlogged. */
  completedInKilled: number;
  /** Completions (and claims) of ids no producer sent. */
  unknown: number;
  early: number;
  /** A claim again of a job before its lease ran out, with no retry in between. */
  reclaimedInLease: number;
  /** Claims again after a lease ran out (a loop killed, or too slow). */
  reclaimedAfterLease: number;
  notByteExact: number;
  cancelledCompleted: number;
  cancelled: number;
  doomedNotDead: number;
  failOnceNotRetried: number;
  flowParents: number;
  flowsOutOfOrder: number;
  flowsHeld: number;
  /** The largest number of claims one tenant got in a row while another's lane held work. */
  fairnessMax: number;
  orphans: number;
  /** Completions the library's counters (metrics:completed) hold against those logged. */
  counter: { library: number; logged: number };
  /** Completions whose first reply was lost, then answered gone: counted done. */
  confirmedAfterError: number;
  latency: Map<string, { p50: number; p99: number; n: number }>;
  examples: string[];
}

const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v));

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function verify(admin: GlideClient, ledger: Ledger, log: LogLine[], queues: readonly string[], leaseMs: number): Promise<Findings> {
  const f: Findings = {
    acked: 0,
    expected: 0,
    completed: 0,
    lost: 0,
    doubled: 0,
    readmitted: 0,
    completedInKilled: 0,
    unknown: 0,
    early: 0,
    reclaimedInLease: 0,
    reclaimedAfterLease: 0,
    notByteExact: 0,
    cancelledCompleted: 0,
    cancelled: 0,
    doomedNotDead: 0,
    failOnceNotRetried: 0,
    flowParents: 0,
    flowsOutOfOrder: 0,
    flowsHeld: 0,
    fairnessMax: 0,
    orphans: 0,
    counter: { library: 0, logged: 0 },
    confirmedAfterError: 0,
    latency: new Map(),
    examples: [],
  };
  const note = (line: string) => f.examples.length < 15 && f.examples.push(line);
  type Seen = { claims: Extract<LogLine, { e: 'claim' }>[]; dones: Extract<LogLine, { e: 'done' }>[]; retries: Extract<LogLine, { e: 'retry' }>[] };
  const seen = new Map<string, Seen>();
  const of = (id: string) => seen.get(id) ?? (seen.set(id, { claims: [], dones: [], retries: [] }).get(id) as Seen);
  for (const l of log) {
    if (l.e === 'claim') of(l.id).claims.push(l);
    else if (l.e === 'done') of(l.id).dones.push(l);
    else if (l.e === 'retry') of(l.id).retries.push(l);
  }
  // claims still open in a process when it was killed: their complete may have run unlogged
  const inDoubt = new Set<string>();
  const open = new Map<number, Set<string>>();
  for (const l of log) {
    const mine = open.get(l.l) ?? open.set(l.l, new Set()).get(l.l)!;
    if (l.e === 'claim') mine.add(`${l.id} ${l.t}`);
    else if (l.e === 'done' || l.e === 'retry') mine.delete(`${l.id} ${l.t}`);
    else if (l.e === 'kill') {
      for (const k of mine) inDoubt.add(k.split(' ')[0]!);
      mine.clear();
    }
  }
  const dead = new Set<string>();
  for (const q of queues) for (const id of (await admin.customCommand(['ZRANGE', `emq:{${q}}:dead`, '0', '-1'])) as GlideString[]) dead.add(`${q} ${text(id)}`);

  /** The completion that counts: an ok, else a gone after a lost reply when no ok exists. */
  const completionOf = (s: Seen | undefined) => {
    const oks = s?.dones.filter((d) => d.r === 'ok') ?? [];
    if (oks.length > 0) return { n: oks.length, done: oks[0]!, oks };
    const after = s?.dones.find((d) => d.r === 'gone after an error');
    return after ? { n: 1, done: after, afterError: true, oks: [after] } : { n: 0, oks: [] };
  };
  const lat = new Map<string, number[]>();
  for (const [id, job] of ledger.jobs) {
    if (!job.acked) continue;
    f.acked++;
    const s = seen.get(id);
    const c = completionOf(s);
    if (c.afterError) f.confirmedAfterError++;
    if (c.done && c.done.q !== job.queue) note(`completed in ${c.done.q}, sent to ${job.queue}: ${id}`), f.unknown++;
    if (job.cancel === 'removed') {
      f.cancelled++;
      if ((s?.claims.length ?? 0) > 0) f.cancelledCompleted++, note(`cancelled, then claimed: ${id}`);
      continue;
    }
    if (job.fate === 'dead') {
      if (c.n > 0 || !dead.has(`${job.queue} ${id}`)) f.doomedNotDead++, note(`doomed but ${c.n > 0 ? 'completed' : 'not in the dead set'}: ${id}`);
      continue;
    }
    if (job.cancel === 'maybe' && c.n === 0) continue;
    if (job.mayStayScheduled && c.n === 0) continue;
    f.expected++;
    f.counter.logged += c.n;
    if (c.n === 0 && inDoubt.has(id)) {
      f.completedInKilled++;
      f.completed++;
      f.counter.logged++;
      continue;
    }
    if (c.n === 0) f.lost++, note(`acknowledged, never completed: ${job.verb} ${job.queue} ${id}`);
    // a second run from attempts 1: the id admitted again after its row was gone
    const again = c.oks.filter((d, i) => i > 0 && d.t <= c.oks[i - 1]!.t).length;
    if (again > 0) (f.readmitted += again), note(`run again after it completed (admitted anew): ${job.verb} ${job.queue} ${id}`);
    if (c.n - again > 1) (f.doubled += c.n - again - 1), note(`completed ${c.n} times: ${job.verb} ${job.queue} ${id}`);
    if (c.done) {
      f.completed++;
      if (c.done.h !== job.digest) f.notByteExact++, note(`payload changed: ${id}`);
      if (job.fate === 'once' && c.done.t < 2) f.failOnceNotRetried++, note(`fail-once completed at attempt ${c.done.t}: ${id}`);
      const key = job.role === 'child' ? `${job.verb} child` : job.role === 'parent' ? `${job.verb} parent` : job.verb;
      (lat.get(key) ?? lat.set(key, []).get(key)!).push(c.done.done - job.ackedAt!);
    }
    // due: no claim (the first) before the due time, on the server's clock
    const first = s?.claims.find((cl) => cl.t === 1);
    // (not judged when a promote or reschedule may have landed unanswered: its due time is unknown)
    if (job.dueAfter !== undefined && !job.mayStayScheduled && first?.at != null && first.at < job.dueAfter)
      f.early++, note(`claimed ${job.dueAfter - first.at} ms early: ${job.verb} ${id}`);
  }
  for (const [id, s] of seen) {
    if (!ledger.jobs.has(id)) f.unknown++, note(`claimed or completed, never sent: ${id}`);
    // a claim again needs a retry of the attempt before it, or that attempt's lease run out
    const byToken = new Map(s.claims.map((c) => [c.t, c]));
    for (const c of s.claims) {
      const before = byToken.get(c.t - 1);
      if (!before || before.at == null || c.at == null) continue;
      if (s.retries.some((r) => r.t === c.t - 1)) continue;
      if (c.at >= before.at + leaseMs) f.reclaimedAfterLease++;
      else f.reclaimedInLease++, note(`claimed again ${c.at - before.at} ms into a ${leaseMs} ms lease: ${id}`);
    }
  }
  for (const v of [...VERBS.flatMap((v) => [v, `${v} parent`, `${v} child`])]) {
    const xs = lat.get(v);
    if (xs?.length) xs.sort((a, b) => a - b), f.latency.set(v, { p50: pct(xs, 50), p99: pct(xs, 99), n: xs.length });
  }

  // flows: each parent claimed only after every child was claimed and completed
  for (const job of ledger.jobs.values()) {
    if (job.role !== 'parent' || !job.acked) continue;
    f.flowParents++;
    const p = seen.get(job.id)?.claims[0];
    const kids = job.children!.map((k) => ({ k, s: seen.get(k) }));
    // a claim time unknown (its read failed in a fault) is not judged
    if (kids.some(({ k, s }) => completionOf(s).n === 0 && !inDoubt.has(k)) || (p?.at != null && kids.some(({ s }) => (s?.claims[0]?.at ?? -Infinity) > p.at!)))
      f.flowsOutOfOrder++, note(`flow parent ${job.id} claimed before its children were done`);
  }

  f.fairnessMax = fairness(log, ledger);
  await leftovers(admin, ledger, queues, f, note);
  return f;
}

/**
 * Claims of grouped jobs in server-clock order (ties in one ms in log order). For each run of a
 * tenant's claims while another tenant's lane held work (that tenant's next job acknowledged,
 * not scheduled, before the run began, and claimed after it), the run's length: the largest.
 */
function fairness(log: LogLine[], ledger: Ledger): number {
  const claims = log.filter((l): l is Extract<LogLine, { e: 'claim' }> => l.e === 'claim' && l.g !== null && l.at !== null);
  claims.sort((a, b) => a.at! - b.at!);
  // per tenant: its fresh jobs' (acknowledged, unscheduled, first attempt) claim positions and ack times
  const waiting = new Map<string, Array<{ pos: number; ackedAt: number }>>();
  claims.forEach((c, pos) => {
    const job = ledger.jobs.get(c.id);
    if (!job?.ackedAt || job.dueAfter !== undefined || c.t !== 1) return;
    (waiting.get(c.g!) ?? waiting.set(c.g!, []).get(c.g!)!).push({ pos, ackedAt: job.ackedAt });
  });
  // per tenant, from each position on, the earliest acknowledgement among its jobs claimed there or later
  const suffix = new Map(
    [...waiting].map(([g, xs]) => {
      const min: number[] = new Array(xs.length);
      for (let k = xs.length - 1, m = Infinity; k >= 0; k--) min[k] = m = Math.min(m, xs[k]!.ackedAt);
      return [g, { pos: xs.map((x) => x.pos), min }] as const;
    }),
  );
  const waitedThrough = (g: string, from: number, end: number) => {
    const s = suffix.get(g)!;
    let lo = 0;
    for (let hi = s.pos.length; lo < hi; ) {
      const mid = (lo + hi) >> 1;
      if (s.pos[mid]! > end) hi = mid;
      else lo = mid + 1;
    }
    return lo < s.pos.length && s.min[lo]! < from;
  };
  let worst = 0;
  for (let i = 0; i < claims.length; ) {
    let j = i;
    while (j + 1 < claims.length && claims[j + 1]!.g === claims[i]!.g) j++;
    const from = claims[i]!.at!;
    // another tenant waited through the whole run: a job of it acknowledged before the run, claimed after it
    if ([...suffix.keys()].some((g) => g !== claims[i]!.g && waitedThrough(g, from, j))) worst = Math.max(worst, j - i + 1);
    i = j + 1;
  }
  return worst;
}

async function leftovers(admin: GlideClient, ledger: Ledger, queues: readonly string[], f: Findings, note: (l: string) => void) {
  const call = (...a: GlideString[]) => admin.customCommand(a);
  for (const q of queues) {
    const p = `emq:{${q}}:`;
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = (await call('SCAN', cursor, 'MATCH', `${p}*`, 'COUNT', '1000')) as [GlideString, GlideString[]];
      cursor = text(next);
      keys.push(...batch.map(text));
    } while (cursor !== '0');
    for (const key of keys) {
      const rest = key.slice(p.length);
      const orphan = (why: string) => (f.orphans++, note(`left over: ${key} (${why})`));
      if (rest === 'metrics:completed') f.counter.library += Number(text(await call('HGET', key, 'count')));
      else if (rest === 'metrics:failed' || rest === 'wake')
        continue; // the library's counter; its wake tokens
      else if (rest.startsWith('de:')) {
        if (Number(await call('PTTL', key)) <= 0) orphan('a dedup key without a TTL');
      } else if (rest === 'dead') {
        for (const id of ((await call('ZRANGE', key, '0', '-1')) as GlideString[]).map(text))
          if (ledger.jobs.get(id)?.fate !== 'dead') orphan(`dead: ${id}, not doomed`);
      } else if (rest === 'schedule') {
        for (const id of ((await call('ZRANGE', key, '0', '-1')) as GlideString[]).map(text))
          if (!ledger.jobs.get(id)?.mayStayScheduled) orphan(`scheduled: ${id}`);
      } else if (/^job:[A-Za-z0-9]{14}:(dependencies|processed)$/.test(rest)) {
        // the library's fan-in leaves these behind a completed parent: dependencies 0, processed = its children
        const [, id, part] = /^job:(\w+):(\w+)$/.exec(rest)!;
        const parent = ledger.jobs.get(id!);
        if (Number(await call('EXISTS', `${p}job:${id}`)) === 1) continue; // judged with the row
        if (part === 'dependencies' && text(await call('GET', key)) !== '0') orphan('a parent gone with children outstanding');
        if (part === 'processed') {
          const got = ((await call('HKEYS', key)) as GlideString[]).map(text).sort();
          if (JSON.stringify(got) !== JSON.stringify([...(parent?.children ?? [])].sort())) orphan('processed is not the flow children');
        }
      } else if (/^job:[A-Za-z0-9]{14}$/.test(rest)) {
        const id = rest.slice(4);
        const job: SentJob | undefined = ledger.jobs.get(id);
        const state = text(await call('HGET', key, 'state'));
        if (state === 'awaiting_children') f.flowsHeld++, orphan('a flow parent still held');
        else if (job?.fate === 'dead' && state === 'dead') continue;
        else if (job?.mayStayScheduled && state === 'scheduled') continue;
        else orphan(`a row, state ${state}`);
      } else orphan(rest === 'ring' ? 'a ring entry for an empty lane' : /^g:.*:pending$/.test(rest) ? 'a lane entry' : 'not expected at the end');
    }
  }
}
