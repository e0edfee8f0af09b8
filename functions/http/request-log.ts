// One JSON line per request, on both Node servers and in the Worker (EMQ_LOG: info, the
// default; debug adds what the core did; off). Fields are fixed and none carries a payload,
// a token or a header's value other than the request ids and the trace id:
//   {"time":"…Z","level":"info","app":"producer","msg":"request","id":"…","callerRequestId":"…","trace":"…",
//    "method":"POST","route":"/v1/queues/:queue/jobs","status":201,"ms":1.93,
//    "queue":"emails","verdict":"enqueued","code":"…","bytes":14}
// A cron schedule's fire is logged as a request: "method":"CRON","route":"scheduled", its "schedule".
// Runtime-agnostic: the caller says where a line goes (Node: stdout; Worker: console.log).
import type { RequestSummary, SummarySink } from './request-record.js';

export type LogLevel = 'off' | 'info' | 'debug';
export const LOG_LEVELS: readonly LogLevel[] = ['info', 'debug', 'off'];

export interface RequestLogOptions {
  /** Which process: 'producer', 'gateway', 'worker'. */
  app: string;
  /** Read per request: the Worker's configuration may be a misconfiguration, which answers 500 on its own. */
  level: () => LogLevel;
  write: (line: string) => void;
}

// The line is built as text, member by member, not as an object handed to JSON.stringify:
// the same bytes (each value as JSON.stringify writes it, an undefined one left out) for a
// fraction of the CPU, as it is written for every request: JSON.stringify is a call into the
// runtime, so text that needs no escaping (nearly all: ids, routes, queues) is quoted here.

/** Text JSON.stringify writes as is between quotes: no quote, backslash, control character or surrogate. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\ud7ff\ue000-\uffff]*$/;

/** A value as JSON.stringify writes it (a number that is not finite is null). */
function json(value: unknown): string {
  if (typeof value === 'string') return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value);
}

// the lines of one turn share their millisecond: its ISO text is made once
let isoAt = Number.NaN;
let isoText = '';
function isoOf(time: number): string {
  if (time !== isoAt) {
    isoText = new Date(time).toISOString();
    isoAt = time;
  }
  return isoText;
}

/**
 * A whole number of µs as ms (summary()'s ms: Math.round(x * 1000) / 1000) as JSON.stringify
 * writes it, in integer arithmetic: printing a fractional double (the fewest digits that read
 * back as the same number, here n's digits with the point put in) costs ~4x as much.
 */
function millis(value: number): string {
  const micros = Math.round(value * 1000);
  if (micros / 1000 !== value || micros < 0 || micros >= 1e12) return json(value);
  const whole = Math.floor(micros / 1000);
  let fraction = micros - whole * 1000;
  if (fraction === 0) return `${whole}`;
  let digits = 3;
  while (fraction % 10 === 0) {
    fraction /= 10;
    digits--;
  }
  return `${whole}.${String(fraction).padStart(digits, '0')}`;
}

/** `,"name":value`, or nothing when the value is undefined (as JSON.stringify leaves it out). */
const member = (name: string, value: unknown): string => (value === undefined ? '' : `,"${name}":${json(value)}`);

/** The request's log line (without the newline), or undefined when the level is off. */
export function requestLine(app: string, level: LogLevel, s: RequestSummary): string | undefined {
  if (level === 'off') return undefined;
  let line = `{"time":${json(isoOf(s.time))},"level":"info","app":${json(app)},"msg":"request"`;
  line += member('id', s.id) + member('callerRequestId', s.callerId) + member('trace', s.traceId) + member('method', s.method) + member('route', s.route);
  line += member('status', s.status);
  if (typeof s.ms === 'number') line += `,"ms":${millis(s.ms)}`;
  else line += member('ms', s.ms);
  line += member('queue', s.queue) + member('schedule', s.schedule);
  const labels = Object.keys(s.verdicts);
  if (labels.length === 1) line += member('verdict', labels[0]);
  else if (labels.length > 1) line += member('verdicts', s.verdicts);
  line += member('code', s.code) + member('reason', s.reason) + member('bytes', s.bytes);
  if (level === 'debug') {
    line += member(
      'calls',
      s.calls.reduce((n, c) => n + c.count, 0),
    );
    line += member('noscript', s.noscript) + member('transient', s.transient) + member('retries', s.retries);
    line += member('pipelines', s.pipelines) + member('pipelineCommands', s.pipelineCommands);
  }
  return `${line}}`;
}

/** A sink that writes each request's line. */
export function requestLog({ app, level, write }: RequestLogOptions): SummarySink {
  return (summary) => {
    let at: LogLevel;
    try {
      at = level();
    } catch {
      return; // a bad EMQ_LOG: the request's own path answers 500 misconfigured, naming it
    }
    const line = requestLine(app, at, summary);
    if (line !== undefined) write(line);
  };
}

/** A process event's line (Valkey lost or back, the fence's state), at info and debug. */
export function eventLine(app: string, level: LogLevel, msg: string, fields: Record<string, unknown> = {}): string | undefined {
  if (level === 'off') return undefined;
  return JSON.stringify({ time: new Date().toISOString(), level: 'info', app, msg, ...fields });
}
