// Prometheus metrics for `emq producer` and `emq gateway` (prom-client, Node only: the Worker
// writes Analytics Engine data points instead, functions/producer/analytics.ts). One registry
// per server. Labels are bounded: route patterns (never a raw path), methods, statuses, script
// names, verdicts and error codes from fixed sets; never a queue, an id or a token.
// GET /metrics is served by each node:http listener before its routes (serveMetrics), so scrapes
// are neither logged nor counted as requests; it needs EMQ_METRICS_TOKEN as a bearer token,
// compared in constant time.
import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FenceState } from '../../shared/fence.js';
import { type Observer, verdictOf } from '../../shared/observe.js';
import type { SummarySink } from './request-record.js';

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SIZES = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
const FENCE_STATES: readonly FenceState[] = ['unknown', 'ok', 'mismatch'];

/** Told when a connection to Valkey is found unreachable, and when it is back. */
export interface AvailabilityEvents {
  down(): void;
  up(): void;
}

export interface Metrics {
  registry: Registry;
  /** The core's counts: script verdicts, NOSCRIPT fallbacks, transient and REST retries, pipeline sizes. */
  observer: Observer;
  /** Per request: count, latency, body bytes. */
  sink: SummarySink;
  /** A connection's availability ('producer', 'admin', 'glide'): reconnects and the time spent unavailable. */
  availability(connection: string): AvailabilityEvents;
  /** The `{emq}:version` fence's state. */
  fence(state: FenceState): void;
}

/** prom-client's labels() hashes its argument on every call: children are kept by their values. */
function children<T>(make: (...values: string[]) => T): (...values: string[]) => T {
  const made = new Map<string, T>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = made.get(key);
    if (child === undefined) made.set(key, (child = make(...values)));
    return child;
  };
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'emq_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'emq_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer, by route pattern and method.',
    labelNames: ['route', 'method'] as const,
    buckets: SECONDS,
    registers,
  });
  const bytesIn = new Counter({
    name: 'emq_http_request_body_bytes_total',
    help: 'Request body bytes read, by route pattern.',
    labelNames: ['route'] as const,
    registers,
  });
  const fires = new Counter({
    name: 'emq_cron_fires_total',
    help: "Cron schedules' fires (EMQ_CRONS), by verdict (enqueued, scheduled, duplicate: another fire of that minute made the job) and, when one failed, its problem code.",
    labelNames: ['verdict', 'code'] as const,
    registers,
  });
  const calls = new Counter({
    name: 'emq_script_calls_total',
    help: 'Script calls by script and verdict (enqueued, scheduled, duplicate, taken, found, missing, refused, error), with the error code when refused or an error.',
    labelNames: ['script', 'verdict', 'code'] as const,
    registers,
  });
  const noscript = new Counter({
    name: 'emq_script_noscript_total',
    help: 'NOSCRIPT: on the producer, the EVALs sent after NOSCRIPT (the script text loaded again); on the gateway, the NOSCRIPT replies relayed.',
    labelNames: ['script'] as const,
    registers,
  });
  const transient = new Counter({
    name: 'emq_transient_retries_total',
    help: 'Script calls sent again after a transient reply (TRYAGAIN, MOVED, ASK, CLUSTERDOWN, MASTERDOWN, LOADING), by reply.',
    labelNames: ['reply'] as const,
    registers,
  });
  const restRetries = new Counter({
    name: 'emq_rest_retries_total',
    help: 'REST requests to a gateway sent again, by reason (transport, 502, 503, 504).',
    labelNames: ['reason'] as const,
    registers,
  });
  const pipelines = new Histogram({
    name: 'emq_pipeline_size',
    help: 'Commands per pipeline: dispatch (script calls the producer sends as one), pipeline and multi_exec (requests the gateway relays).',
    labelNames: ['kind'] as const,
    buckets: SIZES,
    registers,
  });
  const up = new Gauge({
    name: 'emq_valkey_up',
    help: '1 while the connection to Valkey answers, 0 from a transport failure until it answers again.',
    labelNames: ['connection'] as const,
    registers,
  });
  const reconnects = new Counter({
    name: 'emq_valkey_reconnects_total',
    help: 'Times a connection to Valkey answered again after a transport failure.',
    labelNames: ['connection'] as const,
    registers,
  });
  const states = new Map<string, { downSince: number | undefined; total: number }>();
  new Counter({
    name: 'emq_valkey_unavailable_seconds_total',
    help: 'Seconds a connection to Valkey spent unavailable, the outage under way included.',
    labelNames: ['connection'] as const,
    registers,
    collect() {
      const now = performance.now();
      this.reset();
      for (const [connection, s] of states) this.inc({ connection }, (s.total + (s.downSince === undefined ? 0 : now - s.downSince)) / 1000);
    },
  });
  const fence = new Gauge({
    name: 'emq_fence_state',
    help: "The {emq}:version fence: 1 for its state (ok: absent or this process's wire version; mismatch: another; unknown: not read lately).",
    labelNames: ['state'] as const,
    registers,
  });

  for (const s of FENCE_STATES) fence.set({ state: s }, s === 'unknown' ? 1 : 0);

  const requestsOf = children((route, method, status) => requests.labels(route!, method!, status!));
  const durationOf = children((route, method) => duration.labels(route!, method!));
  const bytesOf = children((route) => bytesIn.labels(route!));
  const firesOf = children((verdict, code) => fires.labels(verdict!, code!));
  const callsOf = children((script, verdict, code) => calls.labels(script!, verdict!, code!));

  return {
    registry,
    observer: {
      script(script, outcome, _keys, args) {
        const { verdict, code = '' } = verdictOf(script, outcome, args);
        callsOf(script.name, verdict, code).inc();
      },
      noscript: (script) => noscript.inc({ script: script.name }),
      transient: (reply) => transient.inc({ reply }),
      retry: (reason) => restRetries.inc({ reason }),
      pipeline: (size, kind = 'dispatch') => pipelines.observe({ kind }, size),
    },
    sink(s) {
      requestsOf(s.route, s.method, String(s.status)).inc();
      durationOf(s.route, s.method).observe(s.ms / 1000);
      if (s.bytes > 0) bytesOf(s.route).inc(s.bytes);
      if (s.schedule !== undefined) firesOf(Object.keys(s.verdicts).join(',') || 'none', s.code ?? '').inc();
    },
    availability(connection) {
      const s = { downSince: undefined as number | undefined, total: 0 };
      states.set(connection, s);
      up.set({ connection }, 1);
      reconnects.inc({ connection }, 0);
      return {
        down() {
          if (s.downSince !== undefined) return;
          s.downSince = performance.now();
          up.set({ connection }, 0);
        },
        up() {
          if (s.downSince === undefined) return;
          s.total += performance.now() - s.downSince;
          s.downSince = undefined;
          reconnects.inc({ connection });
          up.set({ connection }, 1);
        },
      };
    },
    fence(state) {
      for (const s of FENCE_STATES) fence.set({ state: s }, s === state ? 1 : 0);
    },
  };
}

