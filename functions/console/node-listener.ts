// The console's Fetch-style app (Request in, Response out) as a node:http request listener:
// the package's servers are node:http, and @hono/node-server stays the user's own choice (it
// is not a dependency of the package). The request's URL is read as the producer's and the
// gateway's are (node-request.ts: a target or Host that makes no URL is 400); its body is
// streamed to the app, which caps it. Node only.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { targetOf } from '../http/node-request.js';

type FetchApp = (request: Request) => Response | Promise<Response>;

function requestOf(req: IncomingMessage): Request | undefined {
  const target = targetOf(req);
  if (!target) return undefined;
  const method = req.method ?? 'GET';
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const body = method === 'GET' || method === 'HEAD' ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>);
  return new Request(target.url, { method, headers, ...(body && { body, duplex: 'half' }) } as RequestInit);
}

async function write(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const headers: Array<[string, string]> = [];
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers.push([name, value]);
  });
  for (const cookie of response.headers.getSetCookie()) headers.push(['set-cookie', cookie]);
  const body = head ? undefined : Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, [...headers.flat(), ...(body ? ['content-length', String(body.length)] : [])]);
  res.end(body);
}

export function fetchListener(app: FetchApp): RequestListener {
  return (req, res) => {
    let request: Request | undefined;
    try {
      request = requestOf(req);
    } catch {
      request = undefined; // a header the Fetch API will not carry
    }
    if (!request) {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end('bad request');
      return;
    }
    Promise.resolve(app(request))
      .then((response) => write(res, response, req.method === 'HEAD'))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('internal error');
      });
  };
}
