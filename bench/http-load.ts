// A small closed-loop HTTP load generator: node:http with one keep-alive Agent, `inFlight`
// workers each sending one POST after another for a fixed time. It is the one generator the
// bench points at both the gateway and the no-op server, so their figures compare fairly.
// Replies: 200 with the expected body counts as ok; any other status or body is counted
// (the first kept) and the run goes on; a transport failure is counted too.
import { Agent, request } from 'node:http';

export interface HttpRequest {
  path: string;
  body: Buffer;
}

export interface HttpLoadSpec {
  url: string;
  headers: Record<string, string>;
  inFlight: number;
  ms: number;
  /** The next request (called once per request, so it can mint a fresh id). */
  next: () => HttpRequest;
  /** The body a 200 must carry, exactly. */
  expect: string;
  /** Keep each request's latency (for percentiles). */
  latencies?: boolean;
}

export interface HttpLoadResult {
  seconds: number;
  requests: number;
  ok: number;
  /** Non-200 answers, by status. */
  statuses: Record<number, number>;
  /** 200 answers whose body was not `expect`. */
  wrongBodies: number;
  transportErrors: number;
  firstError?: string;
  /** Milliseconds, sorted; empty unless asked for. */
  latencyMs: number[];
}

export function httpAgent(inFlight: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: inFlight, maxFreeSockets: inFlight });
}

export async function httpLoad(agent: Agent, spec: HttpLoadSpec): Promise<HttpLoadResult> {
  const target = new URL(spec.url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(target.port) || 80;
  const tally: HttpLoadResult = { seconds: 0, requests: 0, ok: 0, statuses: {}, wrongBodies: 0, transportErrors: 0, latencyMs: [] };
  const note = (why: string) => (tally.firstError ??= why);

  const once = () =>
    new Promise<void>((resolve) => {
      const { path, body } = spec.next();
      const t = performance.now();
      const req = request(
        {
          agent,
          host,
          port,
          method: 'POST',
          path,
          headers: { ...spec.headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => {
            tally.requests++;
            if (spec.latencies) tally.latencyMs.push(performance.now() - t);
            const status = res.statusCode ?? 0;
            if (status !== 200) {
              tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
              note(`${status} ${text.slice(0, 200)}`);
            } else if (text !== spec.expect) {
              tally.wrongBodies++;
              note(`200 ${text.slice(0, 200)}`);
            } else {
              tally.ok++;
            }
            resolve();
          });
          res.on('error', (err) => {
            tally.requests++;
            tally.transportErrors++;
            note(`response: ${err.message}`);
            resolve();
          });
        },
      );
      req.on('error', (err) => {
        tally.requests++;
        tally.transportErrors++;
        note(`request: ${err.message}`);
        resolve();
      });
      req.end(body);
    });

  const start = performance.now();
  const end = start + spec.ms;
  const worker = async () => {
    while (performance.now() < end) {
      await once();
      // a target refusing connections fails fast: do not spin on it for the whole window
      if (tally.transportErrors > 1000 && tally.transportErrors > tally.ok) break;
    }
  };
  await Promise.all(Array.from({ length: spec.inFlight }, worker));
  tally.seconds = (performance.now() - start) / 1000;
  tally.latencyMs.sort((a, b) => a - b);
  return tally;
}

/** The q-quantile (0..1) of sorted values, nearest rank; undefined when empty. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** "none", or "404 x3, wrong body x1, transport x2 (first: ...)". */
export function errorsOf(r: HttpLoadResult): string {
  const parts = [
    ...Object.entries(r.statuses).map(([s, n]) => `${s} x${n}`),
    ...(r.wrongBodies ? [`wrong body x${r.wrongBodies}`] : []),
    ...(r.transportErrors ? [`transport x${r.transportErrors}`] : []),
  ];
  return parts.length === 0 ? 'none' : `${parts.join(', ')} (first: ${r.firstError})`;
}