const digest = (s: string) => hash('sha256', s, 'buffer');

/** The path of a request URL (absolute), without its query. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const query = url.indexOf('?', start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

export interface ServeMetricsOptions {
  /** EMQ_METRICS_TOKEN; undefined: /metrics is off. */
  token: string | undefined;
  metrics: Metrics | undefined;
}

/** An answer of GET /metrics: a status, headers and a text body (the exposition's Content-Type; none on a 401 or 405). */
export interface MetricsAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** GET /metrics's answer to a request, given its method and its Authorization header (every occurrence, joined as Fetch reads them). */
export type MetricsEndpoint = (method: string, authorization: string | null | undefined) => MetricsAnswer | Promise<MetricsAnswer>;

/**
 * GET /metrics, without a web framework (serveMetrics writes it on node:http); undefined while off. 405 for any other method, 401
 * without the metrics token (compared in constant time, before anything else is done), else
 * the exposition.
 */
export function metricsEndpoint({ token, metrics }: ServeMetricsOptions): MetricsEndpoint | undefined {
  if (token === undefined || metrics === undefined) return undefined;
  const expected = digest(token);
  return (method, authorization) => {
    if (method !== 'GET') return { status: 405, headers: { Allow: 'GET' }, body: 'use GET\n' };
    const presented = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(presented), expected)) {
      return { status: 401, headers: { 'WWW-Authenticate': 'Bearer' }, body: 'send Authorization: Bearer <EMQ_METRICS_TOKEN>\n' };
    }
    return metrics.registry.metrics().then((body) => ({ status: 200, headers: { 'Content-Type': metrics.registry.contentType }, body }));
  };
}

/**
 * Writes GET /metrics's answer on node:http (`authorization`: the header as Fetch reads it);
 * an exposition that fails is a 500, told to stderr under `app`'s name.
 */
export function serveMetrics(req: IncomingMessage, res: ServerResponse, endpoint: MetricsEndpoint, authorization: string | undefined, app: string): void {
  const send = ({ status, headers, body }: MetricsAnswer) => {
    res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  const answer = endpoint(req.method!, authorization);
  if (!(answer instanceof Promise)) {
    send(answer);
    return;
  }
  answer.then(send, (err: unknown) => {
    console.error(`${app}: /metrics: ${(err as Error).stack ?? String(err)}`);
    send({ status: 500, headers: { 'Content-Type': 'text/plain; charset=UTF-8' }, body: 'Internal Server Error' });
  });
}
