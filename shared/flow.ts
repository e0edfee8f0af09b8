// addFlow: a parent job and its children on the library's wire (EchoMQ.Flows.add). The
// children are claimable at once; the parent is held (state awaiting_children) with its count
// of children at <parent row>:dependencies, and the library's consumer releases it to pending
// when its last child completes. Every child in the parent's queue: one atomic script (@flow),
// one round trip. A child in another queue: the library's order, parent first: every child is
// checked (@flow-child check), the parent held (@flow-parent), then each child lands in its
// own queue's slot (@flow-child land), each step idempotent, so sending the same flow again
// after a failure halfway completes it and duplicates nothing.
import type { Arg, Connection, Outcome } from './connection.js';
import { evalsha, runScript } from './dispatch.js';
import { ConflictError, EmqError, InvalidFlowError, ProtocolError, errorPrefix, fromReply, replyText } from './errors.js';
import { MINT_TRIES, checkPayload, collisionError, type Payload, type Verdict } from './enqueue.js';
import { sendMinted } from './batch.js';
import { mintId, remint } from './ids.js';
import { dependenciesKey, flowOutboxKey, jobKey, pendingKey, processedKey, validateId, validateQueue } from './keyspace.js';
import { flowChildScript, flowParentScript, flowScript } from './scripts.js';

/** The most children one flow takes. */
export const FLOW_MAX_CHILDREN = 1000;

/**
 * What a child's death does to its parent: `fail-parent` (the default) fails the parent too;
 * `ignore` counts the child as done. Written on the child's row as the library's
 * `parent_policy`, `fp` or `id`.
 */
export type FailurePolicy = 'fail-parent' | 'ignore';

export interface FlowChildInput {
  /** The child's id; one is minted when absent. */
  id?: string | undefined;
  payload: Payload;
  /** The queue the child runs in; the parent's when absent. */
  queue?: string | undefined;
  onFailure?: FailurePolicy | undefined;
}

export interface FlowInput {
  parent: { id?: string | undefined; payload: Payload };
  children: readonly FlowChildInput[];
}

export interface FlowJob {
  queue: string;
  id: string;
}

export interface FlowResult {
  /** `enqueued` when this call landed anything; `duplicate` when the whole flow was there already, or the parent's id is in use. */
  verdict: Verdict;
  parent: FlowJob;
  /** In the order given. */
  children: FlowJob[];
}

/** What an error thrown after a flow's parent was held carries: the ids to send the same flow again with. */
export interface PartlyLanded {
  flow: { parent: FlowJob; children: FlowJob[] };
}

const POLICY = { 'fail-parent': 'fp', ignore: 'id' } as const;
const utf8 = new TextEncoder();

interface Checked {
  parentQueue: string;
  parentId: string | undefined;
  parentPayload: Payload;
  children: Array<{ queue: string; id: string | undefined; payload: Payload; policy: 'fp' | 'id' }>;
}

/** Checks everything about a flow before anything is sent; an error names the child by its index. */
function checkFlow(queue: string, flow: FlowInput): Checked {
  validateQueue(queue);
  if (flow === null || typeof flow !== 'object') throw new InvalidFlowError('a flow is an object: { parent, children }');
  const { parent, children } = flow;
  if (parent === null || typeof parent !== 'object') throw new InvalidFlowError('a flow needs a parent: { id?, payload }');
  try {
    if (parent.id !== undefined) validateId(parent.id);
    checkPayload(parent.payload);
  } catch (err) {
    if (err instanceof Error) err.message = `parent: ${err.message}`;
    throw err;
  }
  if (!Array.isArray(children) || children.length === 0 || children.length > FLOW_MAX_CHILDREN) {
    const n = Array.isArray(children) ? `${children.length} children` : 'no children list';
    throw new InvalidFlowError(`a flow has 1 to ${FLOW_MAX_CHILDREN} children; this one has ${n}`);
  }
  const seen = new Map<string, string>(parent.id === undefined ? [] : [[parent.id, 'the parent']]);
  const checked = children.map((child: FlowChildInput, i) => {
    try {
      if (child === null || typeof child !== 'object') throw new InvalidFlowError('must be an object: { id?, payload, queue?, onFailure? }');
      if ((child as { children?: unknown }).children !== undefined) {
        throw new InvalidFlowError('has children of its own: nested flows are not supported');
      }
      const childQueue = child.queue ?? queue;
      validateQueue(childQueue);
      if (child.id !== undefined) {
        validateId(child.id);
        const before = seen.get(child.id);
        if (before) throw new InvalidFlowError(`repeats the id of ${before} (${child.id}): every job of a flow has its own id`);
        seen.set(child.id, `child ${i}`);
      }
      checkPayload(child.payload);
      const onFailure = child.onFailure ?? 'fail-parent';
      if (onFailure !== 'fail-parent' && onFailure !== 'ignore') {
        throw new InvalidFlowError(`onFailure is ${JSON.stringify(onFailure)}; it is fail-parent (the default) or ignore`);
      }
      return { queue: childQueue, id: child.id, payload: child.payload, policy: POLICY[onFailure] };
    } catch (err) {
      if (err instanceof Error) err.message = `child ${i}: ${err.message}`;
      throw err;
    }
  });
  return { parentQueue: queue, parentId: parent.id, parentPayload: parent.payload, children: checked };
}

