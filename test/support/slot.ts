// A key's cluster slot, computed here (CRC16/XMODEM of its hash tag, mod 16384) so a test
// can pick a queue name that lands on a chosen slot without asking the server each time.
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const tag = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of new TextEncoder().encode(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** A queue name (prefix + a counter) whose keys land on `slot`. */
export function queueOnSlot(prefix: string, slot: number): string {
  for (let n = 0; ; n++) if (slotOf(`${prefix}-${n}`) === slot) return `${prefix}-${n}`;
}
