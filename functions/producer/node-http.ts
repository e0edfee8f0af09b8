// The producer as a node:http request listener (`emq producer`: node.ts): the request read
// in place (no Request or Response objects: on Node they cost ~30 µs of CPU per request), its
// route matched from the core's table, and the core's answer written as it is. Node only.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tryDecodeURIComponent } from 'hono/utils/url';
import { drain, readIncoming } from '../http/incoming.js';
import { type MetricsEndpoint, pathOf, serveMetrics } from '../http/metrics.js';
import { authorizationOf, headerOf, targetOf } from '../http/node-request.js';
import type { Answer, RequestView } from './call.js';
import type { ProducerCore } from './core.js';

const NO_PARAMS: Record<string, string> = {};

/** A node:http request as the core reads it. */
class NodeRequest implements RequestView {
  constructor(
    readonly req: IncomingMessage,
    readonly method: string,
    readonly path: string,
    readonly params: Record<string, string>,
    /** The whole target URL: its query is read only when a route asks. */
    readonly url: string,
  ) {}
  header(name: string) {
    return headerOf(this.req, name);
  }
  param(name: string) {
    const value = this.params[name];
    return value === undefined ? undefined : tryDecodeURIComponent(value);
  }
  body(max: number, read: { bytes: number }) {
    return readIncoming(this.req, max, read);
  }
  query(name: string) {
    const at = this.url.indexOf('?');
    return at < 0 ? undefined : (new URLSearchParams(this.url.slice(at + 1)).get(name) ?? undefined);
  }
}

/** Writes an answer: its headers, Content-Length, its body (none to a HEAD); while draining, `Connection: close`. */
function write(req: IncomingMessage, res: ServerResponse, { status, headers, body }: Answer, draining: boolean): void {
  // a client that keeps its socket busy would hold the drain (and the exit) up for ever
  if (draining) headers.Connection = 'close';
  if (req.method === 'HEAD') {
    res.writeHead(status, headers).end();
  } else {
    headers['Content-Length'] = String(Buffer.byteLength(body));
    res.writeHead(status, headers).end(body);
  }
  // a body left unread (refused before or part way): read and dropped, so the connection can carry the next request
  if (req.method !== 'GET' && req.method !== 'HEAD' && !req.readableEnded) drain(req);
}

/** The listener; with `metrics`, GET /metrics is served in front of the routes; `draining` true once the process is stopping. */
export function producerListener(core: ProducerCore, metrics?: MetricsEndpoint, draining: () => boolean = () => false): RequestListener {
  return (req, res) => {
    const target = targetOf(req);
    if (!target) {
      res.writeHead(400, { 'Content-Length': 0 }).end();
      return;
    }
    // GET /metrics: before any route, neither logged nor counted; while off, the routes' 404
    if (metrics && pathOf(target.url) === '/metrics') {
      serveMetrics(req, res, metrics, authorizationOf(req), 'producer');
      return;
    }
    const method = req.method!;
    const matched = core.match(method, target.path);
    const request = new NodeRequest(req, method, target.path, matched?.params ?? NO_PARAMS, target.url);
    core.serve(matched?.route, request).then(
      (answer) => write(req, res, answer, draining()),
      (err: unknown) => {
        // the core answers every error itself: this is a bug, not a request's outcome
        console.error(`producer: ${method} ${target.path}: ${(err as Error).stack ?? String(err)}`);
        res.destroy();
      },
    );
  };
}
