// The producer half's soak (soak/edge/run.ts): its producers: each POSTs jobs to the Worker in a closed loop with a client-minted
// id (Emq-Job-Id) and a payload of random bytes behind a unique tag, and on any failure
// (no answer, 5xx) sends the same request again, same id, until it is acknowledged.
import { mintId } from '../../shared/index.js';

export interface SentJob {
  queue: string;
  payload: Uint8Array;
  /** The job's unique tag, at the head of its payload (`p<producer>-<n>|`). */
  tag: string;
  acked: boolean;
}

export interface Ledger {
  jobs: Map<string, SentJob>;
  requests: number;
  retries: number;
  /** Acknowledged with 200 duplicate: a retry of a request whose first try had landed. */
  duplicates: number;
  /** 5xx answers other than 503, by status, with a sample body. */
  bad5xx: Map<number, { count: number; sample: string }>;
  /** 4xx answers: a well-formed job must never be refused. */
  refused: string[];
  /** Jobs still not acknowledged when their retry budget ran out. */
  gaveUp: number;
  /** The longest time one job took from its first failed try to its acknowledgement. */
  longestOutageMs: number;
}

export function newLedger(): Ledger {
  return { jobs: new Map(), requests: 0, retries: 0, duplicates: 0, bad5xx: new Map(), refused: [], gaveUp: 0, longestOutageMs: 0 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function payloadOf(tag: string): Uint8Array {
  const head = new TextEncoder().encode(`${tag}|`);
  const tail = crypto.getRandomValues(new Uint8Array(Math.floor(Math.random() * 512)));
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

export interface SoakProducerOptions {
  worker: URL;
  token: string;
  queues: readonly string[];
  /** Stop starting new jobs after this time (ms since epoch). */
  until: number;
  /** Give one job up after this long without an acknowledgement. */
  giveUpMs: number;
}

export async function produce(index: number, options: SoakProducerOptions, ledger: Ledger): Promise<void> {
  for (let n = 0; Date.now() < options.until; n++) {
    const id = mintId();
    const tag = `p${index}-${n}`;
    const queue = options.queues[(index + n) % options.queues.length]!;
    const job: SentJob = { queue, payload: payloadOf(tag), tag, acked: false };
    ledger.jobs.set(id, job);
    const url = new URL(`/v1/queues/${queue}/jobs`, options.worker);
    let firstFailure: number | undefined;
    for (let attempt = 0; ; attempt++) {
      ledger.requests++;
      if (attempt > 0) ledger.retries++;
      let status = 0;
      let body = '';
      try {
        const res = await fetch(url, {
          method: 'POST',
          body: job.payload,
          headers: { Authorization: `Bearer ${options.token}`, 'Emq-Job-Id': id, 'Content-Type': 'application/octet-stream' },
          signal: AbortSignal.timeout(20_000),
        });
        status = res.status;
        body = await res.text();
      } catch (err) {
        body = (err as Error).message;
      }
      if (status === 201 || status === 200) {
        job.acked = true;
        if (status === 200) ledger.duplicates++;
        if (firstFailure !== undefined) ledger.longestOutageMs = Math.max(ledger.longestOutageMs, Date.now() - firstFailure);
        break;
      }
      if (status >= 400 && status < 500) {
        ledger.refused.push(`${status} ${id}: ${body.slice(0, 200)}`);
        break;
      }
      if (status >= 500 && status !== 503) {
        const seen = ledger.bad5xx.get(status) ?? { count: 0, sample: body.slice(0, 200) };
        seen.count++;
        ledger.bad5xx.set(status, seen);
      }
      firstFailure ??= Date.now();
      if (Date.now() - firstFailure > options.giveUpMs) {
        ledger.gaveUp++;
        break;
      }
      await sleep(Math.min(1_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2));
    }
  }
}
