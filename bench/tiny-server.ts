// The tiny upstream for the bench's one-fetch Worker: plain node:http (no framework),
// every request's body read and answered 200 {"result":1}, keep-alive. Prints its URL as the
// first stdout line; exits on SIGTERM/SIGINT, and when stdin closes (the bench is gone).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const reply = Buffer.from('{"result":1}');
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': reply.length });
    res.end(reply);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => resolve());
});
process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 3_000).unref();
  server.close(() => process.exit(0));
  server.closeIdleConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdin.on('end', stop).on('error', stop).resume();
