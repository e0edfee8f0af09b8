// The console's actions: POST forms (the gate in app.tsx has checked the token is there and
// the post same-origin), each one call of the producer API with the asker's token. Done: a
// redirect (303) to the page it came from, which says what happened. Refused: the refusal's
// own page at the producer's status (403 forbidden_action for a token without `control`).
import type { Context, Hono } from 'hono';
import type { ConsoleEnv, ConsoleOptions } from './app.js';
import { SendPage } from './pages/send.js';
import { ProducerError } from './producer.js';
import { RefusedPage, badForm, statusOf } from './refused-page.js';
import { seg } from './show.js';
import { DELIVERY_ID, bodyOf, newDelivery, signedHeaders, type TestDelivery } from './webhook-sign.js';

/** Form fields as text (a file field is not text: empty). */
async function formOf(c: Context): Promise<(name: string) => string> {
  const form = await c.req.parseBody();
  return (name) => {
    const v = form[name];
    return typeof v === 'string' ? v : '';
  };
}

/** A lane setting: empty is none; else a whole number from 1 to 2^31 - 1 (the producer checks again). */
function setting(text: string, name: string): number | undefined {
  if (text.trim() === '') return undefined;
  if (!/^\d{1,10}$/.test(text.trim())) throw badForm(`${name} must be a whole number from 1`);
  return Number(text.trim());
}

export function actionRoutes(app: Hono<ConsoleEnv>, options: ConsoleOptions): void {
  /** Runs the call; a refusal becomes its page (back to `back`), anything else throws. */
  const act = async (c: Context<ConsoleEnv>, back: string, call: () => Promise<string>) => {
    try {
      return c.redirect(await call(), 303);
    } catch (err) {
      if (!(err instanceof ProducerError)) throw err;
      return c.html(<RefusedPage err={err} back={back} />, statusOf(err));
    }
  };
  const queuePage = (queue: string) => `/q/${seg(queue)}`;
  const jobPage = (queue: string, id: string) => `/q/${seg(queue)}/jobs/${seg(id)}`;
  const gone = (queue: string, id: string) =>
    new ProducerError(404, 'not_found', `no job ${id} in queue ${queue}`, { detail: `no job ${id} in queue ${queue}` });

  for (const verb of ['pause', 'resume'] as const) {
    app.post(`/q/:queue/${verb}`, (c) => {
      const queue = c.req.param('queue');
      return act(c, queuePage(queue), async () => {
        await c.var.api.client[verb](queue);
        return `${queuePage(queue)}?done=${verb}d`;
      });
    });
  }

  app.post('/q/:queue/lanes/:group', async (c) => {
    const { queue, group } = c.req.param();
    const field = await formOf(c);
    return act(c, queuePage(queue), async () => {
      const action = field('action');
      if (action === 'pause' || action === 'resume') await c.var.api.client.setGroup(queue, group, { paused: action === 'pause' });
      else {
        const limit = setting(field('limit'), 'limit');
        const weight = setting(field('weight'), 'weight');
        if (limit === undefined && weight === undefined) throw badForm('give a limit or a weight');
        await c.var.api.client.setGroup(queue, group, { ...(limit !== undefined && { limit }), ...(weight !== undefined && { weight }) });
      }
      return `${queuePage(queue)}?done=lane`;
    });
  });

  app.post('/q/:queue/jobs/:id/cancel', (c) => {
    const { queue, id } = c.req.param();
    return act(c, jobPage(queue, id), async () => {
      if ((await c.var.api.client.remove(queue, id)) === null) throw gone(queue, id);
      return `${queuePage(queue)}?done=cancelled`;
    });
  });

  app.post('/q/:queue/jobs/:id/run-now', async (c) => {
    const { queue, id } = c.req.param();
    const field = await formOf(c);
    return act(c, jobPage(queue, id), async () => {
      if ((await c.var.api.client.promote(queue, id)) === null) throw gone(queue, id);
      return field('back') === 'job' ? `${jobPage(queue, id)}?done=promoted` : `${queuePage(queue)}?done=promoted`;
    });
  });

  app.post('/q/:queue/jobs/:id/reschedule', async (c) => {
    const { queue, id } = c.req.param();
    const field = await formOf(c);
    return act(c, jobPage(queue, id), async () => {
      if ((await c.var.api.client.reschedule(queue, id, { delay: field('delay').trim() })) === null) throw gone(queue, id);
      return `${jobPage(queue, id)}?done=rescheduled`;
    });
  });

  app.post('/send/job', async (c) => {
    const field = await formOf(c);
    return act(c, '/send', async () => {
      const queue = field('queue').trim();
      const group = field('group').trim();
      const delay = field('delay').trim();
      const { id } = await c.var.api.client.enqueue(queue, field('payload'), { ...(group && { group }), ...(delay && { delay }) });
      return `${jobPage(queue, id)}?done=enqueued`;
    });
  });

  app.post('/send/webhook', async (c) => {
    const field = await formOf(c);
    const names = [...options.sources.keys()];
    const refuse = (err: unknown) => c.html(<SendPage sources={names} refused={err} />, statusOf(err));
    const source = options.sources.get(field('source'));
    if (!source) return refuse(badForm('no webhook source of that name is configured'));
    let delivery: TestDelivery;
    if (field('delivery') === '') delivery = newDelivery();
    else if (DELIVERY_ID.test(field('delivery')) && /^\d{1,12}$/.test(field('at'))) delivery = { id: field('delivery'), at: Number(field('at')) };
    else return refuse(badForm('a resend names a delivery this console made'));
    try {
      // the asker must be able to read the source's queue: a token of another tenant signs nothing here
      await c.var.api.client.queue(source.queue, { count: 1 });
      const body = bodyOf(delivery);
      const answer = await c.var.api.deliver(`/v1/webhooks/${encodeURIComponent(source.name)}`, await signedHeaders(source, delivery, body), body);
      return c.html(<SendPage sources={names} result={{ source: source.name, delivery, ...answer }} />);
    } catch (err) {
      if (!(err instanceof ProducerError)) throw err;
      return refuse(err);
    }
  });
}
