// A node:http request listener (the gateway, `emq producer`) on a Node server with its caps and
// timeouts (limits.ts; the connection caps and the first request line's timeout:
// connection-guard.ts), over HTTPS when given a certificate and key. Resolves once it listens,
// with the URL it answers on.
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { guardConnections } from './connection-guard.js';
import { serverOptions, type ServerLimits } from './limits.js';

export interface ListenOptions {
  listener: RequestListener;
  host: string;
  port: number;
  limits: ServerLimits;
  /** PEM certificate chain and private key: HTTPS. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
}

export interface Listening {
  server: Server;
  url: string;
}

export async function listen({ listener, host, port, limits, tls }: ListenOptions): Promise<Listening> {
  const options = serverOptions(limits);
  // Node's own handshake timeout (120 s by default) restarts on every byte; the guard's deadline does not
  const secure = tls && { ...options, cert: tls.cert, key: tls.key, handshakeTimeout: limits.requestLineTimeoutMs };
  const server = await new Promise<Server>((resolve, reject) => {
    const s: Server = secure ? createHttpsServer(secure, listener) : createHttpServer(options, listener);
    guardConnections(s, limits, !!secure);
    s.once('error', reject);
    // Node's backlog (511) overflows under a burst of connections, and the kernel then drops the
    // handshake's last ACK: such a client counts itself connected while the guard sees its socket
    // only seconds later. The kernel caps this at net.core.somaxconn.
    s.listen({ port, host, backlog: 4_096 }, () => resolve(s));
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `${tls ? 'https' : 'http'}://${shown}:${address.port}` };
}
