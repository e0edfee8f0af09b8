// What an equivalence test compares: every key of a queue by its suffix (so two queues given
// the same start compare directly), each with its type and contents read by type: a hash's
// fields and a set's members sorted, a list in order, a sorted set as [member, score] pairs.
// Bytes are shown as hex, so any byte compares exactly.
import type { Admin } from './admin.js';

const hex = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v));

/** A map or pairs reply as a flat list, however the client shapes it (flat, nested, or glide's { key, value }). */
function flat(reply: unknown[]): unknown[] {
  return reply.flatMap((e) =>
    Array.isArray(e) ? e : e !== null && typeof e === 'object' && 'key' in e ? [(e as { key: unknown }).key, (e as unknown as { value: unknown }).value] : [e],
  );
}

export type QueueState = Record<string, [type: string, contents: unknown]>;

/** Every key emq:{queue}:<suffix>, by suffix, with its type and contents. */
export async function queueState(admin: Admin, queue: string): Promise<QueueState> {
  const prefix = `emq:{${queue}}:`;
  const out: QueueState = {};
  for (const key of Object.keys(await admin.footprint(queue))) {
    const type = String(await admin.text('TYPE', key));
    let value: unknown = null;
    if (type === 'hash' || type === 'zset') {
      const items = flat((await admin.call(...(type === 'hash' ? ['HGETALL', key] : ['ZRANGE', key, '0', '-1', 'WITHSCORES']))) as unknown[]);
      const pairs: string[] = [];
      for (let i = 0; i < items.length; i += 2) pairs.push(`${hex(items[i])}=${type === 'zset' ? Number(String(items[i + 1])) : hex(items[i + 1])}`);
      value = type === 'hash' ? pairs.sort() : pairs;
    } else if (type === 'list') value = ((await admin.call('LRANGE', key, '0', '-1')) as Buffer[]).map(hex);
    else if (type === 'set') value = ((await admin.call('SMEMBERS', key)) as Buffer[]).map(hex).sort();
    else if (type === 'string') value = hex(await admin.call('GET', key));
    out[key.slice(prefix.length)] = [type, value];
  }
  return out;
}
