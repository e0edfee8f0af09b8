// A client that goes away mid-body, over a real socket (finding 7 of the second review).
import { connect } from 'node:net';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends a request's head and `prefix` of its body (under a declared length past it, or as one
 * chunk), waits for the server to start reading it, then closes the socket.
 */
export async function abortMidBody(url: string, path: string, headers: Record<string, string>, chunked = false, prefix = '0123456789'): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const bytes = Buffer.from(prefix);
  const framing = chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(bytes.length + 1000) };
  const head = Object.entries({ Host: `${hostname}:${port}`, ...headers, ...framing })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
  if (bytes.length > 0) socket.write(chunked ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]) : bytes);
  await sleep(150);
  socket.destroy();
  await sleep(50);
}
