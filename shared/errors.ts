// Typed errors. `code` is stable (HTTP problem types and CLI exit codes map from it);
// messages say what is wrong and what to do, and never carry secrets or payloads.

export type ErrorCode =
  | 'invalid_queue'
  | 'invalid_id'
  | 'invalid_payload'
  | 'invalid_flow'
  | 'invalid_argument'
  | 'too_large'
  | 'kind'
  | 'layout'
  | 'wrong_type'
  | 'conflict'
  | 'server'
  | 'connection'
  | 'auth'
  | 'protocol'
  | 'wire_mismatch';

export class EmqError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The caller's input breaks a rule; nothing was sent or written. Fix the input, do not retry. */
export class RefusalError extends EmqError {}

export class InvalidQueueError extends RefusalError {
  constructor(message: string) {
    super('invalid_queue', message);
  }
}

export class InvalidIdError extends RefusalError {
  constructor(message: string) {
    super('invalid_id', message);
  }
}

export class InvalidPayloadError extends RefusalError {
  constructor(message: string) {
    super('invalid_payload', message);
  }
}

/** A flow's shape breaks a rule: no children or too many, a repeated id, a nested flow, an unknown failure policy. */
export class InvalidFlowError extends RefusalError {
  constructor(message: string) {
    super('invalid_flow', message);
  }
}

/** A control verb's argument breaks its rule (a lane's limit or weight, a page's cursor or size); nothing was sent. */
export class InvalidArgumentError extends RefusalError {
  constructor(message: string) {
    super('invalid_argument', message);
  }
}

/**
 * The call cannot travel within the transport's bounds: one request's body, or the requests
 * one call may take (shared/connections/rest-encode.ts), refused before anything was sent; or
 * the REST endpoint's own 413, which wrote nothing either.
 */
export class TooLargeError extends RefusalError {
  /** `byEndpoint`: the REST endpoint refused it (413), and the message holds its URL and words. */
  constructor(
    message: string,
    readonly byEndpoint = false,
  ) {
    super('too_large', message);
  }
}

/** The id is not JOB-namespaced (refused host-side, or by the script's EMQKIND gate). */
export class KindError extends RefusalError {
  constructor(message = 'job id must be JOB-namespaced') {
    super('kind', message);
  }
}

/** The script's EMQLAYOUT gate: keys and id do not belong together. */
export class LayoutError extends RefusalError {
  constructor(message: string) {
    super('layout', message);
  }
}

/** The pending key holds something other than a sorted set; nothing was written. */
export class WrongTypeError extends RefusalError {
  constructor(message: string) {
    super('wrong_type', message);
  }
}

/**
 * EMQCONFLICT: an Idempotency-Key or delivery id used before with another payload, or a flow
 * child's id that names another job. Nothing was written (a flow with a child in another queue
 * refused after its parent was held says so, and carries the ids to send it again with).
 */
export class ConflictError extends RefusalError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** Any other error reply from the server, passed up with its text. */
export class ServerError extends EmqError {
  constructor(message: string) {
    super('server', message);
  }
}

/** The transport failed (unreachable, timed out, closed). The job may or may not have landed: retry with the same id. */
export class ConnectionError extends EmqError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('connection', message, options);
  }
}

/**
 * A write asked to wait for replicas (?wait=N, Emq-Wait) reached fewer of them in time: it is on
 * the primary (or was, if it just failed), not yet safe from a failover. Sending the same call
 * again with the same id (or Idempotency-Key) is safe: it answers duplicate and waits again.
 */
export class NotReplicatedError extends ConnectionError {
  constructor(
    message: string,
    /** Replicas that confirmed (the fewest over the nodes written). */
    readonly replicas: number,
    /** Replicas asked for. */
    readonly wanted: number,
  ) {
    super(message);
  }
}

/** The gateway or REST endpoint refused the credentials (401, 403). Fix the token; retrying will not help. */
export class AuthError extends EmqError {
  constructor(message: string) {
    super('auth', message);
  }
}

/**
 * Valkey's `{emq}:version` holds another wire version than this process speaks, so EchoMQ's
 * workers would not take what it writes: nothing was written. Not retried by the connections;
 * it clears once an operator makes the two match (the key set to `expected`, or deleted).
 * `found` is shown escaped, as printable ASCII, and truncated.
 */
export class WireMismatchError extends EmqError {
  constructor(
    readonly expected: string,
    readonly found: string,
    message = `{emq}:version is ${found} but this producer speaks ${expected}: nothing is written until they match`,
  ) {
    super('wire_mismatch', message);
  }
}

/** The server answered something the protocol does not allow. */
export class ProtocolError extends EmqError {
  constructor(message: string) {
    super('protocol', message);
  }
}

/**
 * The prefix of an error reply ("NOSCRIPT", "EMQKIND", ...). Clients reword replies:
 * glide turns "EMQKIND job..." into "EMQKIND: job..." and NOSCRIPT into
 * "...NoScriptError: No matching script.", so NOSCRIPT is recognised by its text too.
 */
export function errorPrefix(message: string): string {
  if (/\bNOSCRIPT\b|NoScriptError|No matching script/i.test(message)) return 'NOSCRIPT';
  return /^[A-Z][A-Z0-9_]*/.exec(message)?.[0] ?? '';
}

/** Maps a server error reply to the typed error the protocol gives it. */
export function fromReply(message: string): EmqError {
  const text = message.replace(/^[A-Z][A-Z0-9_]*:?\s*/, '');
  switch (errorPrefix(message)) {
    case 'EMQKIND':
      return new KindError(text || undefined);
    case 'EMQLAYOUT':
      return new LayoutError(text);
    case 'WRONGTYPE':
      return new WrongTypeError(text);
    case 'EMQCONFLICT':
      return new ConflictError(text);
    default:
      return new ServerError(message);
  }
}

/** A bulk or simple reply as text (replies arrive as bytes or strings depending on the transport). */
export function replyText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return value instanceof Uint8Array ? new TextDecoder().decode(value) : undefined;
}

/** A reply as short JSON for an error's text (bytes as text, at most 200 characters). */
export function shownReply(value: unknown): string {
  const json = JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v instanceof Uint8Array ? replyText(v) : v));
  return (json ?? String(value)).slice(0, 200);
}
