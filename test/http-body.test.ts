// functions/http/body.ts: a Web Request's body read under a cap. A declared Content-Length over
// the cap is refused before a byte is read; a streamed body is refused the moment it passes the
// cap (the rest never pulled); a failing body stream is the client's outcome, ClientClosed.
import { describe, expect, it } from 'vitest';
import { ClientClosed, TooLarge, declaredOver, readRequest } from '../functions/http/body.js';

const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill);

/** A streamed body of `chunks`, counting what was pulled and whether it was cancelled. */
function streamed(chunks: Uint8Array[], fail?: Error) {
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled < chunks.length) controller.enqueue(chunks[seen.pulled++]!);
      else if (fail) controller.error(fail);
      else controller.close();
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  const request = new Request('http://edge.test/v1/queues/q/jobs', { method: 'POST', body, duplex: 'half' } as RequestInit);
  return { request, seen };
}

describe('declaredOver', () => {
  it('is a Content-Length over the cap, without Transfer-Encoding', () => {
    expect(declaredOver('11', undefined, 10)).toBe(true);
    expect(declaredOver('10', undefined, 10)).toBe(false);
    expect(declaredOver('11', 'chunked', 10)).toBe(false);
    expect(declaredOver(undefined, undefined, 10)).toBe(false);
  });
});

describe('readRequest', () => {
  it('refuses a declared length over the cap before reading, as TooLarge not partly read', async () => {
    const notes: number[] = [];
    const request = new Request('http://edge.test/', { method: 'POST', headers: { 'content-length': '11' }, body: 'x'.repeat(11) });
    const err = await readRequest(request, 10, (n) => notes.push(n)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLarge);
    expect((err as TooLarge).partly).toBe(false);
    expect(notes).toEqual([]);
    expect(request.bodyUsed).toBe(false);
  });

  it('reads a declared body at the cap and notes its bytes', async () => {
    const notes: number[] = [];
    const request = new Request('http://edge.test/', { method: 'POST', headers: { 'content-length': '10' }, body: '0123456789' });
    const out = await readRequest(request, 10, (n) => notes.push(n));
    expect(new TextDecoder().decode(out)).toBe('0123456789');
    expect(notes).toEqual([10]);
  });

  it('joins a streamed body of several chunks in order, at exactly the cap', async () => {
    const { request } = streamed([bytes(3, 0x61), bytes(4, 0x62), bytes(3, 0x63)]);
    const notes: number[] = [];
    const out = await readRequest(request, 10, (n) => notes.push(n));
    expect(new TextDecoder().decode(out)).toBe('aaabbbbccc');
    expect(notes).toEqual([10]);
  });

  it('refuses a streamed body the moment it passes the cap: partly read, the rest cancelled, not pulled', async () => {
    const { request, seen } = streamed([bytes(6), bytes(6), bytes(6), bytes(6)]);
    const notes: number[] = [];
    const err = await readRequest(request, 10, (n) => notes.push(n)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLarge);
    expect((err as TooLarge).partly).toBe(true);
    expect(notes).toEqual([12]);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(3); // one chunk may be pulled ahead by the queue, never all four
  });

  it('turns a body stream that fails into ClientClosed', async () => {
    const { request } = streamed([bytes(2)], new Error('ECONNRESET'));
    await expect(readRequest(request, 10, () => undefined)).rejects.toBeInstanceOf(ClientClosed);
  });

  it('turns a declared body whose stream fails into ClientClosed', async () => {
    const { request } = streamed([bytes(2)], new Error('aborted'));
    const declared = new Request(request, { headers: { 'content-length': '5' } });
    await expect(readRequest(declared, 10, () => undefined)).rejects.toBeInstanceOf(ClientClosed);
  });

  it('reads no body as empty, noting nothing read', async () => {
    const notes: number[] = [];
    const out = await readRequest(new Request('http://edge.test/', { method: 'POST' }), 10, (n) => notes.push(n));
    expect(out.length).toBe(0);
    expect(notes).toEqual([]);
  });
});
