// The REST connection's auto-pipelining, against the real gateway over real HTTP, over fetch
// and over undici: calls run() in the same tick go as one /pipeline request, in call order;
// a call alone, bytes JSON cannot carry, calls of scripts not safe to send again, and calls
// of two requests' views go as they would without it.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRest } from '../shared/connections/rest.js';
import { ConnectionError, enqueue, mintId } from '../shared/index.js';
import { freshQueue, type Admin } from './support/admin.js';
import { gatewayOn, type GatewayProcess } from './support/gateway.js';
import { SENDS, behindDownValkey, recording } from './support/rest-sends.js';

describe.each(SENDS)('REST auto-pipelining over $name', (via) => {
  const held = gatewayOn(inject('servers')[0]!.url);
  let gateway: GatewayProcess;
  let admin: Admin;
  beforeAll(() => void ({ gw: gateway, admin } = held));

  const payloadOf = async (q: string, id: string) => Buffer.from(((await admin.call('HGET', `emq:{${q}}:job:${id}`, 'payload')) as Buffer) ?? []);
  const connect = (autoPipeline?: boolean) => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport, ...(autoPipeline === undefined ? {} : { autoPipeline }) });
    return { rec, rest };
  };

  it('enqueues of one tick are one /pipeline request, in call order (the same id twice: enqueued, then duplicate); one alone is path-style', async () => {
    const { rec, rest } = connect();
    const q = freshQueue('ap');
    await enqueue(rest, q, mintId(), 'warm');
    expect(rec.seen[0]).toBe('POST /evalsha'); // alone: path-style (then its EVAL, if the script was not loaded yet)
    rec.seen.length = 0;
    const jobs = Array.from({ length: 50 }, (_, i) => ({ id: mintId(), payload: `job ${i} ✓ "quoted"` }));
    jobs.splice(10, 0, { id: jobs[3]!.id, payload: 'the same id again' });
    const verdicts = await Promise.all(jobs.map((j) => enqueue(rest, q, j.id, j.payload)));
    expect(rec.seen).toEqual(['POST /pipeline']);
    expect(verdicts.filter((v) => v === 'duplicate')).toHaveLength(1);
    expect(verdicts[10]).toBe('duplicate');
    for (const [i, j] of jobs.entries()) if (i !== 10) expect((await payloadOf(q, j.id)).toString(), `job ${i}`).toBe(j.payload);
  });

  it('after SCRIPT FLUSH, a tick of enqueues is two /pipeline requests: the EVALSHAs, then their EVALs', async () => {
    const { rec, rest } = connect();
    const q = freshQueue('ap');
    await admin.call('SCRIPT', 'FLUSH');
    const ids = Array.from({ length: 20 }, () => mintId());
    expect(await Promise.all(ids.map((id) => enqueue(rest, q, id, 'x')))).toEqual(ids.map(() => 'enqueued'));
    expect(rec.seen).toEqual(['POST /pipeline', 'POST /pipeline']);
    expect(Number(await admin.call('ZCARD', `emq:{${q}}:pending`))).toBe(20);
  });

  it('bytes that are not UTF-8, and calls of scripts not safe to send again, go alone', async () => {
    const { rec, rest } = connect();
    const q = freshQueue('ap');
    await enqueue(rest, q, mintId(), 'warm');
    rec.seen.length = 0;
    const binary = [new Uint8Array([0xff, 0x00]), new Uint8Array([0xfe, 0x80, 0x01])];
    const ids = binary.map(() => mintId());
    await Promise.all(binary.map((b, i) => enqueue(rest, q, ids[i]!, b)));
    expect(rec.seen).toEqual(['POST /evalsha', 'POST /evalsha']);
    for (const [i, b] of binary.entries()) expect(Buffer.compare(await payloadOf(q, ids[i]!), Buffer.from(b))).toBe(0);

    const adminRest = connectRest({ url: gateway.url, token: gateway.admin, transport: rec.transport });
    rec.seen.length = 0;
    const key = `emq:{${q}}:other`;
    await Promise.all([1, 2].map((n) => adminRest.run({ op: 'eval', script: "return redis.call('INCR', KEYS[1])", keys: [key], args: [String(n)] })));
    expect(rec.seen).toHaveLength(2);
    expect(rec.seen).not.toContain('POST /pipeline');
  });

  it("two requests' views never share a request: each pipeline carries its own X-Request-Id", async () => {
    const { rec, rest } = connect();
    const q = freshQueue('ap');
    await enqueue(rest, q, mintId(), 'warm');
    rec.seen.length = 0;
    rec.requestIds.length = 0;
    const a = rest.withRequest({ headers: { 'X-Request-Id': 'req-a' } });
    const b = rest.withRequest({ headers: { 'X-Request-Id': 'req-b' } });
    const sent = [a, b, a, b, a].map((view) => enqueue(view, q, mintId(), 'v'));
    expect(await Promise.all(sent)).toEqual(sent.map(() => 'enqueued'));
    expect(rec.seen).toEqual(['POST /pipeline', 'POST /pipeline']);
    expect(rec.requestIds.sort()).toEqual(['req-a', 'req-b']);
  });

  it('a call larger than a /pipeline body may be (maxRequestBytes) goes alone, path-style; none is refused', async () => {
    const rec = recording(via.transport());
    const rest = connectRest({ url: gateway.url, token: gateway.producer, transport: rec.transport, maxRequestBytes: 1_000 });
    const q = freshQueue('ap');
    await enqueue(rest, q, mintId(), 'warm');
    rec.seen.length = 0;
    const payloads = ['x'.repeat(1_200), 'y'.repeat(1_200), 'small', 'small too'];
    expect(await Promise.all(payloads.map((p) => enqueue(rest, q, mintId(), p)))).toEqual(payloads.map(() => 'enqueued'));
    expect(rec.seen).toEqual(['POST /evalsha', 'POST /evalsha', 'POST /pipeline']);
  });

  it('autoPipeline: false sends each call in its own request', async () => {
    const { rec, rest } = connect(false);
    const q = freshQueue('ap');
    await Promise.all([1, 2, 3].map(() => enqueue(rest, q, mintId(), 'x')));
    expect(rec.seen.filter((s) => s === 'POST /evalsha')).toHaveLength(3);
    expect(rec.seen).not.toContain('POST /pipeline');
  });

  it("a failure of the one request is each of its calls' failure; it is retried as a call alone would be", { timeout: 30_000 }, () =>
    behindDownValkey(async (gw) => {
      const rec = recording(via.transport());
      const rest = connectRest({ url: gw.url, token: gw.producer, retries: 2, backoffMs: 10, transport: rec.transport });
      const errors = await Promise.all([1, 2, 3].map(() => enqueue(rest, 'q', mintId(), 'x').catch((e: unknown) => e)));
      for (const e of errors) expect(e).toBeInstanceOf(ConnectionError);
      expect(rec.seen).toEqual(['POST /pipeline', 'POST /pipeline', 'POST /pipeline']);
    }),
  );
});
