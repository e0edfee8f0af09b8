// Who may hold a connection to one of the Node servers, and for how long before it asks for
// anything. It takes over the server's 'connection' event (and, over HTTPS, 'secureConnection'),
// so it sees each socket before node:http (or TLS) does:
//  - one address (address-key.ts) holds at most `maxConnectionsPerAddress`; one more is closed
//    as it arrives. 0: no share (a proxy in front, whose address every connection has).
//  - a new connection is "pending" until its first request line arrives: it must arrive within
//    `requestLineTimeoutMs`, else the socket is closed unanswered. Over HTTPS the TLS handshake
//    gets as long first (an absolute deadline: Node's handshakeTimeout restarts on every byte).
//    node:http is handed the socket only at that line, so its headers timeout runs from there,
//    and between requests its keep-alive timeout holds: nothing here sees a second request.
//  - at `maxConnections`, a new connection closes the oldest pending one and takes its place;
//    with none pending it is closed itself. Connections that have asked for something are
//    never shed for newcomers, and idle sockets cannot keep the listener full.
// The work is per connection (a counter, a map entry, a 'data' listener until the first line);
// requests on a kept-alive connection pass none of it.
import { maxHeaderSize } from 'node:http';
import type { Server, Socket } from 'node:net';
import { addressKey } from './address-key.js';
import type { ServerLimits } from './limits.js';

type Accept = (this: Server, socket: Socket) => void;
const LF = 10;
const ignore = () => undefined;

/** Puts `server`'s connections under `limits`; call before it listens. `tls`: an https.Server. */
export function guardConnections(server: Server, limits: ServerLimits, tls: boolean): void {
  const share = limits.maxConnectionsPerAddress === 0 ? Number.POSITIVE_INFINITY : limits.maxConnectionsPerAddress;
  const timeoutMs = limits.requestLineTimeoutMs;
  const byAddress = new Map<string, number>();
  // pending sockets in arrival order with their deadlines: every deadline is now + timeoutMs
  // when set, so the map is also in deadline order and a sweep stops at the first one not due
  const pending = new Map<Socket, number>();
  let open = 0;
  let sweeper: NodeJS.Timeout | undefined;

  const sweep = () => {
    const now = performance.now();
    for (const [socket, deadline] of pending) {
      if (deadline > now) return;
      pending.delete(socket);
      socket.destroy();
    }
    clearInterval(sweeper);
    sweeper = undefined;
  };
  const pend = (socket: Socket) => {
    pending.set(socket, performance.now() + timeoutMs);
    // at most a quarter of the timeout late, and no busier than every 10 ms
    sweeper ??= setInterval(sweep, Math.min(250, Math.max(10, Math.floor(timeoutMs / 4)))).unref();
  };

  /** Hands `socket` to `accept` once a request line (or more than node:http takes as headers) has arrived. */
  const awaitRequestLine = (socket: Socket, accept: Accept[]) => {
    let head: Buffer | undefined;
    const onData = (chunk: Buffer) => {
      head = head === undefined ? chunk : Buffer.concat([head, chunk]);
      if (!chunk.includes(LF) && head.length <= maxHeaderSize) return;
      socket.off('data', onData).off('end', onEnd);
      pending.delete(socket);
      // node:http reads what was read here first, then the socket (before any later read lands)
      socket.pause();
      socket.unshift(head);
      for (const a of accept) a.call(server, socket);
      socket.resume();
    };
    // the client finished sending without a whole request line: nothing to answer
    const onEnd = () => socket.destroy();
    socket.on('data', onData).on('end', onEnd);
  };

  const accept = server.listeners('connection') as Accept[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    socket.on('error', ignore); // node:http's own handler comes later; a reset before that is no crash
    const key = addressKey(socket.remoteAddress);
    const held = key === undefined ? 0 : (byAddress.get(key) ?? 0);
    if (key === undefined || held >= share) return void socket.destroy();
    if (open >= limits.maxConnections) {
      const oldest = pending.keys().next();
      if (oldest.done) return void socket.destroy();
      pending.delete(oldest.value);
      oldest.value.destroy();
    }
    open++;
    byAddress.set(key, held + 1);
    socket.once('close', () => {
      open--;
      const n = byAddress.get(key)! - 1;
      if (n === 0) byAddress.delete(key);
      else byAddress.set(key, n);
      pending.delete(socket);
    });
    pend(socket);
    // over HTTPS the raw socket stays pending through the handshake ('secureConnection' below)
    if (tls) for (const a of accept) a.call(server, socket);
    else awaitRequestLine(socket, accept);
  });

  if (!tls) return;
  const secureAccept = server.listeners('secureConnection') as Accept[];
  server.removeAllListeners('secureConnection');
  server.on('secureConnection', (socket: Socket) => {
    // the raw socket under this TLS socket: its handshake is done, its request line is due next
    const raw = (socket as { _parent?: Socket })._parent;
    if (raw === undefined || !pending.delete(raw)) return void socket.destroy();
    socket.once('close', () => pending.delete(socket));
    pend(socket);
    awaitRequestLine(socket, secureAccept);
  });
}
