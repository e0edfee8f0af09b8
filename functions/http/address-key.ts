// The "address" a per-address connection share counts: an IPv4 address as it is, an
// IPv4-mapped IPv6 address as its IPv4 address, and an IPv6 address as its /64 (a single
// subscriber is commonly given a whole /64, so counting whole addresses would give one
// client 2^64 shares). Node reports addresses in canonical form; only IPv6 allocates.

/** The key connections from `address` are counted under; undefined for no address (a socket already closed). */
export function addressKey(address: string | undefined): string | undefined {
  if (address === undefined || address === '') return undefined;
  if (!address.includes(':')) return address;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  const zone = address.indexOf('%');
  const bare = zone < 0 ? address : address.slice(0, zone);
  const gap = bare.indexOf('::');
  let groups: string[];
  if (gap < 0) groups = bare.split(':');
  else {
    // "::" stands for the zero groups the rest leaves out; an embedded IPv4 tail is two groups
    const head = gap === 0 ? [] : bare.slice(0, gap).split(':');
    const tail = bare.slice(gap + 2);
    const tailGroups = tail === '' ? [] : tail.split(':');
    const zeros = Math.max(1, 8 - head.length - tailGroups.length - (tail.includes('.') ? 1 : 0));
    groups = [...head, ...Array<string>(zeros).fill('0'), ...tailGroups];
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}
