// The chart of a run: one bar per row with a figure, ops/s on a linear scale, coloured by what
// the row measures, the ceiling as a dashed line. Plain SVG, no dependency.
import type { Group, Row } from './report.js';

const TITLE = 'EchoMQ enqueue: ops/s per row, one run, one Valkey';

/** Each group's colour and legend, in the legend's order. */
const LEGEND: Array<[Group, string, string]> = [
  ['server', '#374151', 'server alone'],
  ['glide', '#2563eb', 'glide'],
  ['cluster', '#7c3aed', 'glide, cluster'],
  ['rest', '#0891b2', 'REST'],
  ['http', '#059669', 'HTTP'],
  ['floor', '#cbd5e1', 'no-op floors'],
  ['peer', '#d97706', 'peers: BullMQ, webdis'],
];
const COLOURS = Object.fromEntries(LEGEND.map(([group, colour]) => [group, colour])) as Record<Group, string>;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A round step for the axis: 1, 2 or 5 times a power of ten, about `ticks` of them to `max`. */
function step(max: number, ticks: number): number {
  const raw = max / ticks;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
}

export function chart(rows: readonly Row[], subtitle: string, ceilingKey: string): string {
  const bars = rows.filter((r) => r.opsPerSec !== undefined && !r.failed);
  const [labelW, plotW, valueW, barH, gap, top] = [280, 560, 90, 18, 6, 78];
  const width = labelW + plotW + valueW + 20;
  const height = top + bars.length * (barH + gap) + 56;
  const max = Math.max(1, ...bars.map((r) => r.opsPerSec!));
  const s = step(max, 5);
  const axisMax = Math.ceil(max / s) * s;
  const x = (v: number) => labelW + (v / axisMax) * plotW;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold" fill="#111827">${esc(TITLE)}</text>`,
    `<text x="10" y="40" fill="#4b5563">${esc(subtitle)}</text>`,
  ];
  const plotBottom = top + bars.length * (barH + gap);
  for (let v = 0; v <= axisMax; v += s) {
    out.push(
      `<line x1="${x(v).toFixed(1)}" y1="${top - 6}" x2="${x(v).toFixed(1)}" y2="${plotBottom}" stroke="#e5e7eb"/>`,
      `<text x="${x(v).toFixed(1)}" y="${plotBottom + 14}" text-anchor="middle" fill="#6b7280">${v >= 1000 ? `${v / 1000}k` : v}</text>`,
    );
  }
  out.push(
    `<text x="${labelW + plotW / 2}" y="${plotBottom + 30}" text-anchor="middle" fill="#6b7280">ops/s (jobs enqueued, or requests answered, per second)</text>`,
  );
  bars.forEach((r, i) => {
    const y = top + i * (barH + gap);
    const w = Math.max(1, x(r.opsPerSec!) - labelW);
    const name = `#${r.n} ${r.short}${r.problems.length ? ' (not trusted)' : ''}`;
    out.push(
      `<text x="${labelW - 8}" y="${y + barH - 5}" text-anchor="end" fill="#111827">${esc(name.length > 44 ? `${name.slice(0, 43)}…` : name)}</text>`,
      `<rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${COLOURS[r.group]}"${r.problems.length ? ' fill-opacity="0.45"' : ''}><title>${esc(`#${r.n} ${r.name}`)}</title></rect>`,
      `<text x="${(labelW + w + 6).toFixed(1)}" y="${y + barH - 5}" fill="#111827">${Math.round(r.opsPerSec!).toLocaleString('en-US')}</text>`,
    );
  });
  const ceiling = bars.find((r) => r.key === ceilingKey);
  if (ceiling) {
    const cx = x(ceiling.opsPerSec!).toFixed(1);
    out.push(`<line x1="${cx}" y1="${top - 6}" x2="${cx}" y2="${plotBottom}" stroke="#111827" stroke-dasharray="4 3"/>`);
  }
  let lx = labelW;
  for (const [group, colour, text] of LEGEND) {
    if (!bars.some((r) => r.group === group)) continue;
    out.push(
      `<rect x="${lx}" y="${top - 20}" width="10" height="10" fill="${colour}"/>`,
      `<text x="${lx + 14}" y="${top - 11}" fill="#374151">${esc(text)}</text>`,
    );
    lx += 24 + text.length * 6.5;
  }
  if (ceiling) out.push(`<text x="${lx}" y="${top - 11}" fill="#374151">- - - ceiling (#${ceiling.n})</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
