import { describe, expect, it } from 'vitest';
import { parseValkeyUrl, redactUrl } from '../shared/connections/valkey-url.js';

describe('VALKEY_URL', () => {
  it.each([
    ['redis://localhost', { host: 'localhost', port: 6379, tls: false, db: 0, cluster: false }],
    ['valkey://h:7000/3', { host: 'h', port: 7000, tls: false, db: 3, cluster: false }],
    ['rediss://u:p%40ss@h:6380', { host: 'h', port: 6380, tls: true, db: 0, cluster: false, username: 'u', password: 'p@ss' }],
    ['valkeys://:only-pass@h', { host: 'h', port: 6379, tls: true, db: 0, cluster: false, password: 'only-pass' }],
    ['redis://[::1]:7001?cluster=true', { host: '::1', port: 7001, tls: false, db: 0, cluster: true }],
  ])('%s', (url, expected) => {
    expect(parseValkeyUrl(url)).toEqual(expected);
  });

  it.each([
    ['http://h', /unsupported scheme http:/],
    ['not a url', /not a URL/],
    ['redis://h/x', /not a non-negative integer/],
    ['redis://h/1?cluster=1', /only database 0/],
  ])('refuses %s', (url, why) => {
    expect(() => parseValkeyUrl(url)).toThrow(why);
  });

  it('never repeats a password in errors or redacted text', () => {
    expect(redactUrl('redis://user:s3cret@h:1/2')).toBe('redis://user:***@h:1/2');
    expect(() => parseValkeyUrl('ftp://user:s3cret@h')).toThrow(/^(?!.*s3cret)/);
    try {
      parseValkeyUrl('ftp://user:s3cret@h');
    } catch (e) {
      expect((e as Error).message).not.toContain('s3cret');
    }
  });
});
