// The console's client script, served as /assets/console.js (a file of the console's own
// origin: its CSP allows no inline script). It polls the page's live JSON (data-live) every
// 2 s while the page is shown, writes the numbers into the table cells with textContent (never
// as HTML), and draws two charts as SVG: each queue's depth sampled while the queues page is
// open, and each lane's share of the claims in flight on a queue's page. It also copies a
// job's whole payload. No build step: the text below is the file.
export const SCRIPT = `'use strict';
(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const EVERY_MS = 2000;
  const KEEP = 150; // samples: 5 minutes at one per 2 s
  const body = document.body;
  const page = body.dataset.page;
  const live = body.dataset.live;
  const status = document.getElementById('live-status');

  const el = (name, attrs) => {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  };
  const setText = (node, text) => {
    if (node && node.textContent !== text) node.textContent = text;
  };
  const rowsBy = (table, key) => {
    const m = new Map();
    if (table) for (const tr of table.querySelectorAll('tbody tr')) m.set(tr.dataset[key], tr);
    return m;
  };
  const fillCounts = (tr, counts) => {
    for (const td of tr.querySelectorAll('[data-count]')) {
      const v = counts[td.dataset.count];
      if (typeof v === 'number') setText(td, String(v));
    }
  };

  // depth sparklines (queues page)
  const history = new Map();
  const spark = (cell, points) => {
    const w = 160, h = 28;
    const max = Math.max(1, ...points);
    const svg = el('svg', { width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, role: 'img', class: 'sparkline' });
    // left to right as samples come, over at least 10 slots, so a new page draws a line at once
    const step = w / (Math.max(points.length, 10) - 1);
    const xy = points.map((p, i) => (i * step).toFixed(1) + ',' + (h - 2 - (p / max) * (h - 4)).toFixed(1));
    if (xy.length === 1) xy.push(step.toFixed(1) + ',' + xy[0].split(',')[1]);
    svg.appendChild(el('polyline', { points: xy.join(' '), fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5 }));
    const title = el('title');
    title.textContent = 'depth now ' + points[points.length - 1] + ', highest ' + Math.max(...points) + ' over ' + points.length + ' samples';
    svg.appendChild(title);
    cell.replaceChildren(svg);
    cell.dataset.samples = String(points.length);
  };
  const sampleQueues = (queues) => {
    const rows = rowsBy(document.getElementById('queues'), 'queue');
    for (const q of queues) {
      const tr = rows.get(q.name);
      if (!tr) continue;
      fillCounts(tr, q.counts);
      setText(tr.querySelector('[data-field="paused"]'), q.paused ? 'paused' : 'running');
      const depth = q.counts.pending + q.counts.active + q.counts.scheduled;
      const h = history.get(q.name) || [];
      h.push(depth);
      if (h.length > KEEP) h.shift();
      history.set(q.name, h);
      const cell = tr.querySelector('[data-spark]');
      if (cell) spark(cell, h);
    }
  };

  // lanes' share of claims (a queue's page)
  const claims = new Map();
  let samples = 0;
  const drawShare = () => {
    const box = document.querySelector('[data-chart="share"]');
    if (!box) return;
    const total = [...claims.values()].reduce((a, b) => a + b, 0);
    const lanes = [...claims.entries()].filter((e) => e[1] > 0).sort((a, b) => b[1] - a[1]).slice(0, 20);
    if (total === 0) {
      box.textContent = 'No claims in flight in ' + samples + ' sample' + (samples === 1 ? '' : 's') + ' so far.';
      return;
    }
    const bar = 18, w = 480, label = 150;
    const svg = el('svg', { width: w, height: lanes.length * (bar + 4), role: 'img', class: 'share' });
    lanes.forEach(([group, n], i) => {
      const share = n / total;
      const y = i * (bar + 4);
      const name = el('text', { x: 0, y: y + bar - 5, class: 'label' });
      name.textContent = group.length > 20 ? group.slice(0, 19) + '\\u2026' : group;
      svg.appendChild(name);
      svg.appendChild(el('rect', { x: label, y, width: Math.max(1, share * (w - label - 60)), height: bar, class: 'bar' }));
      const pct = el('text', { x: label + share * (w - label - 60) + 4, y: y + bar - 5, class: 'label' });
      pct.textContent = (share * 100).toFixed(1) + '%';
      svg.appendChild(pct);
    });
    box.replaceChildren(svg);
    box.dataset.samples = String(samples);
  };
  const sampleLanes = (lanes) => {
    samples++;
    for (const l of lanes) claims.set(l.group, (claims.get(l.group) || 0) + l.active);
    drawShare();
  };
  const sampleQueue = (q) => {
    const counts = document.querySelector('#counts tbody tr');
    if (counts) fillCounts(counts, q.counts);
    const rows = rowsBy(document.getElementById('lanes'), 'group');
    for (const l of q.lanes) {
      const tr = rows.get(l.group);
      if (tr) fillCounts(tr, l);
    }
    sampleLanes(q.lanes);
  };

  // the first samples come from the page itself, so a chart shows at once
  if (page === 'queues') {
    for (const tr of document.querySelectorAll('#queues tbody tr')) {
      const n = (k) => Number(tr.querySelector('[data-count="' + k + '"]').textContent);
      history.set(tr.dataset.queue, [n('pending') + n('active') + n('scheduled')]);
      spark(tr.querySelector('[data-spark]'), history.get(tr.dataset.queue));
    }
  }
  if (page === 'queue') {
    sampleLanes([...document.querySelectorAll('#lanes tbody tr')].map((tr) => ({ group: tr.dataset.group, active: Number(tr.dataset.active) })));
  }

  let busy = false;
  const poll = async () => {
    if (!live || busy || document.hidden) return;
    busy = true;
    try {
      const res = await fetch(live, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      const data = await res.json();
      if (!res.ok) throw new Error(String(res.status) + ' ' + (data.code || ''));
      if (page === 'queues') sampleQueues(data.queues);
      if (page === 'queue') sampleQueue(data);
      setText(status, 'updated ' + new Date(data.at).toISOString().slice(11, 19) + 'Z');
      if (status) status.dataset.updates = String(Number(status.dataset.updates || 0) + 1);
    } catch (err) {
      setText(status, 'refresh failed: ' + err.message);
    } finally {
      busy = false;
    }
  };
  if (live) setInterval(poll, EVERY_MS);

  // Copy whole payload
  for (const button of document.querySelectorAll('button[data-copy-url]')) {
    button.addEventListener('click', async () => {
      const out = button.parentElement.querySelector('output.copied');
      try {
        const res = await fetch(button.dataset.copyUrl, { credentials: 'same-origin' });
        if (!res.ok) throw new Error(String(res.status));
        const bytes = new Uint8Array(await res.arrayBuffer());
        const text = button.dataset.copyAs === 'base64' ? btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join('')) : new TextDecoder().decode(bytes);
        await navigator.clipboard.writeText(text);
        setText(out, 'copied ' + bytes.length + ' bytes');
      } catch (err) {
        setText(out, 'copy failed: ' + err.message);
      }
    });
  }
})();
`;
