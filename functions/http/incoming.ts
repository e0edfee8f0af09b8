// Reading a node:http request's body under a cap (the gateway, `emq producer`; Node only), on body.ts's
// rules: a declared Content-Length over the cap is refused before a byte is read, a chunked
// body the moment it passes the cap; what is left is not read for the route (drain() reads and
// drops it once the request is answered).
import type { IncomingMessage } from 'node:http';
import { ClientClosed, TooLarge, declaredOver } from './body.js';

/**
 * The body of a node:http request: its bytes (the chunks as they came, not copied when one).
 * `read.bytes` is added the bytes read (the request's record, for its log line and metrics),
 * those of a body refused part way included, as readRequest notes them.
 */
export function readIncoming(req: IncomingMessage, max: number, read?: { bytes: number }): Promise<Uint8Array> {
  if (declaredOver(req.headers['content-length'], req.headers['transfer-encoding'], max)) return Promise.reject(new TooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        if (read) read.bytes += size;
        stop();
        req.pause();
        reject(new TooLarge(true));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      if (read) read.bytes += size;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // an error on the request stream (ECONNRESET, an aborted body) is the client's too
    const onError = () => {
      stop();
      reject(new ClientClosed());
    };
    const onClose = () => {
      stop();
      reject(new ClientClosed());
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** A body left unread is read and dropped for at most this long, and this many bytes; then the connection is closed. */
const DRAIN_MS = 500;
const DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Reads and drops what is left of a request's body once it is answered, so its connection
 * can carry the next request; a body that takes longer than DRAIN_MS or is larger than
 * DRAIN_BYTES closes the connection instead.
 */
export function drain(req: IncomingMessage): void {
  let size = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off('data', onData).off('end', stop).off('error', stop);
  };
  const close = () => {
    stop();
    req.socket?.destroySoon?.();
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > DRAIN_BYTES) close();
  };
  const timer = setTimeout(close, DRAIN_MS);
  timer.unref?.();
  req.on('data', onData).on('end', stop).on('error', stop);
  req.resume();
}
