// The Connection seam: the only thing the protocol needs from a transport.
// A transport (glide over TCP, REST over fetch) implements these three calls.
import type { Observer } from './observe.js';

/** A command argument: text (sent as UTF-8) or raw bytes (sent exactly). */
export type Arg = string | Uint8Array;

/** What a script can return; text and bulk replies may arrive as either form. */
export type Reply = number | bigint | string | Uint8Array | null | Reply[];

/** One script invocation in a pipeline. `eval` carries the text, `evalsha` its SHA-1. */
export type ScriptCommand =
  | { op: 'evalsha'; sha1: string; keys: readonly string[]; args: readonly Arg[] }
  | { op: 'eval'; script: string; keys: readonly string[]; args: readonly Arg[] };

/** One pipelined command's outcome: its reply, or the server's error reply text. */
export type Outcome = { ok: true; value: Reply } | { ok: false; error: string };

export interface Connection {
  /** Runs one EVALSHA or EVAL. Like `pipeline`, error replies resolve as outcomes. */
  run(command: ScriptCommand): Promise<Outcome>;
  /**
   * Runs each command in order, pipelined (one round trip where the transport can), not
   * as a transaction: each script is atomic on its own. Server error replies come back
   * as outcomes; only transport failures reject, with a ConnectionError.
   */
  pipeline(commands: readonly ScriptCommand[]): Promise<Outcome[]>;
  /**
   * Throws (TooLargeError) when `pipeline` could not send these commands within the
   * transport's bounds, sending none of them: for a caller that writes other calls first (a
   * flow holds its parent before its children land). Absent: the transport has no such bound.
   */
  check?(commands: readonly ScriptCommand[]): Promise<void>;
  /**
   * One step of a walk over the keys matching `match` (SCAN cursor MATCH match COUNT count):
   * `cursor` '0' to start, else the one the step before answered; answers the next ('0': the
   * walk is done) and the keys met. On a cluster the cursor covers every primary in turn
   * (shared/queue-list.ts: its form). Absent: the transport cannot walk the keyspace. Only
   * the queue listing calls it, with its own pattern (a gateway allows no other).
   */
  scan?(cursor: string, match: string, count: number): Promise<ScanStep>;
  /** Releases the transport. */
  close(): Promise<void>;
  /** Told of every script call's outcome, fallback and retry made on this connection (shared/observe.ts). */
  readonly observer?: Observer | undefined;
  /**
   * This connection for one request: its calls carry `headers` where the transport has headers
   * (REST: X-Request-Id, traceparent), and `observer` is told of them. Without it, see scoped().
   */
  withRequest?(scope: RequestScope): Connection;
}

/** One SCAN step's answer: the next cursor and the keys met (as bytes, or text). */
export interface ScanStep {
  cursor: string;
  keys: ReadonlyArray<string | Uint8Array>;
}

/** What one request adds to the calls it makes. */
export interface RequestScope {
  headers?: Readonly<Record<string, string>> | undefined;
  observer?: Observer | undefined;
  /**
   * After each write, WAIT until this many replicas have it, on the node that took it (glide:
   * the slot's primary; REST: the gateway does, asked by Emq-Wait); fewer in time rejects
   * with NotReplicatedError. A connection that cannot wait refuses the scope (see scoped()).
   */
  wait?: WaitFor | undefined;
}

/** Replicas to WAIT for after a write, and how long one WAIT may block. */
export interface WaitFor {
  replicas: number;
  timeoutMs: number;
}
