// The console's style sheet, served as /assets/console.css (its CSP allows no inline style).
export const STYLE = `:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; --accent: #2563eb; --bad: #b91c1c; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 600; text-decoration: none; color: inherit; }
nav a { margin-right: .8rem; }
main { padding: 1rem 1.2rem 3rem; max-width: 1200px; }
h1 { font-size: 1.4rem; margin: .2rem 0 .8rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .5rem; }
table { border-collapse: collapse; margin: .3rem 0; }
th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { max-width: 28rem; overflow-wrap: anywhere; }
td.error, dd.error { color: var(--bad); max-width: 36rem; overflow-wrap: anywhere; white-space: pre-wrap; }
.muted { color: var(--muted); }
.esc { font-family: ui-monospace, monospace; font-size: .85em; padding: 0 .15em; border: 1px solid var(--bad); border-radius: 3px; color: var(--bad); }
.notice { padding: .4rem .7rem; border-left: 4px solid var(--accent); background: color-mix(in srgb, var(--accent) 10%, transparent); }
.refused { padding: .4rem .7rem; border-left: 4px solid var(--bad); background: color-mix(in srgb, var(--bad) 10%, transparent); margin: .5rem 0; overflow-wrap: anywhere; }
.badge { padding: .1rem .5rem; border-radius: 1rem; border: 1px solid var(--line); }
.badge.paused { border-color: var(--bad); color: var(--bad); }
form.inline { display: inline; }
form.stack { display: grid; gap: .5rem; max-width: 36rem; }
form.stack label { display: grid; gap: .2rem; }
input[type="number"] { width: 6rem; }
button { cursor: pointer; }
button.danger { color: var(--bad); }
pre.payload { padding: .6rem; border: 1px solid var(--line); max-height: 28rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.hex { white-space: pre; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
td.spark { width: 170px; color: var(--accent); }
svg.share .bar { fill: var(--accent); }
svg.share .label { font-size: 12px; fill: currentColor; }
`;
