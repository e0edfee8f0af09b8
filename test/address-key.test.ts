// The address a per-address connection share counts (functions/http/address-key.ts): IPv4 as
// it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64, in whichever form it is written.
import { describe, expect, it } from 'vitest';
import { addressKey } from '../functions/http/address-key.js';

describe('addressKey', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::7', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:0002::', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8::1:0:0:1', '2001:db8:0:0::/64'],
    ['2001:db8:1::1:0:0:1', '2001:db8:1:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::1.2.3.4', '64:ff9b:0:0::/64'],
  ])('%s counts as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('a socket with no address (already closed) has no key', () => {
    expect(addressKey(undefined)).toBeUndefined();
    expect(addressKey('')).toBeUndefined();
  });
});
