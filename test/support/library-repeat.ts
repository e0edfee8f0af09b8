// The EchoMQ library's repeatables as its own code runs them, restated from the corpus
// (EchoMQ.Repeat 54749778154, EchoMQ.Pump 54721988820, EchoMQ.Jobs 54494128534; LIBRARY.md
// c.6, f): the scripts' texts as the library sends them (its Elixir heredocs, indentation
// stripped, each ending in a newline) and the Pump's repeat sweep in its order of steps. The
// tests run this against registrations made through shared/schedules.ts: what the library's
// own Pump would do with them. Independent of the code under test (only the minter is ours:
// the library mints host-side with BrandedId.generate!("JOB"), the same layout).
import { mintId } from '../../shared/ids.js';
import type { CommandCaller } from './consumer.js';

/** Repeat's @register: record exists -> 0; else HSET the record, ZADD the registry -> 1. */
export const LIBRARY_REGISTER = `if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[2], 'every_ms', ARGV[2], 'template', ARGV[3])
redis.call('ZADD', KEYS[1], tonumber(ARGV[4]), ARGV[1])
return 1
`;

/** Repeat's @cancel: ZREM the member, DEL the record, answer the ZREM count. */
export const LIBRARY_CANCEL = `local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return removed
`;

/** Repeat's @advance: a record gone -> ZREM the member, 0; else ZADD the next run -> 1. */
export const LIBRARY_ADVANCE = `if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
return 1
`;

/** Jobs' @enqueue: the kind gate, a duplicate -> 0, else the row and the flat pending entry -> 1. */
export const LIBRARY_ENQUEUE = `if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
`;

const text = (v: unknown): string | null => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('latin1') : String(v));

/** What one sweep fired: each occurrence's name and minted id, in the order fired. */
export interface Fired {
  name: string;
  id: string;
}

/**
 * The library's repeat verbs and the Pump's repeat pass for one queue, through `caller`
 * (admin.call: plain commands and EVAL, as the library's Connector sends them). `now` stands
 * for the Pump host's clock, System.system_time(:millisecond), read by due/2 and advance/4.
 */
export function libraryRepeat(caller: CommandCaller, queue: string, mint: () => string = mintId) {
  const registry = `emq:{${queue}}:repeat`;
  const record = (name: string) => `emq:{${queue}}:repeat:${name}`;
  return {
    /** Repeat.count/2: ZCARD of the registry. */
    async count(): Promise<number> {
      return Number(await caller.call('ZCARD', registry));
    },
    /** Repeat.register/6's call, first_at = now + first_in_ms. */
    async register(name: string, everyMs: number, template: Uint8Array | string, firstInMs: number, now: number): Promise<'registered' | 'exists'> {
      const r = await caller.call('EVAL', LIBRARY_REGISTER, '2', registry, record(name), name, String(everyMs), template, String(now + firstInMs));
      return Number(r) === 1 ? 'registered' : 'exists';
    },
    /**
     * Repeat.due/3: ZRANGEBYSCORE registry -inf now LIMIT 0 limit, then HMGET every_ms
     * template of each name's record (bytes; null where absent).
     */
    async due(limit: number, now: number): Promise<Array<[name: string, every: string | null, template: Buffer | null]>> {
      const names = ((await caller.call('ZRANGEBYSCORE', registry, '-inf', String(now), 'LIMIT', '0', String(limit))) as Buffer[]).map((n) =>
        n.toString('latin1'),
      );
      const out: Array<[string, string | null, Buffer | null]> = [];
      for (const name of names) {
        const [every, template] = (await caller.call('HMGET', record(name), 'every_ms', 'template')) as Array<Buffer | null>;
        out.push([name, text(every), template ?? null]);
      }
      return out;
    },
    /**
     * Pump.fire_repeats/3, one sweep: for each due record, mint a JOB id, Jobs.enqueue the
     * template (flat pending), then Repeat.advance to now + every_ms; a name whose record is
     * gone is cancelled (fire_one's second clause). A failed enqueue or advance skips the
     * name this tick, as the Pump's soft match does. Answers what fired.
     */
    async sweep(now: number, batch = 100): Promise<Fired[]> {
      const fired: Fired[] = [];
      for (const [name, every, template] of await this.due(batch, now)) {
        if (every === null || template === null) {
          await caller.call('EVAL', LIBRARY_CANCEL, '2', registry, record(name), name);
          continue;
        }
        const id = mint();
        const enqueued = await caller.call('EVAL', LIBRARY_ENQUEUE, '2', `emq:{${queue}}:job:${id}`, `emq:{${queue}}:pending`, id, template).then(
          () => true,
          () => false, // a wire error: logged, and the name skipped this tick
        );
        if (!enqueued) continue;
        // String.to_integer(every) raises (the Pump crashes, and restarts) on a period that is no integer
        if (!/^[+-]?[0-9]+$/.test(every)) throw new Error(`the Pump's String.to_integer(${JSON.stringify(every)}) raises`);
        await caller.call('EVAL', LIBRARY_ADVANCE, '2', registry, record(name), name, String(now + Number(every))).then(
          () => fired.push({ name, id }),
          () => undefined,
        );
      }
      return fired;
    },
  };
}
