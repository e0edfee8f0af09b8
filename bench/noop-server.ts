// The no-op floor of Hono on Node: the very app of the no-op Worker (workers/noop-worker.ts:
// the producer's route, the body read, 201 JSON, nothing else) on @hono/node-server, the
// stack `emq producer` and the Hono + BullMQ peer run on. Prints its URL as the first stdout
// line; exits 0 on SIGTERM/SIGINT, and on its own when stdin closes (the bench is gone).
import { serveFetchUntilTold } from './child-server.js';
import app from './workers/noop-worker.js';

await serveFetchUntilTold(app.fetch);
