// The routes that read and steer a queue and its lanes (issue 25), through the library's own
// verbs (lua/queue-info.lua, queue-pause.lua, group-set.lua):
//   GET  /v1/queues/:queue                 read: paused, counts as @counts reads them, and every
//                                          group (pending-only ones too), paged: ?cursor= &count=
//   POST /v1/queues/:queue/pause, …/resume control: Admin.pause / Admin.resume's writes. Admission
//                                          goes on while a queue is paused: only claims stop
//   GET  /v1/queues/:queue/groups/:group   read: one group
//   PUT  /v1/queues/:queue/groups/:group   control: {limit?, weight?, paused?} as @glimit,
//                                          @gweight, @gpause / @gresume write them
import { QUEUE_INFO_PAGE, QUEUE_INFO_PAGE_MAX, pauseQueue, queueInfo, readGroup, setGroup, validateGroup, type GroupChange } from '../../shared/index.js';
import { jsonOf } from './batch.js';
import { json, type Answer, type Call, type Service } from './call.js';
import { Problem } from './problem.js';
import { pageCount, requestBody, queueOf, via } from './queue-routes.js';

/** A group's settings body is small: three fields. */
const MAX_SETTINGS_BYTES = 1_024;
/** A limit or weight: a whole number the library's HSET takes and Lua's numbers hold exactly. */
const MAX_SETTING = 2 ** 31 - 1;

const PAUSED_NOTE = 'admission goes on while a queue is paused: only claims stop';

/** The route's group, valid (as Emq-Group takes it). */
function groupOf(call: Call): string {
  const group = call.request.param('group') ?? '';
  try {
    validateGroup(group);
  } catch (err) {
    throw new Problem(400, 'invalid_group', `the group: ${(err as Error).message}`);
  }
  return group;
}

export async function getQueue(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const count = pageCount(call, QUEUE_INFO_PAGE_MAX, QUEUE_INFO_PAGE);
  const cursor = call.request.query('cursor');
  if (cursor !== undefined) groupCursor(cursor);
  return json(call, 200, await queueInfo(via(call, service, queue), queue, { count, ...(cursor !== undefined && { cursor }) }));
}

/** A page's cursor is the last group of the page before. */
function groupCursor(cursor: string): void {
  try {
    validateGroup(cursor);
  } catch (err) {
    throw new Problem(400, 'invalid_group', `cursor: ${(err as Error).message}`);
  }
}

const pausing =
  (paused: boolean) =>
  async (call: Call, service: Service): Promise<Answer> => {
    const queue = queueOf(call);
    const answer = await pauseQueue(via(call, service, queue), queue, paused);
    return json(call, 200, paused ? { ...answer, note: PAUSED_NOTE } : answer);
  };

export const pause = pausing(true);
export const resume = pausing(false);

export async function getGroup(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const group = groupOf(call);
  return json(call, 200, await readGroup(via(call, service, queue), queue, group));
}

export async function putGroup(call: Call, service: Service): Promise<Answer> {
  const queue = queueOf(call);
  const group = groupOf(call);
  const change = settingsOf(await requestBody(call, MAX_SETTINGS_BYTES, 'the group settings'));
  return json(call, 200, await setGroup(via(call, service, queue), queue, group, change));
}

/** `{limit?, weight?, paused?}`, at least one, nothing else; else 400 invalid_body naming what is wrong. */
function settingsOf(body: Uint8Array): GroupChange {
  const refuse = (detail: string) => new Problem(400, 'invalid_body', detail);
  const value = jsonOf(body)?.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refuse('the body must be a JSON object: {"limit"?: n, "weight"?: n, "paused"?: true | false}');
  }
  const change: GroupChange = {};
  for (const [name, v] of Object.entries(value)) {
    if (name === 'limit' || name === 'weight') {
      if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > MAX_SETTING) throw refuse(`${name} must be a whole number from 1 to ${MAX_SETTING}`);
      change[name] = v as number;
    } else if (name === 'paused') {
      if (typeof v !== 'boolean') throw refuse('paused must be true or false');
      change.paused = v;
    } else {
      throw refuse(`unknown field ${JSON.stringify(name.slice(0, 64))}: a group takes limit, weight and paused`);
    }
  }
  if (Object.keys(change).length === 0) throw refuse('send at least one of limit, weight and paused');
  return change;
}
