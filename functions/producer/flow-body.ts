// A flow request's body:
//   {"parent":   {"payload" | "payloadBase64", "id"?},
//    "children": [{"payload" | "payloadBase64", "id"?, "queue"?, "onFailure"?}, …]}
// 1 to `maxChildren` children, each payload within the payload limit, ids distinct, no nested
// children. Everything is checked before anything is written; the first bad child is named
// by index.
import { validateQueue } from '../../shared/index.js';
import { itemId, itemPayload, jsonOf } from './batch.js';
import { Problem } from './problem.js';

export type OnFailure = 'fail-parent' | 'ignore';

export interface FlowBodyJob {
  id?: string | undefined;
  payload: Uint8Array;
}

export interface FlowChild extends FlowBodyJob {
  /** The child's queue; absent: the parent's. */
  queue?: string | undefined;
  onFailure: OnFailure;
}

export interface FlowBody {
  parent: FlowBodyJob;
  children: FlowChild[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function refuse(detail: string, extra: Record<string, unknown> = {}): Problem {
  return new Problem(400, 'invalid_flow', detail, extra);
}

export function parseFlow(body: Uint8Array, maxChildren: number, maxPayloadBytes: number): FlowBody {
  const parsed = jsonOf(body);
  if (!parsed || !isObject(parsed.value)) {
    throw refuse('the body must be a UTF-8 JSON object {"parent": {"payload"}, "children": [{"payload"}, …]}');
  }
  const { parent, children, ...rest } = parsed.value;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw refuse(`unknown field "${unknown[0]}"; fields are parent and children`);

  if (!isObject(parent)) throw refuse('parent must be an object {"payload"} or {"payloadBase64"}, with an optional "id"');
  const atParent = (detail: string) => refuse(`parent: ${detail}`);
  const { payload, payloadBase64, id, ...parentRest } = parent;
  if ('children' in parentRest) throw atParent('put children at the top level, beside parent');
  const parentUnknown = Object.keys(parentRest);
  if (parentUnknown.length > 0) throw atParent(`unknown field "${parentUnknown[0]}"; fields are payload, payloadBase64 and id`);
  const parentJob = job(payload, payloadBase64, id, maxPayloadBytes, atParent);

  if (!Array.isArray(children) || children.length === 0) throw refuse('children must be a non-empty array');
  if (children.length > maxChildren) throw refuse(`${children.length} children; a flow holds at most ${maxChildren}`);
  const seen = new Map<string, string>(parentJob.id === undefined ? [] : [[parentJob.id, 'the parent']]);
  const kids = children.map((child: unknown, i): FlowChild => {
    const at = (detail: string) => refuse(`child ${i}: ${detail}`, { index: i });
    if (!isObject(child)) throw at('must be an object');
    const { payload, payloadBase64, id, queue, onFailure, ...childRest } = child;
    if ('children' in childRest) throw at('nested children are not supported: a child cannot have children of its own');
    const childUnknown = Object.keys(childRest);
    if (childUnknown.length > 0) throw at(`unknown field "${childUnknown[0]}"; fields are payload, payloadBase64, id, queue and onFailure`);
    if (queue !== undefined) {
      try {
        validateQueue(queue);
      } catch (err) {
        throw at(`queue: ${(err as Error).message}`);
      }
    }
    if (onFailure !== undefined && onFailure !== 'fail-parent' && onFailure !== 'ignore') {
      throw at('onFailure must be "fail-parent" (the default) or "ignore"');
    }
    const made = job(payload, payloadBase64, id, maxPayloadBytes, at);
    if (made.id !== undefined) {
      const before = seen.get(made.id);
      if (before) throw at(`id ${made.id} is also ${before}'s: every job of a flow needs its own id`);
      seen.set(made.id, `child ${i}`);
    }
    return { ...made, queue: queue as string | undefined, onFailure: (onFailure as OnFailure | undefined) ?? 'fail-parent' };
  });
  return { parent: parentJob, children: kids };
}

function job(payload: unknown, payloadBase64: unknown, id: unknown, maxPayloadBytes: number, at: (detail: string) => Problem): FlowBodyJob {
  const bytes = itemPayload(payload, payloadBase64, at);
  if (bytes.length > maxPayloadBytes) throw at(`payload is ${bytes.length} bytes; the limit is ${maxPayloadBytes}`);
  itemId(id, at);
  return id === undefined ? { payload: bytes } : { id, payload: bytes };
}