/** Mints an id that no job of this flow has (a caller's id could equal a mint); `again` after a collision. */
function mintFresh(mint: () => string, taken: Set<string>, again: boolean): string {
  for (let i = 0; i < MINT_TRIES; i++) {
    const id = again || i > 0 ? remint(mint) : mint();
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
  throw collisionError(MINT_TRIES);
}

const bytesOf = (p: Payload) => (typeof p === 'string' ? utf8.encode(p) : p);
const numberOf = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);

function prefixed(err: EmqError, what: string): EmqError {
  err.message = `${what}: ${err.message}`;
  return err;
}

/** One addFlow call: the checked flow, its ids as they stand, and how to mint more. */
class Sending {
  readonly minted: boolean[];
  readonly parentMinted: boolean;
  readonly ids: string[];
  parentId: string;
  private readonly taken: Set<string>;

  constructor(
    readonly connection: Connection,
    readonly flow: Checked,
    readonly mint: () => string,
  ) {
    this.taken = new Set([flow.parentId, ...flow.children.map((c) => c.id)].filter((id) => id !== undefined));
    this.parentMinted = flow.parentId === undefined;
    this.parentId = flow.parentId ?? mintFresh(mint, this.taken, false);
    this.minted = flow.children.map((c) => c.id === undefined);
    this.ids = flow.children.map((c) => c.id ?? mintFresh(mint, this.taken, false));
  }

  /** A fresh id for the parent or child `i`, after its last one collided with another minter's. */
  remint(i?: number): void {
    if (i === undefined) this.parentId = mintFresh(this.mint, this.taken, true);
    else this.ids[i] = mintFresh(this.mint, this.taken, true);
  }

  result(verdict: Verdict): FlowResult {
    return {
      verdict,
      parent: { queue: this.flow.parentQueue, id: this.parentId },
      children: this.flow.children.map((c, i) => ({ queue: c.queue, id: this.ids[i]! })),
    };
  }
}

/**
 * Adds a flow: a parent and 1 to FLOW_MAX_CHILDREN children, each child in the parent's queue
 * or its own. The children are claimable at once, each carrying its parent (and the parent's
 * queue, when that is another) and its failure policy; the parent is held until its last
 * child completes. Ids not given are minted (and minted again should they collide with
 * another minter's).
 *
 * Resolves to `enqueued` and the ids, or `duplicate` when the parent's id is in use (nothing
 * written; for a flow whose children all run in the parent's queue that means the flow
 * landed before). Refusals throw typed errors naming the child by index: before anything is
 * sent (queue, id, payload, the flow's shape: InvalidFlowError), or a script's (a child's id
 * that names another job: ConflictError; kind, layout, wrong type); nothing is written.
 *
 * A child in another queue: the flow lands in steps (checked, parent held, children landed),
 * so an error after the parent was held (a transport failure, a child id taken in between)
 * leaves the parent held, never released, and carries `flow` (PartlyLanded): the ids to send
 * the same flow again with. Sending the same flow again (same ids, same payloads) lands the
 * children that are missing and skips those there, or completed; `enqueued` when it landed
 * any. A flow with a minted child whose parent an earlier send holds answers `duplicate`:
 * its children cannot be told apart from that send's, so give ids to flows meant to be sent
 * again.
 *
 * Over REST, a flow whose children all run in the parent's queue is one request, its payloads
 * the raw body; past a request line's length of keys and ids (some 100 children) it goes as
 * JSON (base64 arguments on this project's gateway). On a plain Upstash endpoint, JSON
 * carries UTF-8 only: payloads that are not UTF-8 are then refused whole (InvalidPayloadError),
 * nothing written. A flow too large for the REST connection's bounds (one request's body, or
 * the requests its children take) is refused (TooLargeError) before its parent is held.
 */
