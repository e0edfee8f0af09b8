// The errors a route meets, as the problems its caller sees. Our own checks made before
// anything is sent (a queue name, a job id, a payload's form, a flow's shape) keep their
// messages: they say what to fix and hold only what the caller sent. Everything that can come
// from the Valkey path (the REST transport, the gateway, glide, Valkey) answers a fixed text:
// its message may name the gateway's URL or hold an upstream's own words. That message is
// kept on the problem as `hidden`, for the operator's log line under the request id.
import {
  AuthError,
  BatchError,
  ConflictError,
  ConnectionError,
  EmqError,
  InvalidFlowError,
  InvalidArgumentError,
  InvalidIdError,
  InvalidPayloadError,
  InvalidQueueError,
  KindError,
  type PartlyLanded,
  TooLargeError,
  WireMismatchError,
  WrongTypeError,
} from '../../shared/index.js';
import { publicFound } from '../../shared/fence.js';
import { ClientClosed } from '../http/body.js';
import { Problem } from './problem.js';

/**
 * InvalidPayloadError's host-side messages (shared/enqueue.ts checkPayload; the REST
 * transport's check, made before sending, that a command has an exact form), with the
 * `job N: ` / `child N: ` prefix a batch or flow adds. Any other (a gateway's 413...) is hidden.
 */
const HOST_SIDE_PAYLOAD =
  /^(?:(?:job|child) \d+: )?(?:call \d+: )?(?:payload (?:must be a Uint8Array|string has a lone surrogate)|a call [^:]*has no exact form on a REST endpoint without Emq-Arg-Encoding$)/;

const hiding = (status: Problem['status'], code: Problem['code'], detail: string, err: unknown) =>
  new Problem(status, code, detail, {}, err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** A typed error from the enqueue package, as the problem a caller sees. */
export function problemOf(err: unknown): Problem {
  if (err instanceof Problem) return err;
  // (ContentfulStatusCode has no 499: nginx's, not IANA's)
  if (err instanceof ClientClosed) return new Problem(499 as Problem['status'], 'client_closed', err.message);
  if (err instanceof InvalidQueueError) return new Problem(400, 'invalid_queue', err.message);
  if (err instanceof InvalidIdError) return new Problem(400, 'invalid_id', err.message);
  // a control verb's argument (the routes check theirs first: this is the host-side check's word)
  if (err instanceof InvalidArgumentError) return new Problem(400, 'invalid_body', err.message);
  // the wire's kind refusal, whether host-side or the script's own gate (our scripts' text)
  if (err instanceof KindError) return new Problem(400, 'invalid_id', `EMQKIND: ${err.message}`);
  if (err instanceof InvalidPayloadError) {
    if (HOST_SIDE_PAYLOAD.test(err.message)) return new Problem(400, 'invalid_payload', err.message);
    return hiding(400, 'invalid_payload', 'the Valkey path refused the request as too large or malformed; nothing about it is shown here', err);
  }
  // the request cannot travel within the REST connection's bounds (rest-encode.ts: our own
  // words, nothing sent), or the endpoint refused it (its URL and words: hidden)
  if (err instanceof TooLargeError) {
    if (!err.byEndpoint) return new Problem(413, 'payload_too_large', err.message);
    return hiding(413, 'payload_too_large', 'the Valkey path refused the request as too large; nothing was written', err);
  }
  if (err instanceof WrongTypeError) return hiding(409, 'conflict', "the queue's keys hold another type; nothing was written", err);
  if (err instanceof WireMismatchError) {
    // versions are shown, an error reply's words are not (NOPERM names the Valkey user)
    const found = publicFound(err.found);
    return new Problem(
      503,
      'wire_mismatch',
      new WireMismatchError(err.expected, found).message,
      { expected: err.expected, found },
      found === err.found ? undefined : err.message,
    );
  }
  if (err instanceof ConnectionError) {
    return hiding(503, 'unavailable', 'the Valkey path did not answer; retry the same request (its Idempotency-Key makes that safe)', err);
  }
  if (err instanceof AuthError) return hiding(502, 'upstream_auth', "the gateway refused this producer's token: check EMQ_REST_TOKEN", err);
  if (err instanceof BatchError) return problemOf(err.cause);
  if (err instanceof EmqError) return hiding(502, 'internal', `Valkey answered an error (${err.code})`, err);
  return new Problem(500, 'internal', 'an unexpected error; nothing about it is shown here');
}

/**
 * An error a route threw, as the problem its caller sees; told to the operator (stderr, with
 * the request's id) when it is theirs to see: a misconfiguration, the unexpected, and the
 * detail a fixed text stands for.
 */
export function reportedProblem(err: unknown, method: string, path: string, id?: string): Problem {
  const p = problemOf(err);
  const at = id === undefined ? `${method} ${path}` : `request ${id}: ${method} ${path}`;
  // a misconfiguration's detail names variables, never their values
  if (p.code === 'misconfigured') console.error(`producer: misconfigured: ${p.detail}`);
  else if (p.hidden !== undefined) console.error(`producer: ${at}: ${p.code}: ${p.hidden}`);
  else if (p.code === 'internal') console.error(`producer: ${at}: ${(err as Error).stack ?? String(err)}`);
  return p;
}

/**
 * A flow's refusals as problems: a child id that names another job is 409 job_exists with its
 * index; an error after the parent was held carries the ids to send the same flow again with.
 */
export function flowProblem(err: unknown): Problem {
  const index = err instanceof Error ? /^child (\d+): /.exec(err.message)?.[1] : undefined;
  const at = index === undefined ? {} : { index: Number(index) };
  if (err instanceof ConflictError) return new Problem(409, 'job_exists', err.message, at);
  if (err instanceof InvalidFlowError) return new Problem(400, 'invalid_flow', err.message, at);
  const p = problemOf(err);
  const partly = (err as Partial<PartlyLanded>).flow;
  if (!partly) return index === undefined ? p : new Problem(p.status, p.code, p.detail, { ...p.extra, ...at }, p.hidden);
  const detail = `${p.detail}; the parent is held and some children may have landed: send the same flow again with these ids to complete it`;
  return new Problem(p.status, p.code, detail, { ...p.extra, flow: { parent: { id: partly.parent.id }, children: partly.children } }, p.hidden);
}
