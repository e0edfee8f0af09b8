// A client that goes away mid-body, over a real socket (finding 7 of the second review).
import { connect } from 'node:net';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends a request's head and part of its body (a declared length, or chunked), waits for the
 * server to start reading it, then closes the socket.
 */
export async function abortMidBody(url: string, path: string, headers: Record<string, string>, chunked = false): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const head = Object.entries({ Host: `${hostname}:${port}`, ...headers, ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': '1000' }) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n${chunked ? 'a\r\n0123456789\r\n' : '0123456789'}`);
  await sleep(150);
  socket.destroy();
  await sleep(50);
}
