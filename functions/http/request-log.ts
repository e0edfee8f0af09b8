// One JSON line per request, on both Node servers and in the Worker (EMQ_LOG: info, the
// default; debug adds what the core did; off). Fields are fixed and none carries a payload,
// a token or a header's value other than the request id and the trace id:
//   {"time":"…Z","level":"info","app":"producer","msg":"request","id":"…","trace":"…",
//    "method":"POST","route":"/v1/queues/:queue/jobs","status":201,"ms":1.93,
//    "queue":"emails","verdict":"enqueued","code":"…","bytes":14}
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

/** The request's log line (without the newline), or undefined when the level is off. */
export function requestLine(app: string, level: LogLevel, s: RequestSummary): string | undefined {
  if (level === 'off') return undefined;
  const line: Record<string, unknown> = {
    time: new Date(s.time).toISOString(),
    level: 'info',
    app,
    msg: 'request',
    id: s.id,
    trace: s.traceId,
    method: s.method,
    route: s.route,
    status: s.status,
    ms: s.ms,
    queue: s.queue,
  };
  const labels = Object.keys(s.verdicts);
  if (labels.length === 1) line.verdict = labels[0];
  else if (labels.length > 1) line.verdicts = s.verdicts;
  line.code = s.code;
  line.bytes = s.bytes;
  if (level === 'debug') {
    line.calls = s.calls.reduce((n, c) => n + c.count, 0);
    line.noscript = s.noscript;
    line.transient = s.transient;
    line.retries = s.retries;
    line.pipelines = s.pipelines;
    line.pipelineCommands = s.pipelineCommands;
  }
  return JSON.stringify(line); // undefined fields are left out
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
