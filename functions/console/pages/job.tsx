// A job: its state, attempts, lane, due time, flow parent, last error and payload (payload.tsx),
// with its actions: cancel (pending, scheduled or dead), run now and reschedule (scheduled).
import type { JobInfo } from '../../../client/index.js';
import { Page } from '../layout.js';
import { Payload } from '../payload.js';
import { Shown, When, seg } from '../show.js';

function Actions({ job }: { job: JobInfo }) {
  const base = `/q/${seg(job.queue)}/jobs/${seg(job.id)}`;
  const scheduled = job.state === 'scheduled';
  return (
    <section>
      <h2>Actions</h2>
      <form method="post" action={`${base}/cancel`} class="inline">
        <input type="hidden" name="back" value="queue" />
        <button type="submit" class="danger" id="cancel">
          Cancel job
        </button>
      </form>{' '}
      {scheduled && (
        <>
          <form method="post" action={`${base}/run-now`} class="inline">
            <input type="hidden" name="back" value="job" />
            <button type="submit" id="run-now">
              Run now
            </button>
          </form>{' '}
          <form method="post" action={`${base}/reschedule`} class="inline">
            <label>
              Due in <input type="text" name="delay" required pattern="[0-9]{1,15}(ms|s|m|h|d)" placeholder="30s, 5m, 2h" size={8} />
            </label>{' '}
            <button type="submit" id="reschedule">
              Reschedule
            </button>
          </form>
        </>
      )}
      {!scheduled && <p class="muted">Run now and reschedule act on a scheduled job.</p>}
    </section>
  );
}

export function JobPage({ job, done }: { job: JobInfo; done?: string | undefined }) {
  const queueLink = `/q/${seg(job.queue)}`;
  return (
    <Page title={`Job ${job.id}`} page="job" signedIn done={done}>
      <h1>
        Job <Shown text={job.id} />
      </h1>
      <dl class="facts" id="job">
        <dt>queue</dt>
        <dd>
          <a href={queueLink}>
            <Shown text={job.queue} />
          </a>
        </dd>
        <dt>state</dt>
        <dd data-field="state">{job.state}</dd>
        <dt>attempts</dt>
        <dd data-field="attempts">{String(job.attempts)}</dd>
        <dt>group</dt>
        <dd data-field="group">{job.group === undefined ? <span class="muted">flat (no lane)</span> : <Shown text={job.group} />}</dd>
        <dt>due</dt>
        <dd data-field="due">{job.runAt === undefined ? <span class="muted">not scheduled</span> : <When ms={job.runAt} />}</dd>
        <dt>flow parent</dt>
        <dd data-field="parent">
          {job.parent === undefined ? (
            <span class="muted">none</span>
          ) : (
            <a href={`/q/${seg(job.parentQueue ?? job.queue)}/jobs/${seg(job.parent)}`}>
              <Shown text={job.parent} />
              {job.parentQueue !== undefined && (
                <>
                  {' in '}
                  <Shown text={job.parentQueue} />
                </>
              )}
            </a>
          )}
        </dd>
        <dt>flow children</dt>
        <dd data-field="children">{job.state === 'awaiting_children' ? 'waiting for its children to complete' : <span class="muted">none waited for</span>}</dd>
        {job.lastError !== undefined && (
          <>
            <dt>last error</dt>
            <dd class="error" data-field="lastError">
              <Shown text={job.lastError} multiline />
            </dd>
          </>
        )}
      </dl>
      <Payload payload={job.payload} payloadBase64={job.payloadBase64} copyUrl={`/q/${seg(job.queue)}/jobs/${seg(job.id)}/payload`} />
      <Actions job={job} />
    </Page>
  );
}

export function NoJob({ queue, id }: { queue: string; id: string }) {
  return (
    <Page title="No such job" page="job" signedIn>
      <h1>No such job</h1>
      <p id="gone">
        The producer has no job <Shown text={id} /> in queue{' '}
        <a href={`/q/${seg(queue)}`}>
          <Shown text={queue} />
        </a>
        : it ran, was cancelled, or never was.
      </p>
    </Page>
  );
}
