// The webhooks verb: signed deliveries to POST /v1/webhooks/{source}, each signed by its
// provider's own library, and a provider's redeliveries of them. Two kinds: `standard`
// (Standard Webhooks: the delivery id is signed, so the dedup key is the id) and `github`
// (HMAC of the body: the key is the body's). A delivery goes out once, or twice at the same
// moment (a provider's retry racing its first try); some are delivered again once the job
// has completed (polled until GET answers 404): re-signed with a fresh timestamp under the
// same webhook-id, or the same body under the same or a fresh X-GitHub-Delivery. Every
// answer for one delivery must name one job id; a redelivery answers 200 duplicate.
import { randomBytes, randomUUID } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { digest } from './library/consumer.js';
import type { Fate, Ledger, SentJob } from './ledger.js';
import type { Answer } from './producers.js';

export interface Hooks {
  /** EMQ_SOURCES. */
  sources: Record<string, unknown>;
  queue: string;
  standard: Webhook;
  githubSecret: string;
}

export const STANDARD_SOURCE = 'soak-std';
export const GITHUB_SOURCE = 'soak-gh';

/** Two sources into `queue`, with fresh secrets. */
export function webhookSources(queue: string): Hooks {
  const standardSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const githubSecret = randomBytes(24).toString('hex');
  return {
    sources: {
      [STANDARD_SOURCE]: { kind: 'standard', secrets: [standardSecret], queue },
      [GITHUB_SOURCE]: { kind: 'github', secrets: [githubSecret], queue },
    },
    queue,
    standard: new Webhook(standardSecret),
    githubSecret,
  };
}

export interface HookContext {
  call(method: string, path: string, body?: string, headers?: Record<string, string>): Promise<Answer | null>;
  ack(a: Answer | null, jobs: SentJob[], what: string): boolean;
  ledger: Ledger;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function deliver(hooks: Hooks, unique: string, fate: Fate, o: HookContext): Promise<void> {
  const { ledger } = o;
  const standard = Math.random() < 0.5;
  const body = `webhook~${fate}~${unique}|{"type":"soak.delivery","pad":"${randomBytes(Math.floor(Math.random() * 100)).toString('hex')}"}`;
  const deliveryId = standard ? `msg_${unique}_${randomBytes(6).toString('hex')}` : randomUUID();
  const signed = async (githubDelivery = deliveryId): Promise<Record<string, string>> => {
    const seconds = Math.floor(Date.now() / 1000);
    return standard
      ? {
          'Content-Type': 'application/json',
          'webhook-id': deliveryId,
          'webhook-timestamp': String(seconds),
          'webhook-signature': hooks.standard.sign(deliveryId, new Date(seconds * 1000), body),
        }
      : {
          'Content-Type': 'application/json',
          'X-Hub-Signature-256': await githubSign(hooks.githubSecret, body),
          'X-GitHub-Delivery': githubDelivery,
          'X-GitHub-Event': 'push',
        };
  };
  const path = `/v1/webhooks/${standard ? STANDARD_SOURCE : GITHUB_SOURCE}`;
  const send = (headers: Record<string, string>) => o.call('POST', path, body, headers);

  const headers = await signed();
  const together = Math.random() < 0.3;
  const answers = together ? await Promise.all([send(headers), send(headers)]) : [await send(headers)];
  const landed = answers.filter((a) => a && (a.status === 200 || a.status === 201));
  const id = typeof landed[0]?.body.id === 'string' ? landed[0].body.id : `?${unique}`;
  const job: SentJob = { id, queue: hooks.queue, verb: 'webhook', fate, digest: digest(new TextEncoder().encode(body)), acked: false };
  ledger.jobs.set(id, job);
  const first = answers.find((a) => a?.status === 201) ?? landed[0] ?? answers[0] ?? null;
  if (!o.ack(first, [job], `webhook ${standard ? 'standard' : 'github'} ${deliveryId}`)) return;
  ledger.webhooks.deliveries++;
  if (together) {
    ledger.webhooks.concurrent++;
    // one delivery, one job: both answers name it, one of them a duplicate
    const ids = new Set(landed.map((a) => a!.body.id));
    const dup = landed.some((a) => a!.status === 200 && a!.body.verdict === 'duplicate');
    if (landed.length !== 2 || ids.size !== 1 || !dup) ledger.webhooks.mismatch++, other(ledger, landed, job);
  }
  if (Math.random() >= 0.4) return;
  // a redelivery once the job is done (GET answers 404; a doomed one waits in the dead set)
  let done = false;
  for (let polls = 0; polls < 75 && !done; polls++) {
    await sleep(200);
    const a = await o.call('GET', `/v1/queues/${hooks.queue}/jobs/${id}`);
    done = a?.status === 404 || a?.body.state === 'dead';
  }
  const again = await send(await signed(Math.random() < 0.5 ? deliveryId : randomUUID()));
  ledger.webhooks.redelivered++;
  if (done) ledger.webhooks.afterCompletion++;
  if (again?.status !== 200 || again.body.id !== id || again.body.verdict !== 'duplicate') ledger.webhooks.mismatch++, other(ledger, [again], job);
}

/** A second job for one delivery is still a job sent: in the ledger, so it is judged too. */
function other(ledger: Ledger, answers: Array<Answer | null>, job: SentJob) {
  for (const a of answers) {
    const id = a?.body.id;
    if (typeof id === 'string' && id !== job.id && (a!.status === 200 || a!.status === 201)) ledger.jobs.set(id, { ...job, id, ackedAt: Date.now() });
  }
}
