// The console's pages (GET): each reads through the producer API with the asker's token, and
// the JSON the page scripts poll for live refresh. A read the producer refuses is shown on the
// page; the whole page refused (401) sends a browser back to sign in.
import type { Hono } from 'hono';
import type { ConsoleEnv, ConsoleOptions } from './app.js';
import { JobPage, NoJob } from './pages/job.js';
import { QueuePage, type QueueData } from './pages/queue.js';
import { QueuesPage } from './pages/queues.js';
import { SendPage } from './pages/send.js';
import { SignIn } from './pages/signin.js';
import { fromBase64 } from '../../shared/base64.js';
import { ProducerError } from './producer.js';
import { allQueues, jobsOf, queueWithLanes } from './reads.js';
import { RefusedPage, statusOf } from './refused-page.js';
import { signOut } from './session.js';

/** A read's value, or the refusal in its place. */
const settle = async <T,>(p: Promise<T>): Promise<T | { refused: unknown }> => {
  try {
    return await p;
  } catch (err) {
    if (!(err instanceof ProducerError)) throw err;
    return { refused: err };
  }
};

const unauthorized = (err: unknown) => err instanceof ProducerError && err.status === 401;

export function pageRoutes(app: Hono<ConsoleEnv>, options: ConsoleOptions): void {
  app.get('/', async (c) => {
    const done = c.req.query('done');
    try {
      const { queues, cut } = await allQueues(c.var.api);
      return c.html(<QueuesPage queues={queues} cut={cut} done={done} />);
    } catch (err) {
      if (unauthorized(err)) return (signOut(c), c.html(<SignIn refused={err} />, 401));
      if (!(err instanceof ProducerError)) throw err;
      return c.html(<QueuesPage queues={[]} cut={false} refused={err} />, statusOf(err));
    }
  });

  app.get('/queues.json', async (c) => {
    try {
      const { queues } = await allQueues(c.var.api);
      return c.json({ at: Date.now(), queues: queues.map(({ name, counts, paused }) => ({ name, counts, paused })) });
    } catch (err) {
      if (!(err instanceof ProducerError)) throw err;
      return c.json({ code: err.code }, statusOf(err));
    }
  });

  app.get('/q/:queue', async (c) => {
    const queue = c.req.param('queue');
    const lane = c.req.query('group') || undefined;
    const api = c.var.api;
    const [head, scheduled, pending, dead, repeatables, crons] = await Promise.all([
      settle(queueWithLanes(api, queue)),
      settle(jobsOf(api, queue, 'scheduled')),
      settle(jobsOf(api, queue, 'pending', lane)),
      settle(jobsOf(api, queue, 'dead')),
      settle(api.client.schedules(queue, { count: 100 })),
      settle(api.client.crons()),
    ]);
    if ('refused' in head && unauthorized(head.refused)) return (signOut(c), c.html(<SignIn refused={head.refused} />, 401));
    const data: QueueData = { queue, lane, head, scheduled, pending, dead, repeatables, crons };
    return c.html(<QueuePage data={data} done={c.req.query('done')} />, 'refused' in head ? statusOf(head.refused) : 200);
  });

  app.get('/q/:queue/live.json', async (c) => {
    try {
      const { view, lanes } = await queueWithLanes(c.var.api, c.req.param('queue'));
      return c.json({
        at: Date.now(),
        counts: view.counts,
        paused: view.paused,
        lanes: lanes.map(({ group, pending, active }) => ({ group, pending, active })),
      });
    } catch (err) {
      if (!(err instanceof ProducerError)) throw err;
      return c.json({ code: err.code }, statusOf(err));
    }
  });

  app.get('/q/:queue/jobs/:id', async (c) => {
    const { queue, id } = c.req.param();
    try {
      const job = await c.var.api.client.job(queue, id, { payload: true });
      if (!job) return c.html(<NoJob queue={queue} id={id} />, 404);
      return c.html(<JobPage job={job} done={c.req.query('done')} />);
    } catch (err) {
      if (unauthorized(err)) return (signOut(c), c.html(<SignIn refused={err} />, 401));
      return c.html(<RefusedPage err={err} back={`/q/${encodeURIComponent(queue)}`} />, statusOf(err));
    }
  });

  // the whole payload, for the page's Copy button and Download link: bytes, never rendered
  app.get('/q/:queue/jobs/:id/payload', async (c) => {
    const { queue, id } = c.req.param();
    try {
      const job = await c.var.api.client.job(queue, id, { payload: true });
      if (!job) return c.text('no such job', 404);
      const bytes = job.payload !== undefined ? new TextEncoder().encode(job.payload) : (fromBase64(job.payloadBase64 ?? '') ?? new Uint8Array());
      return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
        'Content-Type': 'application/octet-stream',
        'Content-Disposition': `attachment; filename="${id.replace(/[^A-Za-z0-9]/g, '_')}.bin"`,
        'Content-Security-Policy': "sandbox; default-src 'none'",
      });
    } catch (err) {
      if (!(err instanceof ProducerError)) throw err;
      return c.text(err.code, statusOf(err));
    }
  });

  app.get('/send', (c) => c.html(<SendPage sources={[...options.sources.keys()]} done={c.req.query('done')} />));
}