export async function addFlow(connection: Connection, queue: string, flow: FlowInput, mint: () => string = mintId): Promise<FlowResult> {
  const sending = new Sending(connection, checkFlow(queue, flow), mint);
  return sending.flow.children.every((c) => c.queue === queue) ? sameQueue(sending) : crossQueue(sending);
}

/** The child an @flow EMQCONFLICT names, as its index. */
function conflictIndex(error: string, ids: readonly string[]): number {
  const id = /\bchild \d+ (JOB[0-9A-Za-z]{11})\b/.exec(error)?.[1];
  return id === undefined ? -1 : ids.indexOf(id);
}

/** Every child in the parent's queue: @flow, one atomic call (again only after a collision). */
async function sameQueue(s: Sending): Promise<FlowResult> {
  const { parentQueue: queue, children } = s.flow;
  const payloads = [s.flow.parentPayload, ...children.map((c) => c.payload)].map(bytesOf);
  const all = new Uint8Array(payloads.reduce((n, p) => n + p.length, 0));
  payloads.reduce((at, p) => (all.set(p, at), at + p.length), 0);
  const pending = pendingKey(queue);
  for (let tries = 1; ; tries++) {
    const pid = s.parentId;
    const keys = [jobKey(queue, pid), dependenciesKey(queue, pid), pending, ...s.ids.map((id) => jobKey(queue, id))];
    const args: Arg[] = [pid, String(payloads[0]!.length), ...children.flatMap((c, i) => [s.ids[i]!, c.policy, String(payloads[i + 1]!.length)]), all];
    const outcome = await runScript(s.connection, flowScript, keys, args);
    if (outcome.ok) {
      const n = numberOf(outcome.value);
      if (n === children.length) return s.result('enqueued');
      if (n !== 0) throw new ProtocolError(`@flow replied ${String(n)}; expected ${children.length} or 0`);
      // the parent's id is in use: a duplicate, or (an id just minted) another minter's
      if (!s.parentMinted) return s.result('duplicate');
      if (tries >= MINT_TRIES) throw collisionError(MINT_TRIES);
      s.remint();
      continue;
    }
    const err = fromReply(outcome.error);
    const i = err instanceof ConflictError ? conflictIndex(outcome.error, s.ids) : -1;
    if (i < 0) throw err;
    if (!s.minted[i]) throw new ConflictError(`child ${i}: job ${s.ids[i]} exists already; a flow's children are new jobs. Nothing was written`);
    if (tries >= MINT_TRIES) throw collisionError(MINT_TRIES);
    s.remint(i);
  }
}

/** A reply of @flow-child: 1 (would land, or landed) or 0 (there, or was). */
function childFlag(outcome: Outcome): 0 | 1 | undefined {
  const v = outcome.ok ? numberOf(outcome.value) : undefined;
  return v === 0 || v === 1 ? v : undefined;
}

/**
 * A minted child id another minter had taken: EMQCONFLICT (its row is another job's), or, in
 * a check, a 0 too. A 0 when landing says the row is this parent's child: this very call,
 * sent again by the transport after its answer was lost (the parent was held by this call).
 */
const childCollided = (mode: 'check' | 'land') => (o: Outcome) => (mode === 'check' && childFlag(o) === 0) || (!o.ok && errorPrefix(o.error) === 'EMQCONFLICT');

