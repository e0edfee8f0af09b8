// The tiny upstream for the bench's one-fetch Worker: plain node:http (no framework),
// every request's body read and answered 200 {"result":1}, keep-alive. Prints its URL as the
// first stdout line; exits on SIGTERM/SIGINT, and when stdin closes (the bench is gone).
import { createServer } from 'node:http';
import { serveUntilTold } from './child-server.js';

const reply = Buffer.from('{"result":1}');
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': reply.length });
    res.end(reply);
  });
});
server.keepAliveTimeout = 60_000;
await serveUntilTold(server);
