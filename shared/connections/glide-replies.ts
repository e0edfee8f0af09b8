// How glide hands over a server's error replies, undone: a reply error told apart from a
// transport failure, and the server's own wording restored. Node only.
import { CircuitBreakerError, ConfigurationError, ConnectionError as GlideConnectionError, RequestError, TimeoutError } from '@valkey/valkey-glide';
import type { Outcome, Reply } from '../connection.js';

// Client-side failures glide reports as a plain RequestError, not a subclass (seen when a
// cluster primary is killed: "BrokenPipe: Cluster: Failed to receive command response…").
const CLIENT_SIDE = /^(?:BrokenPipe|IoError|IO error|FatalSendError|FatalReceiveError|ClusterConnectionNotFound|ConnectionNotFoundForRoute|Disconnected)\b/;

/** A server's error reply, as opposed to a transport failure (glide uses subclasses for most of those). */
export function isReplyError(err: unknown): err is RequestError {
  return (
    err instanceof RequestError &&
    !(err instanceof TimeoutError) &&
    !(err instanceof GlideConnectionError) &&
    !(err instanceof CircuitBreakerError) &&
    !(err instanceof ConfigurationError) &&
    !CLIENT_SIDE.test(err.message)
  );
}

// glide rewords error replies. Replies with a known code arrive as "An error was signalled
// by the server: - <Kind>: <rest>" (NoScriptError for NOSCRIPT, ResponseError for ERR...);
// any other reply as "<first word>: <rest>" ("-EMQKIND job..." → "EMQKIND: job..."). Callers
// (NOSCRIPT and TRYAGAIN are recognized by their first word), and the gateway's clients,
// expect the server's own words, so the rewording is undone.
// (One case cannot be: a one-word reply such as "-OOPS" arrives as "ResponseError: OOPS",
// just like "-ERR OOPS".)
const GLIDE_KINDS: Record<string, string> = {
  ResponseError: 'ERR',
  NoScriptError: 'NOSCRIPT',
  ExecAbortError: 'EXECABORT',
  BusyLoadingError: 'LOADING',
  TryAgain: 'TRYAGAIN',
  ClusterDown: 'CLUSTERDOWN',
  CrossSlot: 'CROSSSLOT',
  MasterDown: 'MASTERDOWN',
  ReadOnly: 'READONLY',
  NotBusy: 'NOTBUSY',
  Moved: 'MOVED',
  Ask: 'ASK',
};

/** The error reply as the server worded it. */
export function serverWording(message: string): string {
  const known = /^An error was signalled by the server: - ([A-Za-z]+): ([^]*)$/.exec(message);
  if (known) return `${GLIDE_KINDS[known[1]!] ?? known[1]} ${known[2]}`;
  const other = /^(\S*): ([^]*)$/.exec(message);
  return other ? `${other[1]} ${other[2]}` : message;
}

/**
 * A script's (or GET's) reply as an outcome. Script replies are RESP2's shapes already
 * (Lua tables arrive as arrays, true as 1, false as null), so the value is kept as it is.
 */
export function scriptOutcome(value: unknown): Outcome {
  if (isReplyError(value)) return { ok: false, error: serverWording(value.message) };
  return { ok: true, value: value as Reply };
}

/** A write fewer replicas than asked for confirmed in time: retry it with the same id. */