/** A child in another queue: checked, the parent held, then the children landed, each in its own slot. */
async function crossQueue(s: Sending): Promise<FlowResult> {
  const { parentQueue: queue, children } = s.flow;
  const n = children.length;
  const callOf = (i: number, id: string, mode: 'check' | 'land') => {
    const c = children[i]!;
    const here = c.queue === queue;
    const keys = [jobKey(c.queue, id), pendingKey(c.queue), here ? processedKey(queue, s.parentId) : flowOutboxKey(c.queue)];
    // the parent's queue even when it is the child's (the script reads that as empty): over
    // REST an empty argument sends the call as JSON, which cannot carry a payload that is not UTF-8
    const args: Arg[] = [id, s.parentId, queue, c.policy, mode];
    return evalsha(flowChildScript, keys, mode === 'land' ? [...args, c.payload] : args);
  };
  /** The children at `which`, checked or landed as one pipeline, minted ids that collide minted again; an outcome each. */
  const send = async (which: number[], mode: 'check' | 'land') => {
    if (which.length === 0) return [];
    const sub = which.map((i) => s.ids[i]!);
    const subMinted = which.map((i) => s.minted[i]!);
    const outcomes = await sendMinted(s.connection, [flowChildScript], sub, subMinted, (k) => callOf(which[k]!, sub[k]!, mode), childCollided(mode), s.mint);
    which.forEach((i, k) => (s.ids[i] = sub[k]!));
    return outcomes;
  };
  /** The first child's refusal among `outcomes`, named by its index; a 0 is one unless `thereIsFine`. */
  const refusal = (which: number[], outcomes: Outcome[], thereIsFine: boolean) => {
    for (let k = 0; k < which.length; k++) {
      const o = outcomes[k]!;
      const i = which[k]!;
      const flag = childFlag(o);
      if (flag === 1 || (flag === 0 && thereIsFine)) continue;
      if (flag === 0) return new ConflictError(`child ${i}: job ${s.ids[i]} is there as a child of the parent ${s.parentId}, an id just minted`);
      if (o.ok) return new ProtocolError(`child ${i}: @flow-child replied ${JSON.stringify(String(o.value))}; expected 1 or 0`);
      return prefixed(fromReply(o.error), `child ${i}`);
    }
    return undefined;
  };
  const every = Array.from({ length: n }, (_, i) => i);

  // 0. the children's landing fits the transport's bounds (a REST endpoint's requests), or
  // the flow is refused here, before its parent is held
  await s.connection.check?.(every.map((i) => callOf(i, s.ids[i]!, 'land')));

  // 1. every child checked in its own slot, before anything is written
  const checks = await send(every, 'check');
  const refused = refusal(every, checks, !s.parentMinted);
  if (refused) {
    if (refused instanceof ConflictError) refused.message += '. Nothing was written';
    throw refused;
  }

  // 2. the parent held, or found held by an earlier send of this flow
  let fresh = false;
  let completed = new Set<string>();
  for (let tries = 1; ; tries++) {
    const pid = s.parentId;
    const keys = [jobKey(queue, pid), dependenciesKey(queue, pid), processedKey(queue, pid)];
    const outcome = await runScript(s.connection, flowParentScript, keys, [pid, String(n), s.flow.parentPayload]);
    if (!outcome.ok) throw prefixed(fromReply(outcome.error), 'parent');
    const v = numberOf(outcome.value);
    const earlier = Array.isArray(v) && numberOf(v[0]) === 2;
    if (v === 1) {
      fresh = true;
      break;
    }
    if (v !== 0 && !earlier) throw new ProtocolError(`@flow-parent replied ${JSON.stringify(String(v))}; expected 1, 0 or {2, ...}`);
    // an id just minted: another minter's (even held with this payload: taking another's
    // parent would corrupt both flows, while a transport's resend of this very call after a
    // lost answer only leaves that held parent behind, never released)
    if (s.parentMinted) {
      if (tries >= MINT_TRIES) throw collisionError(MINT_TRIES);
      s.remint();
      continue;
    }
    if (!earlier || s.minted.some(Boolean)) return s.result('duplicate');
    completed = new Set((v as unknown[]).slice(1).map((id) => replyText(id) ?? ''));
    // a child the parent counted that this flow does not name: another flow's parent
    if ([...completed].some((id) => !s.ids.includes(id))) return s.result('duplicate');
    break;
  }

  // 3. each child lands in its own slot, but those whose completion the parent has counted, and
  const partly = (err: EmqError) => {
    const { parent, children: all } = s.result('enqueued');
    (err as EmqError & Partial<PartlyLanded>).flow = { parent, children: all };
    err.message += ` (the flow is partly landed: its parent ${parent.queue}/${parent.id} is held until every child lands; send the same flow again, with the same ids, to complete it)`;
    return err;
  };
  // not those found there by the check either (a row, or a completion in the child's outbox): the
  // Pump may since have moved that completion to the parent's :processed after step 2 read it,
  // where neither step 2 nor the landing would see it, and the child would run again
  const there = new Set(every.filter((i) => childFlag(checks[i]!) === 0));
  const which = every.filter((i) => !completed.has(s.ids[i]!) && !there.has(i));
  let outcomes: Outcome[];
  try {
    outcomes = await send(which, 'land');
  } catch (err) {
    throw err instanceof EmqError ? partly(err) : err;
  }
  const failed = refusal(which, outcomes, true);
  if (failed) throw partly(failed);
  return s.result(fresh || outcomes.some((o) => childFlag(o) === 1) ? 'enqueued' : 'duplicate');
}
