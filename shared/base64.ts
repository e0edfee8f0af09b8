// Base64 with web globals only (atob/btoa work on byte strings), for every runtime.
const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Whether text is standard, padded base64 (the only form read: no silent repair). */
export const isBase64 = (text: string): boolean => STRICT.test(text);

export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  // in slices: String.fromCharCode takes its bytes as arguments, and arguments are limited
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** The bytes of standard, padded base64; undefined for anything else (no silent repair). */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!isBase64(text)) return undefined;
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// ignoreBOM: true keeps a leading BOM as text; the default would drop those three bytes
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes as JSON carries a payload exactly: `payload`, its text when UTF-8, else `payloadBase64`. */
export function payloadField(bytes: Uint8Array): { payload: string } | { payloadBase64: string } {
  try {
    return { payload: strictUtf8.decode(bytes) };
  } catch {
    return { payloadBase64: toBase64(bytes) };
  }
}
