// A job's payload on its page: text (escaped, hidden characters as escapes) or, when the
// producer answers it as base64 (not UTF-8), a hex dump; either cut at a fixed size, with
// the whole of it a click away (copied by the page's script, or downloaded).
import { fromBase64 } from '../../shared/base64.js';
import { Shown } from './show.js';

/** Characters of text shown; the rest is copied or downloaded. */
export const TEXT_SHOWN = 4_096;
/** Bytes of a binary payload shown as hex. */
export const BYTES_SHOWN = 512;

const hex2 = (b: number) => b.toString(16).padStart(2, '0');

/** Rows of 16 bytes: offset, hex, and the printable ASCII (others as '.'). */
export function hexDump(bytes: Uint8Array): string {
  const rows: string[] = [];
  for (let at = 0; at < bytes.length; at += 16) {
    const row = bytes.subarray(at, at + 16);
    const hex = [...row].map(hex2).join(' ').padEnd(47, ' ');
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    rows.push(`${at.toString(16).padStart(8, '0')}  ${hex}  ${ascii}`);
  }
  return rows.join('\n');
}

export function Payload({ payload, payloadBase64, copyUrl }: { payload?: string | undefined; payloadBase64?: string | undefined; copyUrl: string }) {
  const actions = (
    <p class="actions">
      <button type="button" class="copy" data-copy-url={copyUrl} data-copy-as={payload === undefined ? 'base64' : 'text'}>
        Copy whole payload{payload === undefined ? ' (as base64)' : ''}
      </button>{' '}
      <a href={copyUrl} download>
        Download
      </a>{' '}
      <output class="copied" />
    </p>
  );
  if (payload !== undefined) {
    const chars = [...payload];
    const cut = chars.length > TEXT_SHOWN;
    return (
      <section>
        <h2>Payload</h2>
        <p class="muted">
          text, {new TextEncoder().encode(payload).length} bytes{cut ? `; the first ${TEXT_SHOWN} characters of ${chars.length} are shown` : ''}
        </p>
        <pre id="payload" class="payload">
          <Shown text={cut ? chars.slice(0, TEXT_SHOWN).join('') : payload} multiline />
        </pre>
        {actions}
      </section>
    );
  }
  const bytes = payloadBase64 === undefined ? undefined : fromBase64(payloadBase64);
  if (!bytes) return <p class="muted">No payload was answered.</p>;
  const cut = bytes.length > BYTES_SHOWN;
  return (
    <section>
      <h2>Payload</h2>
      <p class="muted">
        binary (not UTF-8), {bytes.length} bytes{cut ? `; the first ${BYTES_SHOWN} are shown` : ''}, as hex
      </p>
      <pre id="payload" class="payload hex">
        {hexDump(cut ? bytes.subarray(0, BYTES_SHOWN) : bytes)}
      </pre>
      {actions}
    </section>
  );
}
