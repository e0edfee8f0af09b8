// Reading a request body under a cap, with web APIs (the producer's Hono app; the node:http
// twin is incoming.ts, on the same rules). A declared Content-Length over the cap is
// refused before a byte is read; a chunked body is counted as it streams in and refused the
// moment it passes the cap, so the rest is never read.

export class TooLarge extends Error {
  /** True when part of the body was read: the rest is left unread, so the connection must close. */
  constructor(readonly partly = false) {
    super('the request body is larger than the cap');
  }
}

/**
 * The client closed the connection, or its body stream failed, before the body ended: the
 * client's outcome, not the server's (answered 499 client_closed, never a 5xx or a stack).
 */
export class ClientClosed extends Error {
  constructor() {
    super('the client closed the connection before the body ended');
  }
}

/** The body's bytes, a failed read of them (any: only the client's stream is read) as ClientClosed. */
const closed = (): never => {
  throw new ClientClosed();
};

/** A declared Content-Length (without Transfer-Encoding) over `max`. */
export const declaredOver = (length: string | undefined, encoding: string | undefined, max: number) =>
  length !== undefined && encoding === undefined && Number(length) > max;

/** The request body under the cap `max`; `note` is told how many bytes were read. */
export async function readRequest(request: Request, max: number, note: (bytes: number) => void): Promise<Uint8Array> {
  const declared = request.headers.get('content-length') ?? undefined;
  const encoding = request.headers.get('transfer-encoding') ?? undefined;
  if (declaredOver(declared, encoding, max)) throw new TooLarge();
  if (declared !== undefined && encoding === undefined) {
    const bytes = new Uint8Array(await request.arrayBuffer().catch(closed));
    note(bytes.length);
    return bytes;
  }
  const body = request.body;
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read().catch(closed);
    if (done) break;
    size += value.length;
    if (size > max) {
      note(size);
      await reader.cancel();
      throw new TooLarge(true);
    }
    chunks.push(value);
  }
  note(size);
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
