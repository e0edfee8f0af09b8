// POST /v1/webhooks/:source: a signed delivery from a configured source (webhooks/) becomes a
// job in the source's queue, once per delivery → 201 | 200 duplicate. Needs no token: the
// signature is the credential.
import { json, type Answer, type Call, type Service } from './call.js';
import { admit, withDefaultLane } from './jobs.js';
import { Problem } from './problem.js';
import { waitOf } from './wait.js';
import { requestBody, via } from './queue-routes.js';
import { dedupeOf } from './webhooks/dedupe.js';
import { delivered } from './webhooks/delivery.js';
import { envelope } from './webhooks/envelope.js';

export async function postWebhook(call: Call, service: Service): Promise<Answer> {
  const { request } = call;
  const { sources, maxPayloadBytes, dedupeTtlSeconds, groupOf } = service.settings();
  const wait = waitOf(call, service);
  // any name, configured or not, has its body read under the same cap and is refused alike
  // (webhooks/delivery.ts): names cannot be probed by an answer's text or its timing
  const body = await requestBody(call, maxPayloadBytes, 'the payload');
  const headers = { get: (name: string) => request.header(name) ?? null };
  const verified = await delivered(sources, request.param('source') ?? '', headers, body);
  if ('code' in verified) {
    call.record.reason = verified.reason; // what the refusal stands for: the operator's log line only
    throw new Problem(verified.status, verified.code, verified.detail);
  }
  const { source, delivery } = verified;
  const payload = envelope(source, delivery, request.header('Content-Type') ?? '', body);
  // keyed on what is signed: the delivery id where the scheme signs it, else the body
  const { scope, key } = await dedupeOf(source, delivery, body);
  // the source's lane (else the queue's default lane) and delay, checked at start
  const placement = withDefaultLane(source.queue, { group: source.group, inMs: source.delayMs }, groupOf);
  const once = { scope, key, compare: false, ttlSeconds: dedupeTtlSeconds };
  const { id, verdict } = await admit(via(call, service, source.queue, wait), source.queue, { payload, placement }, service.mint, once);
  return json(call, verdict === 'duplicate' ? 200 : 201, { id, queue: source.queue, verdict });
}
