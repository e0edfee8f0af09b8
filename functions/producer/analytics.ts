// The Worker's counters: it has no process to scrape, so when an Analytics Engine dataset is
// bound as EMQ_ANALYTICS it writes, per request, one `request` data point and one `script`
// data point per (script, verdict, code) its calls got; unbound, nothing. The schema (blob and
// double positions) is in docs/operations.md; labels are the Prometheus metrics' (route
// pattern, never a raw path; no queue, id or token). The binding is read from each request's
// env, so a binding given with the request is the one written to.
import { REGION_RULE } from '../../shared/config/parse.js';
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

/**
 * The sink that writes the data points. `request`: blobs [kind, region, method, route,
 * verdict, code], doubles [status, ms, body bytes, script calls, NOSCRIPT fallbacks, transient
 * retries, REST retries, pipelines, pipelined commands]. `script`: blobs [kind, region,
 * script, verdict, code, route], doubles [calls]. Index: the route pattern.
 */
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
