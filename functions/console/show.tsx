// Text from outside (queue and source names, errors, payloads) shown inert: Hono's JSX escapes
// every string it renders, and here the characters a reader cannot see or that reorder what
// they see (C0/C1 controls, bidi overrides and isolates, zero-width and other invisible
// format characters, lone surrogates) are shown as \uXXXX escapes, marked, never as themselves.
import type { Child } from 'hono/jsx';

// C0 and C1 controls, soft hyphen, ALM, Mongolian vowel separator, zero-width and bidi marks,
// line/paragraph separators, bidi embeddings, overrides and isolates, word joiner and kin, BOM,
// interlinear annotation, lone surrogates
const HIDDEN =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** In multi-line text, line feeds and tabs are shown as themselves. */
const HIDDEN_BUT_LINES = new RegExp(HIDDEN.source.replace('\\u0000-\\u001f', '\\u0000-\\u0008\\u000b-\\u001f'), 'g');

export const escapeOf = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** The text with every hidden character as a visible escape (plain text: for titles and attributes). */
export function visible(text: string, multiline = false): string {
  return text.replace(multiline ? HIDDEN_BUT_LINES : HIDDEN, escapeOf);
}

/** The text as JSX children: hidden characters as marked escapes. */
export function Shown({ text, multiline = false }: { text: string; multiline?: boolean }) {
  const re = multiline ? HIDDEN_BUT_LINES : HIDDEN;
  const parts: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(
      <span class="esc" title="a hidden or control character, shown escaped">
        {escapeOf(m[0])}
      </span>,
    );
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return <>{parts}</>;
}

/** Unix ms as an ISO time, and how far from now. */
export function When({ ms, now = Date.now() }: { ms: number | null | undefined; now?: number }) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return <span class="muted">-</span>;
  const iso = new Date(ms).toISOString();
  return (
    <time datetime={iso} title={iso}>
      {iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')} <span class="muted">({relative(ms - now)})</span>
    </time>
  );
}

/** A signed span of ms in words: "in 5 min", "3 s ago". */
export function relative(ms: number): string {
  const abs = Math.abs(ms);
  const [n, unit] =
    abs < 1_000
      ? [abs, 'ms']
      : abs < 120_000
        ? [abs / 1_000, 's']
        : abs < 7_200_000
          ? [abs / 60_000, 'min']
          : abs < 172_800_000
            ? [abs / 3_600_000, 'h']
            : [abs / 86_400_000, 'd'];
  const text = `${Math.round(n)} ${unit}`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** A path segment for a console link: the name percent-encoded whatever it holds. */
export const seg = (name: string) => encodeURIComponent(name);
