// functions/http/request-log.ts: one JSON line per request, built as text but the same bytes
// JSON.stringify writes for its fixed members in their fixed order (an undefined one left out):
// escaping, ms as written for a double, one verdict or several, debug's counts, off writing nothing.
import { describe, expect, it } from 'vitest';
import { eventLine, requestLine, requestLog } from '../functions/http/request-log.js';
import type { RequestSummary } from '../functions/http/request-record.js';

const TIME = Date.UTC(2026, 4, 3, 12, 0, 0, 7);

function summary(over: Partial<RequestSummary> = {}): RequestSummary {
  return {
    time: TIME,
    id: '0123456789abcdef0123456789abcdef',
    callerId: undefined,
    traceId: undefined,
    method: 'POST',
    route: '/v1/queues/:queue/jobs',
    status: 201,
    ms: 1.93,
    queue: 'emails',
    verdicts: { enqueued: 1 },
    calls: [{ script: 'enqueue', verdict: 'enqueued', code: '', count: 1 }],
    code: undefined,
    reason: undefined,
    bytes: 14,
    noscript: 0,
    transient: 0,
    retries: 0,
    pipelines: 0,
    pipelineCommands: 0,
    ...over,
  };
}

/** The line JSON.stringify writes for `s` at info: the members in the documented order. */
function expected(app: string, s: RequestSummary): string {
  const labels = Object.keys(s.verdicts);
  return JSON.stringify({
    time: new Date(s.time).toISOString(),
    level: 'info',
    app,
    msg: 'request',
    id: s.id,
    callerRequestId: s.callerId,
    trace: s.traceId,
    method: s.method,
    route: s.route,
    status: s.status,
    ms: s.ms,
    queue: s.queue,
    verdict: labels.length === 1 ? labels[0] : undefined,
    verdicts: labels.length > 1 ? s.verdicts : undefined,
    code: s.code,
    reason: s.reason,
    bytes: s.bytes,
  });
}

describe('requestLine', () => {
  it('writes the documented line, member by member', () => {
    expect(requestLine('producer', 'info', summary({ callerId: 'c-1', traceId: 'ab'.repeat(16) }))).toBe(
      `{"time":"2026-05-03T12:00:00.007Z","level":"info","app":"producer","msg":"request","id":"0123456789abcdef0123456789abcdef","callerRequestId":"c-1","trace":"${'ab'.repeat(16)}","method":"POST","route":"/v1/queues/:queue/jobs","status":201,"ms":1.93,"queue":"emails","verdict":"enqueued","bytes":14}`,
    );
  });

  it.each([
    ['a quote and a backslash', 'say "hi" \\ bye'],
    ['control characters', 'tab\there\nnl\u0000\u001f'],
    ['DEL and non-ASCII', 'caf\u00e9 \u007f \u2028 \uffff'],
    ['a surrogate pair', 'emoji \ud83d\ude00'],
    ['a lone surrogate', 'lone \ud800 x \udc00'],
  ])('escapes %s in a value as JSON.stringify does', (_, text) => {
    const s = summary({ callerId: text, queue: text, reason: text, code: text });
    const line = requestLine('gate"way', 'info', s)!;
    expect(line).toBe(expected('gate"way', s));
    expect(JSON.parse(line).callerRequestId).toBe(text);
  });

  it.each([0, 0.001, 0.01, 0.1, 0.5, 1, 1.5, 1.93, 2.05, 10.25, 99.999, 1234.567, 0.07, 123456789.001, 1e12, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'writes ms %d as JSON.stringify does',
    (ms) => {
      const s = summary({ ms });
      expect(requestLine('producer', 'info', s)).toBe(expected('producer', s));
    },
  );

  it('writes ms of every whole number of µs below 0.2 s as JSON.stringify does', () => {
    for (let micros = 0; micros < 200_000; micros += 13) {
      const ms = Math.round((micros / 1000) * 1000) / 1000;
      const at = requestLine('p', 'info', summary({ ms }))!;
      expect(at.slice(at.indexOf('"ms":') + 5, at.indexOf(',"queue"'))).toBe(JSON.stringify(ms));
    }
  });

  it('writes several verdicts as an object, none as no member at all', () => {
    const several = summary({ verdicts: { enqueued: 2, 'refused:EMQKIND': 1 } });
    expect(requestLine('producer', 'info', several)).toBe(expected('producer', several));
    expect(JSON.parse(requestLine('producer', 'info', several)!).verdicts).toEqual({ enqueued: 2, 'refused:EMQKIND': 1 });
    const none = requestLine('producer', 'info', summary({ verdicts: {}, queue: undefined }))!;
    expect(none).not.toMatch(/"verdicts?"|"queue"/);
  });

  it('adds what the core did at debug, and writes nothing when off', () => {
    const s = summary({
      calls: [
        { script: 'enqueue', verdict: 'enqueued', code: '', count: 2 },
        { script: 'enqueue', verdict: 'duplicate', code: '', count: 1 },
      ],
    });
    const debug = JSON.parse(requestLine('producer', 'debug', { ...s, noscript: 1, transient: 2, retries: 3, pipelines: 4, pipelineCommands: 9 })!);
    expect(debug).toMatchObject({ calls: 3, noscript: 1, transient: 2, retries: 3, pipelines: 4, pipelineCommands: 9 });
    expect(JSON.parse(requestLine('producer', 'info', s)!)).not.toHaveProperty('calls');
    expect(requestLine('producer', 'off', s)).toBeUndefined();
  });
});

describe('requestLog', () => {
  it('writes each line at the level read per request, nothing when off or when the level throws', () => {
    const lines: string[] = [];
    let level: () => 'info' | 'off' = () => 'info';
    const sink = requestLog({ app: 'worker', level: () => level(), write: (l) => lines.push(l) });
    sink(summary());
    level = () => 'off';
    sink(summary());
    level = () => {
      throw new Error('EMQ_LOG is bad');
    };
    expect(() => sink(summary())).not.toThrow();
    expect(lines).toEqual([expected('worker', summary())]);
  });
});

describe('eventLine', () => {
  it('is a JSON line naming the app and the event, with its fields; nothing when off', () => {
    const line = JSON.parse(eventLine('gateway', 'info', 'valkey down', { connection: 'admin' })!);
    expect(line).toMatchObject({ level: 'info', app: 'gateway', msg: 'valkey down', connection: 'admin' });
    expect(new Date(line.time).toISOString()).toBe(line.time);
    expect(eventLine('gateway', 'off', 'valkey down')).toBeUndefined();
  });
});
