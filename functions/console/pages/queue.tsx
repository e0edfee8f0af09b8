// A queue: its counts, paused or not (with the button that flips it), its lanes and their
// share of claims, the schedule, recent pending and dead jobs, its repeatables and crons.
// Each section is its own read: one the producer refuses shows the refusal, the rest still show.
import type { CronInfo, GroupView, QueueView, ScheduleInfo } from '../../../client/index.js';
import { Page, Refusal } from '../layout.js';
import type { JobRow } from '../reads.js';
import { Shown, When, relative, seg } from '../show.js';
import { JobList } from './job-lists.js';
import { Lanes } from './lanes.js';
import { COUNTS } from './queues.js';

type Or<T> = T | { refused: unknown };
const refused = (x: object): x is { refused: unknown } => 'refused' in x;

export interface QueueData {
  queue: string;
  /** The lane whose pending jobs are listed (?group=); none: the flat pending set. */
  lane: string | undefined;
  head: Or<{ view: QueueView; lanes: GroupView[]; cut: boolean }>;
  scheduled: Or<{ jobs: JobRow[]; more: boolean }>;
  pending: Or<{ jobs: JobRow[]; more: boolean }>;
  dead: Or<{ jobs: JobRow[]; more: boolean }>;
  repeatables: Or<{ schedules: ScheduleInfo[] }>;
  crons: Or<CronInfo[]>;
}

function Head({ queue, view }: { queue: string; view: QueueView }) {
  return (
    <section>
      <p>
        <span data-field="paused" class={view.paused ? 'badge paused' : 'badge'}>
          {view.paused ? 'paused: claims stop, admission goes on' : 'running'}
        </span>{' '}
        <form method="post" action={`/q/${seg(queue)}/${view.paused ? 'resume' : 'pause'}`} class="inline">
          <button type="submit" id="queue-toggle">
            {view.paused ? 'Resume queue' : 'Pause queue'}
          </button>
        </form>
      </p>
      <p class="muted">pending counts the flat pending set; each lane's waiting jobs are in its row below.</p>
      <table id="counts" data-queue={queue}>
        <thead>
          <tr>
            {COUNTS.map((k) => (
              <th class="num">{k}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            {COUNTS.map((k) => (
              <td class="num" data-count={k}>
                {String(view.counts[k])}
              </td>
            ))}
          </tr>
        </tbody>
      </table>
    </section>
  );
}

function Repeatables({ listed }: { listed: QueueData['repeatables'] }) {
  if (refused(listed)) return <Refusal err={listed.refused} what="Listing repeatables" />;
  if (listed.schedules.length === 0) return <p class="muted">No repeatables.</p>;
  return (
    <table id="repeatables">
      <thead>
        <tr>
          <th>name</th>
          <th>every</th>
          <th>next run</th>
          <th>paused</th>
        </tr>
      </thead>
      <tbody>
        {listed.schedules.map((s) => (
          <tr>
            <td class="name">
              <Shown text={s.name} />
            </td>
            <td>{relative(s.everyMs).replace(/^in /, '')}</td>
            <td>
              <When ms={s.nextRunAt} />
            </td>
            <td>{s.paused ? 'paused' : 'no'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Crons({ queue, listed }: { queue: string; listed: QueueData['crons'] }) {
  if (refused(listed)) return <Refusal err={listed.refused} what="Listing cron schedules" />;
  const mine = listed.filter((c) => c.queue === queue);
  if (mine.length === 0) return <p class="muted">No cron schedules fire into this queue.</p>;
  return (
    <table id="crons">
      <thead>
        <tr>
          <th>name</th>
          <th>cron (UTC)</th>
          <th>next fire</th>
          <th>group</th>
          <th>delay</th>
        </tr>
      </thead>
      <tbody>
        {mine.map((c) => (
          <tr>
            <td class="name">
              <Shown text={c.name} />
            </td>
            <td>
              <code>
                <Shown text={c.cron} />
              </code>
            </td>
            <td>
              <When ms={c.nextFireAt} />
            </td>
            <td>{c.group === undefined ? '-' : <Shown text={c.group} />}</td>
            <td>{c.delay === undefined ? '-' : <Shown text={c.delay} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function QueuePage({ data, done }: { data: QueueData; done?: string | undefined }) {
  const { queue, head } = data;
  return (
    <Page title={queue} page="queue" signedIn live={`/q/${seg(queue)}/live.json`} done={done}>
      <h1>
        Queue <Shown text={queue} />
      </h1>
      <p class="muted">
        Refreshed every 2 s while this page is open. <output id="live-status" />
      </p>
      {refused(head) ? (
        <Refusal err={head.refused} what="Reading the queue" />
      ) : (
        <>
          <Head queue={queue} view={head.view} />
          <Lanes queue={queue} lanes={head.lanes} cut={head.cut} />
        </>
      )}
      <JobList queue={queue} state="scheduled" title="Schedule, soonest first" listed={data.scheduled} />
      <JobList
        queue={queue}
        state="pending"
        title={data.lane === undefined ? 'Pending jobs (flat), newest first' : 'Pending jobs in lane '}
        lane={data.lane}
        listed={data.pending}
      />
      <JobList queue={queue} state="dead" title="Dead jobs" listed={data.dead} />
      <section>
        <h2>Repeatables</h2>
        <Repeatables listed={data.repeatables} />
      </section>
      <section>
        <h2>Cron schedules</h2>
        <Crons queue={queue} listed={data.crons} />
      </section>
    </Page>
  );
}
