// A queue's lanes, one row per group (pending-only groups too: the producer's GET /v1/queues/{q}
// lists every group with a lane, a limit, a weight, an active count or a pause), each with its
// forms: set the limit or weight, pause or resume. Beside it, each lane's share of the claims
// in flight, drawn by the page's script from the rows' numbers as it samples them.
import type { GroupView } from '../../../client/index.js';
import { Shown, seg } from '../show.js';

function LaneRow({ queue, lane }: { queue: string; lane: GroupView }) {
  const action = `/q/${seg(queue)}/lanes/${seg(lane.group)}`;
  return (
    <tr data-group={lane.group} data-pending={String(lane.pending)} data-active={String(lane.active)}>
      <td class="name">
        <a href={`/q/${seg(queue)}?group=${seg(lane.group)}#pending-heading`} title="list this lane's pending jobs">
          <Shown text={lane.group} />
        </a>
      </td>
      <td class="num" data-count="pending">
        {String(lane.pending)}
      </td>
      <td class="num" data-count="active">
        {String(lane.active)}
      </td>
      <td class="num" data-field="limit">
        {lane.limit === undefined ? '-' : String(lane.limit)}
      </td>
      <td class="num" data-field="weight">
        {lane.weight === undefined ? '-' : String(lane.weight)}
      </td>
      <td data-field="paused">{lane.paused ? 'paused' : 'running'}</td>
      <td data-field="ringed">{lane.ringed ? 'on the ring' : 'off'}</td>
      <td>
        <form method="post" action={action} class="inline lane-set">
          <input type="number" name="limit" min="1" step="1" placeholder="limit" aria-label="limit" />
          <input type="number" name="weight" min="1" step="1" placeholder="weight" aria-label="weight" />
          <button type="submit" name="action" value="set">
            Set
          </button>
        </form>{' '}
        <form method="post" action={action} class="inline">
          <button type="submit" name="action" value={lane.paused ? 'resume' : 'pause'}>
            {lane.paused ? 'Resume lane' : 'Pause lane'}
          </button>
        </form>
      </td>
    </tr>
  );
}

export function Lanes({ queue, lanes, cut }: { queue: string; lanes: GroupView[]; cut: boolean }) {
  return (
    <section>
      <h2>Lanes</h2>
      {lanes.length === 0 ? (
        <p class="muted">No lanes: this queue's jobs are all flat.</p>
      ) : (
        <>
          {cut && <p class="muted">Only the first {lanes.length} lanes are shown.</p>}
          <table id="lanes">
            <thead>
              <tr>
                <th>group</th>
                <th class="num">pending</th>
                <th class="num">active</th>
                <th class="num">limit</th>
                <th class="num">weight</th>
                <th>paused</th>
                <th>ring</th>
                <th>actions</th>
              </tr>
            </thead>
            <tbody>
              {lanes.map((lane) => (
                <LaneRow queue={queue} lane={lane} />
              ))}
            </tbody>
          </table>
          <figure id="share">
            <figcaption>Each lane's share of the claims in flight (active), summed over the samples taken while this page is open</figcaption>
            <div class="chart" data-chart="share" />
          </figure>
        </>
      )}
    </section>
  );
}
