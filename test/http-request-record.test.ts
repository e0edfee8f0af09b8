// functions/http/request-record.ts: a request's record. Its id is always minted (32 hex digits);
// a caller's X-Request-Id is kept beside it only when sane; a traceparent is passed on as version
// 00 (55 characters) when it parses; the record counts what the core did and sums it up.
import { describe, expect, it } from 'vitest';
import { RequestRecord, mintRequestId, saneRequestId, startRequest, tell, traceparentOf, type RequestSummary } from '../functions/http/request-record.js';
import type { Observer } from '../shared/observe.js';
import { enqueueScript } from '../shared/scripts.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const V00 = `00-${TRACE}-${PARENT}-01`;

describe('request ids', () => {
  it('mints 32 hex digits, unique across many (past the pool of 256 ids a refill makes)', () => {
    const ids = Array.from({ length: 1_000 }, mintRequestId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each([
    ['abc-123', 'abc-123'],
    ['x'.repeat(128), 'x'.repeat(128)],
    ['!~"{}', '!~"{}'],
    ['x'.repeat(129), undefined],
    ['', undefined],
    ['has space', undefined],
    ['tab\there', undefined],
    ['line\nbreak', undefined],
    ['caf\u00e9', undefined],
    [undefined, undefined],
  ])('keeps a caller id %j as %j', (header, kept) => {
    expect(saneRequestId(header)).toBe(kept);
  });

  it('starts a record with a minted id whatever the caller sent, its sane id beside it', () => {
    const record = startRequest('caller-1', undefined, undefined);
    expect(record.id).toMatch(/^[0-9a-f]{32}$/);
    expect(record.callerId).toBe('caller-1');
    expect(startRequest(record.id, undefined, undefined).id).not.toBe(record.id);
    expect(startRequest('bad id', undefined, undefined).callerId).toBeUndefined();
  });
});

describe('traceparentOf', () => {
  it('passes a version 00 traceparent on as it is', () => {
    expect(traceparentOf(V00)).toEqual({ header: V00, traceId: TRACE });
  });

  it('re-encodes a later version as 00 from its first 55 characters', () => {
    expect(traceparentOf(`cc-${TRACE}-${PARENT}-09`)).toEqual({ header: `00-${TRACE}-${PARENT}-09`, traceId: TRACE });
    expect(traceparentOf(`cc-${TRACE}-${PARENT}-09-what-comes-next`)).toEqual({ header: `00-${TRACE}-${PARENT}-09`, traceId: TRACE });
  });

  it.each([
    ['version 00 with more after it', `${V00}-x`],
    ['a later version followed by other than a dash', `cc-${TRACE}-${PARENT}-09x`],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['uppercase hex', V00.toUpperCase()],
    ['too short', V00.slice(0, 54)],
    ['no dashes', V00.replaceAll('-', '_')],
  ])('passes nothing on for %s', (_, header) => {
    expect(traceparentOf(header)).toBeUndefined();
  });
});

describe('RequestRecord', () => {
  it('carries its id, and its traceparent when there is one, as the headers of its REST calls', () => {
    expect(new RequestRecord('id1', undefined, undefined).headers).toEqual({ 'X-Request-Id': 'id1' });
    expect(new RequestRecord('id2', traceparentOf(V00), undefined).headers).toEqual({ 'X-Request-Id': 'id2', traceparent: V00 });
  });

  it('counts what the core did, tells the process observer too, and sums it up', () => {
    const told: string[] = [];
    const process: Observer = { script: (s) => told.push(`script ${s.name}`), noscript: () => told.push('noscript'), retry: (r) => told.push(`retry ${r}`) };
    const record = new RequestRecord('id', traceparentOf(V00), process, 'caller');
    record.script(enqueueScript, { ok: true, value: 1 }, ['emq:{emails}:id']);
    record.script(enqueueScript, { ok: true, value: 0 }, ['emq:{other}:id']);
    record.script(enqueueScript, { ok: false, error: 'EMQKIND wrong kind' }, ['emq:{emails}:id']);
    record.noscript(enqueueScript);
    record.transient('TRYAGAIN');
    record.retry('503');
    record.pipeline(3);
    record.pipeline(2, 'multi_exec');
    record.bytes = 14;
    record.code = 'refused';
    const s = record.summary('POST', '/v1/queues/:queue/jobs', 201, 'route-queue');
    expect(told).toEqual(['script enqueue', 'script enqueue', 'script enqueue', 'noscript', 'retry 503']);
    expect(s).toMatchObject({ id: 'id', callerId: 'caller', traceId: TRACE, method: 'POST', route: '/v1/queues/:queue/jobs', status: 201 });
    expect(s.queue).toBe('emails'); // the first script call's queue, over the route's
    expect(s.verdicts).toEqual({ enqueued: 1, duplicate: 1, 'refused:EMQKIND': 1 });
    expect(s).toMatchObject({ noscript: 1, transient: 1, retries: 1, pipelines: 2, pipelineCommands: 5, bytes: 14, code: 'refused' });
    expect(s.ms).toBeGreaterThanOrEqual(0);
    expect(Math.round(s.ms * 1000) / 1000).toBe(s.ms);
  });

  it('logs only a queue of bounded printable ASCII, else the route queue when it is one', () => {
    const record = new RequestRecord('id', undefined, undefined);
    record.script(enqueueScript, { ok: true, value: 1 }, ['emq:{has space}:id']);
    expect(record.summary('POST', '/r', 201, 'fine').queue).toBe('fine');
    expect(record.summary('POST', '/r', 201, 'x'.repeat(201)).queue).toBeUndefined();
    expect(record.summary('POST', '/r', 201).queue).toBeUndefined();
  });
});

describe('tell', () => {
  it('hands the summary to every sink, a sink that throws ignored', () => {
    const summary = new RequestRecord('id', undefined, undefined).summary('GET', '/healthz', 200);
    const got: RequestSummary[] = [];
    tell(
      [
        () => got.push(summary),
        () => {
          throw new Error('broken sink');
        },
        (s) => got.push(s),
      ],
      summary,
    );
    expect(got).toEqual([summary, summary]);
  });
});
