// The page shell: the style sheet and the client script, both files of this origin (the CSP
// allows nothing inline), a header to move between pages, and a notice for what an action did.
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import { ASSET_VERSION } from './assets/version.js';
import { ProducerError } from './producer.js';
import { Shown, visible } from './show.js';

/** What a finished action says on the page it returns to (?done=<word>); other words say nothing. */
const DONE: Record<string, string> = {
  paused: 'Paused.',
  resumed: 'Resumed.',
  lane: 'Lane updated.',
  cancelled: 'Job cancelled.',
  promoted: 'Job promoted: due now.',
  rescheduled: 'Job rescheduled.',
  enqueued: 'Test job sent.',
};

export function Page({
  title,
  page,
  signedIn,
  done,
  live,
  children,
}: {
  title: string;
  page: string;
  signedIn: boolean;
  done?: string | undefined;
  live?: string;
  children: Child;
}) {
  const notice = done === undefined ? undefined : DONE[done];
  return (
    <>
      {raw('<!doctype html>')}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${visible(title)} - EchoMQ console`}</title>
          <link rel="stylesheet" href={`/assets/console.css?v=${ASSET_VERSION}`} />
          <script src={`/assets/console.js?v=${ASSET_VERSION}`} defer />
        </head>
        <body data-page={page} data-live={live}>
          <header>
            <a class="brand" href="/">
              EchoMQ console
            </a>
            {signedIn && (
              <nav>
                <a href="/">Queues</a> <a href="/send">Send</a>{' '}
                <form method="post" action="/signout" class="inline">
                  <button type="submit">Sign out</button>
                </form>
              </nav>
            )}
          </header>
          <main>
            {notice && (
              <p class="notice" role="status">
                {notice}
              </p>
            )}
            {children}
          </main>
        </body>
      </html>
    </>
  );
}

/** A producer refusal (or an unreachable producer), shown as it came: status, code, detail. */
export function Refusal({ err, what }: { err: unknown; what?: string }) {
  if (!(err instanceof ProducerError)) throw err;
  return (
    <div class="refused" role="alert" data-code={err.code} data-status={String(err.status)}>
      {what ? `${what}: ` : ''}
      <strong>
        {err.status === 0 ? '' : `${err.status} `}
        <Shown text={err.code} />
      </strong>{' '}
      <Shown text={typeof err.problem.detail === 'string' ? err.problem.detail : err.message} />
      {err.code === 'forbidden_action' && <span class="muted"> (this token lacks the capability: looking needs `read`, actions `control`)</span>}
    </div>
  );
}
