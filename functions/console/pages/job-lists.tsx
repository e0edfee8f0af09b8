// A queue's jobs by state, as the listing route answers them: the schedule soonest first (with
// a Run now button each), recent pending jobs (newest first), dead jobs with their last error;
// each with Cancel. Every id links to the job's page.
import { Refusal } from '../layout.js';
import type { JobRow } from '../reads.js';
import { Shown, When, seg } from '../show.js';

type Listed = { jobs: JobRow[]; more: boolean } | { refused: unknown };

function JobActions({ queue, job, promote }: { queue: string; job: JobRow; promote: boolean }) {
  const base = `/q/${seg(queue)}/jobs/${seg(job.id)}`;
  return (
    <td>
      {promote && (
        <form method="post" action={`${base}/run-now`} class="inline">
          <input type="hidden" name="back" value="queue" />
          <button type="submit">Run now</button>
        </form>
      )}{' '}
      <form method="post" action={`${base}/cancel`} class="inline">
        <input type="hidden" name="back" value="queue" />
        <button type="submit" class="danger">
          Cancel
        </button>
      </form>
    </td>
  );
}

export function JobList({
  queue,
  state,
  title,
  lane,
  listed,
}: {
  queue: string;
  state: 'pending' | 'scheduled' | 'dead';
  title: string;
  lane?: string | undefined;
  listed: Listed;
}) {
  const heading = (
    <h2 id={`${state}-heading`}>
      {title}
      {lane !== undefined && (
        <>
          <Shown text={lane} />
          {', newest first '}
          <a href={`/q/${seg(queue)}#pending-heading`} class="muted">
            (show the flat ones)
          </a>
        </>
      )}
    </h2>
  );
  if ('refused' in listed) {
    return (
      <section>
        {heading}
        <Refusal err={listed.refused} what={`Listing ${state} jobs`} />
      </section>
    );
  }
  return (
    <section>
      {heading}
      {listed.jobs.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <table id={`jobs-${state}`} class="jobs">
          <thead>
            <tr>
              <th>job</th>
              {state === 'scheduled' && <th>due</th>}
              <th>group</th>
              <th class="num">attempts</th>
              <th class="num">bytes</th>
              {state === 'dead' && <th>last error</th>}
              <th>actions</th>
            </tr>
          </thead>
          <tbody>
            {listed.jobs.map((job) => (
              <tr data-job={job.id}>
                <td class="name">
                  <a href={`/q/${seg(queue)}/jobs/${seg(job.id)}`}>
                    <Shown text={job.id} />
                  </a>
                </td>
                {state === 'scheduled' && (
                  <td>
                    <When ms={job.runAt} />
                  </td>
                )}
                <td>{job.group === undefined ? <span class="muted">flat</span> : <Shown text={job.group} />}</td>
                <td class="num">{String(job.attempts)}</td>
                <td class="num">{job.bytes === undefined ? '-' : String(job.bytes)}</td>
                {state === 'dead' && (
                  <td class="error">
                    <Shown text={job.lastError ?? ''} />
                  </td>
                )}
                <JobActions queue={queue} job={job} promote={state === 'scheduled'} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listed.more && <p class="muted">More follow; the most recent {listed.jobs.length} are shown.</p>}
    </section>
  );
}
