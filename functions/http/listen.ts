// A Hono app (a fetch handler, on @hono/node-server) or a node:http request listener (the
// gateway) on a Node server with its caps and timeouts (limits.ts; the connection caps and the
// first request line's timeout: connection-guard.ts), over HTTPS when given a certificate and
// key. Resolves once it listens, with the URL it answers on.
import { serve, type ServerType } from '@hono/node-server';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { guardConnections } from './connection-guard.js';
import { serverOptions, type ServerLimits } from './limits.js';

export interface ListenOptions {
  /** A fetch handler (served by @hono/node-server), or `listener`. */
  fetch?: Parameters<typeof serve>[0]['fetch'];
  listener?: RequestListener;
  host: string;
  port: number;
  limits: ServerLimits;
  /** PEM certificate chain and private key: HTTPS. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
}

export interface Listening {
  server: ServerType;
  url: string;
}

export async function listen({ fetch, listener, host, port, limits, tls }: ListenOptions): Promise<Listening> {
  const options = serverOptions(limits);
  // Node's own handshake timeout (120 s by default) restarts on every byte; the guard's deadline does not
  const secure = tls && { ...options, cert: tls.cert, key: tls.key, handshakeTimeout: limits.requestLineTimeoutMs };
  const server = await new Promise<ServerType>((resolve, reject) => {
    let s: ServerType;
    if (listener) {
      s = secure ? createHttpsServer(secure, listener) : createHttpServer(options, listener);
      guardConnections(s, limits, !!secure);
      s.listen(port, host, () => resolve(s));
    } else {
      if (!fetch) throw new TypeError('listen() needs a fetch handler or a request listener');
      s = secure
        ? serve({ fetch, hostname: host, port, createServer: createHttpsServer, serverOptions: secure }, () => resolve(s))
        : serve({ fetch, hostname: host, port, serverOptions: options }, () => resolve(s));
      // before the first connection: serve() listens, but accepts nothing before this turn ends
      guardConnections(s, limits, !!secure);
    }
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `${tls ? 'https' : 'http'}://${shown}:${address.port}` };
}
