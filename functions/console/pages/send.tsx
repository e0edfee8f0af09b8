// Send: a test job (payload, group, delay) through POST /v1/queues/{q}/jobs, and a signed
// test delivery to a configured webhook source, with the button that sends the very same
// delivery again (the producer answers it `duplicate`). Source names are shown, never secrets.
import { Page, Refusal } from '../layout.js';
import { Shown, seg, visible } from '../show.js';
import type { TestDelivery } from '../webhook-sign.js';

export interface WebhookResult {
  source: string;
  delivery: TestDelivery;
  status: number;
  body: Record<string, unknown>;
}

function Result({ result }: { result: WebhookResult }) {
  const { body, status } = result;
  const verdict = typeof body.verdict === 'string' ? body.verdict : undefined;
  const id = typeof body.id === 'string' ? body.id : undefined;
  const queue = typeof body.queue === 'string' ? body.queue : undefined;
  return (
    <div class="result" id="webhook-result">
      <p>
        {'Delivery '}
        <code>{result.delivery.id}</code> to <Shown text={result.source} />: {String(status)}{' '}
        <strong id="webhook-verdict">{verdict ?? (typeof body.code === 'string' ? <Shown text={body.code} /> : 'no verdict')}</strong>
        {typeof body.detail === 'string' && (
          <>
            {' '}
            <Shown text={body.detail} />
          </>
        )}
        {id !== undefined && queue !== undefined && (
          <>
            {', job '}
            <a href={`/q/${seg(queue)}/jobs/${seg(id)}`}>
              <Shown text={id} />
            </a>
          </>
        )}
      </p>
      <form method="post" action="/send/webhook">
        <input type="hidden" name="source" value={result.source} />
        <input type="hidden" name="delivery" value={result.delivery.id} />
        <input type="hidden" name="at" value={String(result.delivery.at)} />
        <button type="submit" id="webhook-resend">
          Send the same delivery again
        </button>
      </form>
    </div>
  );
}

export function SendPage({ sources, result, refused, done }: { sources: string[]; result?: WebhookResult; refused?: unknown; done?: string | undefined }) {
  return (
    <Page title="Send" page="send" signedIn done={done}>
      <h1>Send</h1>
      {refused !== undefined && <Refusal err={refused} what="Refused" />}
      <section>
        <h2>A test job</h2>
        <form method="post" action="/send/job" class="stack" id="send-job">
          <label>
            Queue <input type="text" name="queue" required maxlength={256} pattern="[A-Za-z0-9._\-]+" />
          </label>
          <label>
            Payload <textarea name="payload" rows={4} cols={60} />
          </label>
          <label>
            Group (a branded id, optional) <input type="text" name="group" maxlength={14} placeholder="PRT0KHTOWnGLuC" />
          </label>
          <label>
            Delay (optional) <input type="text" name="delay" maxlength={24} placeholder="30s, 5m" />
          </label>
          <button type="submit">Enqueue</button>
        </form>
      </section>
      <section>
        <h2>A signed test webhook</h2>
        {sources.length === 0 ? (
          <p class="muted">No webhook source is configured (EMQ_SOURCES, the producer's table, read by the console too).</p>
        ) : (
          <form method="post" action="/send/webhook" class="stack" id="send-webhook">
            <label>
              Source{' '}
              <select name="source">
                {sources.map((s) => (
                  <option value={s}>{visible(s)}</option>
                ))}
              </select>
            </label>
            <button type="submit">Send a signed test delivery</button>
          </form>
        )}
        {result && <Result result={result} />}
      </section>
    </Page>
  );
}
