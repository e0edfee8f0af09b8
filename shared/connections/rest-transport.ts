// How the REST connection POSTs: its one seam to the runtime's HTTP client. Everywhere it is
// fetch; on Node it is undici's Pool (rest-node.ts), as fetch there spends about five times the
// CPU per small request. The protocol (rest.ts) reads only what RestAnswer gives.

/** An answer's status, headers and body, as the REST connection reads them. */
export interface RestAnswer {
  readonly status: number;
  /** A header's value, by its lowercase name; null when absent. */
  header(name: string): string | null;
  /** The body as text; rejects when the reply is cut off or the request's time runs out. */
  text(): Promise<string>;
  /** Drops the body unread, so the connection can be used again. */
  discard(): Promise<void>;
}

export interface RestTransport {
  /**
   * POSTs `body` to `base` + `path`. Rejects with an error named TimeoutError when no whole
   * answer came within `timeoutMs` (the body included), with another when none came at all.
   */
  post(base: string, path: string, headers: Record<string, string>, body: string | Uint8Array, timeoutMs: number): Promise<RestAnswer>;
  /** Lets go of idle connections; a later post opens new ones. */
  close(): Promise<void>;
}

/** The transport over `f` (the global fetch, looked up at each call, by default). */
export function fetchTransport(f: typeof fetch = (input, init) => fetch(input, init)): RestTransport {
  return {
    async post(base, path, headers, body, timeoutMs) {
      const res = await f(base + path, { method: 'POST', headers, body: body as NonNullable<RequestInit['body']>, signal: AbortSignal.timeout(timeoutMs) });
      return {
        status: res.status,
        header: (name) => res.headers.get(name),
        text: () => res.text(),
        discard: async () => {
          await res.body?.cancel();
        },
      };
    },
    async close() {},
  };
}
