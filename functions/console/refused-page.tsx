// An action the producer (or the console, for a form it cannot send) refused: its own page,
// at the producer's status, saying what came back, with the way back.
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { Page, Refusal } from './layout.js';
import { ProducerError } from './producer.js';

/** A form the console will not send: 400, said as the producer says its refusals. */
export const badForm = (detail: string) => new ProducerError(400, 'invalid_form', detail, { detail });

/** The status to answer a refusal with: the producer's, or 502 when it did not answer. */
export const statusOf = (err: unknown): ContentfulStatusCode =>
  (err instanceof ProducerError && err.status >= 400 && err.status < 600 ? err.status : 502) as ContentfulStatusCode;

export function RefusedPage({ err, back }: { err: unknown; back: string }) {
  return (
    <Page title="Refused" page="refused" signedIn>
      <h1>Refused</h1>
      <Refusal err={err} />
      <p>
        <a href={back}>Back</a>
      </p>
    </Page>
  );
}
