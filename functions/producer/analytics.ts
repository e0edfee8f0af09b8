// The Worker's counters: it has no process to scrape, so when an Analytics Engine dataset is
// bound as EMQ_ANALYTICS it writes, per request, one `request` data point and one `script`
// data point per (script, verdict, code) its calls got; unbound, nothing. The schema (blob and
// double positions) is in docs/operations.md; labels are the Prometheus metrics' (route
// pattern, never a raw path; no queue, id or token). The binding is read from each request's
// env, so a binding given with the request is the one written to.
import type { MiddlewareHandler } from 'hono';
import { REGION_RULE } from '../../shared/config/parse.js';
import type { RequestSink } from '../http/request-context.js';
import type { RequestSummary } from '../http/request-record.js';
import { Problem } from './problem.js';

/** A Workers Analytics Engine dataset binding (@cloudflare/workers-types' AnalyticsEngineDataset). */
export interface AnalyticsDataset {
  writeDataPoint(point: { indexes?: string[]; blobs?: string[]; doubles?: number[] }): void;
}

type Env = { EMQ_ANALYTICS?: unknown; EMQ_REGION?: unknown } | undefined;

/** The dataset bound as EMQ_ANALYTICS, if any; a binding that is not one throws 500 misconfigured. */
export function datasetOf(env: Env): AnalyticsDataset | undefined {
  const bound = env?.EMQ_ANALYTICS;
  if (bound === undefined || bound === null || bound === '') return undefined;
  if (typeof (bound as AnalyticsDataset).writeDataPoint !== 'function') {
    throw new Problem(500, 'misconfigured', 'EMQ_ANALYTICS is not an Analytics Engine binding');
  }
  return bound as AnalyticsDataset;
}

/** Middleware: a misbound EMQ_ANALYTICS answers 500 misconfigured (naming it), before anything else is done. */
export const checkAnalytics: MiddlewareHandler = function checkAnalytics(c, next) {
  datasetOf(c.env as Env); // a throw here reaches the app's onError as an async one would (Hono's compose catches both)
  return next(); // no async frame of its own: one fewer promise per request
};

/**
 * The sink that writes the data points. `request`: blobs [kind, region, method, route,
 * verdict, code], doubles [status, ms, body bytes, script calls, NOSCRIPT fallbacks, transient
 * retries, REST retries, pipelines, pipelined commands]. `script`: blobs [kind, region,
 * script, verdict, code, route], doubles [calls]. Index: the route pattern.
 */
export function analyticsSink(): RequestSink {
  return (s, c) => writeAnalytics(s, c.env);
}

/** The sink's work for a request's env (the Worker's job path, worker-jobs.ts, has no Hono context). */
export function writeAnalytics(s: RequestSummary, given: unknown): void {
  const env = given as Env;
  const dataset = datasetOf(env);
  if (!dataset) return;
  const region = typeof env?.EMQ_REGION === 'string' && REGION_RULE.test(env.EMQ_REGION) ? env.EMQ_REGION : '';
  const labels = Object.keys(s.verdicts);
  const verdict = labels.length === 0 ? '' : labels.length === 1 ? labels[0]! : 'mixed';
  const calls = s.calls.reduce((n, x) => n + x.count, 0);
  dataset.writeDataPoint({
    indexes: [s.route],
    blobs: ['request', region, s.method, s.route, verdict, s.code ?? ''],
    doubles: [s.status, s.ms, s.bytes, calls, s.noscript, s.transient, s.retries, s.pipelines, s.pipelineCommands],
  });
  for (const x of s.calls) {
    dataset.writeDataPoint({ indexes: [s.route], blobs: ['script', region, x.script, x.verdict, x.code, s.route], doubles: [x.count] });
  }
}
