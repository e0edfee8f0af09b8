// Every queue: its counts and whether it is paused, refreshed live by the page's script
// (GET /queues.json), with a chart of its depth (pending + scheduled + active) sampled while
// the page is open.
import { Page, Refusal } from '../layout.js';
import type { QueueRow } from '../reads.js';
import { QUEUES_MAX } from '../reads.js';
import { Shown, seg } from '../show.js';

export const COUNTS = ['pending', 'active', 'scheduled', 'dead', 'completed', 'failed'] as const;

export function QueuesPage({ queues, cut, refused, done }: { queues: QueueRow[]; cut: boolean; refused?: unknown; done?: string | undefined }) {
  return (
    <Page title="Queues" page="queues" signedIn live="/queues.json" done={done}>
      <h1>Queues</h1>
      {refused !== undefined && <Refusal err={refused} what="Listing the queues" />}
      {cut && <p class="muted">Only the first {QUEUES_MAX} queues are shown.</p>}
      <p class="muted">
        {queues.length} queue{queues.length === 1 ? '' : 's'}; refreshed every 2 s while this page is open. <output id="live-status" />
      </p>
      <table id="queues">
        <thead>
          <tr>
            <th>queue</th>
            <th>state</th>
            {COUNTS.map((k) => (
              <th class="num">{k}</th>
            ))}
            <th>depth, sampled while open</th>
          </tr>
        </thead>
        <tbody>
          {queues.map((q) => (
            <tr data-queue={q.name}>
              <td class="name">
                <a href={`/q/${seg(q.name)}`}>
                  <Shown text={q.name} />
                </a>
              </td>
              <td data-field="paused">{q.paused ? 'paused' : 'running'}</td>
              {COUNTS.map((k) => (
                <td class="num" data-count={k}>
                  {String(q.counts[k])}
                </td>
              ))}
              <td class="spark" data-spark="" />
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
