// The HTTP phases: our enqueue over the REST connection through the gateway (a separate
// process), and the gateway against a no-op Hono server under one node:http load generator.
import { connectRest } from '../shared/connections/rest.js';
import { enqueue, enqueueScript, jobKey, mintId, pendingKey } from '../shared/index.js';
import type { Child } from './children.js';
import { drive, measured, type Measured } from './drive.js';
import { httpAgent, httpLoad, quantile, type HttpLoadResult, type HttpRequest } from './http-load.js';
import { payloadOf } from './payload.js';
import type { Server } from './server.js';

export interface HttpMeasured extends Measured {
  /** Cores the HTTP process used in the measured window; undefined when /proc cannot tell. */
  httpCores: number | undefined;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
}

/** `work` under measured(), plus the HTTP process's CPU over the same window. */
async function withHttpCpu<T extends Measured>(child: Child, work: () => Promise<T>): Promise<T & { httpCores: number | undefined }> {
  const before = child.cpuSeconds();
  const m = await work();
  const after = child.cpuSeconds();
  return { ...m, httpCores: before !== undefined && after !== undefined ? (after - before) / m.seconds : undefined };
}

export interface RestResult extends HttpMeasured {
  jobs: number;
}

/** enqueue() over connectRest to the gateway, `inFlight` calls outstanding, a fresh id each. */
export async function measureRest(
  server: Server,
  gateway: Child & { producer: string },
  queue: string,
  inFlight: number,
  warmMs: number,
  ms: number,
): Promise<RestResult> {
  const connection = connectRest({ url: gateway.url, token: gateway.producer });
  let n = 0;
  let latencies: number[] | undefined;
  const step = async () => {
    const id = mintId();
    const t = performance.now();
    const verdict = await enqueue(connection, queue, id, JSON.stringify(payloadOf(n++)));
    latencies?.push(performance.now() - t);
    if (verdict !== 'enqueued') throw new Error(`fresh id ${id} answered ${verdict}`);
    return 1;
  };
  try {
    await drive(inFlight, warmMs, step);
    latencies = [];
    const m = await withHttpCpu(gateway, () => measured(() => server.cpuSeconds(), () => drive(inFlight, ms, step)));
    latencies.sort((a, b) => a - b);
    const jobs = Number(await server.call('ZCARD', pendingKey(queue)));
    return { ...m, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), jobs };
  } finally {
    await connection.close();
  }
}

export interface LoadPhase extends HttpMeasured {
  load: HttpLoadResult;
  /** Requests answered ok, warm-up included. */
  okTotal: number;
}

/**
 * The gateway's single-enqueue request, exactly as connectRest sends it minus the base64
 * reply: POST /evalsha/<sha>/2/<row>/<pending>/<id> with the payload as the raw body.
 */
export function enqueueRequests(queue: string): () => HttpRequest {
  const body = Buffer.from(JSON.stringify(payloadOf(0)));
  const sha = enqueueScript.sha1;
  const pending = encodeURIComponent(pendingKey(queue));
  return () => {
    const id = mintId();
    return { path: `/evalsha/${sha}/2/${encodeURIComponent(jobKey(queue, id))}/${pending}/${id}`, body };
  };
}

/** The node:http generator against `target`: a warm-up, then `ms` measured. */
export async function measureLoad(
  server: Server,
  target: Child,
  token: string,
  next: () => HttpRequest,
  inFlight: number,
  warmMs: number,
  ms: number,
): Promise<LoadPhase> {
  const agent = httpAgent(inFlight);
  const spec = { url: target.url, headers: { Authorization: `Bearer ${token}` }, inFlight, next, expect: '{"result":1}' };
  try {
    const warm = await httpLoad(agent, { ...spec, ms: warmMs });
    let load: HttpLoadResult | undefined;
    const m = await withHttpCpu(target, () =>
      measured(
        () => server.cpuSeconds(),
        async () => {
          load = await httpLoad(agent, { ...spec, ms, latencies: true });
          return { ops: load.ok, seconds: load.seconds };
        },
      ),
    );
    return {
      ...m,
      load: load!,
      okTotal: warm.ok + load!.ok,
      p50Ms: quantile(load!.latencyMs, 0.5),
      p99Ms: quantile(load!.latencyMs, 0.99),
    };
  } finally {
    agent.destroy();
  }
}
