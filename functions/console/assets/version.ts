// The assets' version in their URLs (?v=): a hash of their text, so a new build is fetched
// past the browser's cache while an unchanged one is kept for an hour.
import { SCRIPT } from './script.js';
import { STYLE } from './style.js';

/** FNV-1a over the text, in base 36: a cache key, not a security measure. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

export const ASSET_VERSION = fnv(SCRIPT + STYLE);
