import { describe, expect, it } from 'vitest';
import { parseValkeyUrl, redactUrl } from '../shared/connections/valkey-url.js';

describe('VALKEY_URL', () => {
  it.each([
    ['redis://localhost', { host: 'localhost', port: 6379, tls: false, db: 0, cluster: false }],
    ['valkey://h:7000/3', { host: 'h', port: 7000, tls: false, db: 3, cluster: false }],
    ['rediss://u:p%40ss@h:6380', { host: 'h', port: 6380, tls: true, db: 0, cluster: false, username: 'u', password: 'p@ss' }],
    ['valkeys://:only-pass@h', { host: 'h', port: 6379, tls: true, db: 0, cluster: false, password: 'only-pass' }],
    ['redis://[::1]:7001?cluster=true', { host: '::1', port: 7001, tls: false, db: 0, cluster: true }],
    ['redis://h?wait=2&wait_timeout_ms=50', { host: 'h', port: 6379, tls: false, db: 0, cluster: false, waitReplicas: 2, waitTimeoutMs: 50 }],
  ])('%s', (url, expected) => {
    const { seeds, waitReplicas, waitTimeoutMs, ...rest } = parseValkeyUrl(url);
    const { waitReplicas: wr = 0, waitTimeoutMs: wt = 1000, ...want } = expected as typeof expected & { waitReplicas?: number; waitTimeoutMs?: number };
    expect(rest).toEqual(want);
    expect(seeds).toEqual([{ host: want.host, port: want.port }]);
    expect({ waitReplicas, waitTimeoutMs }).toEqual({ waitReplicas: wr, waitTimeoutMs: wt });
  });

  it('a list of seed nodes is a cluster, with the credentials of the URL', () => {
    const e = parseValkeyUrl('rediss://u:pw@a:7000,b,[::1]:7002/?wait=1');
    expect(e.seeds).toEqual([
      { host: 'a', port: 7000 },
      { host: 'b', port: 6379 },
      { host: '::1', port: 7002 },
    ]);
    expect(e).toMatchObject({ host: 'a', port: 7000, cluster: true, tls: true, username: 'u', password: 'pw', waitReplicas: 1 });
  });

  it.each([
    ['http://h', /unsupported scheme http:/],
    ['not a url', /not a URL/],
    ['redis://h/x', /not a non-negative integer/],
    ['redis://h/1?cluster=1', /only database 0/],
    ['redis://a:1,b:2/3', /only database 0/],
    ['redis://a:1,b:2?cluster=false', /several seed nodes need a cluster/],
    ['redis://a:1,b:x', /seed "b:x" .* is not host\[:port\]/],
    ['redis://a:1,', /seed "" /],
    ['redis://h?wait=-1', /wait=-1 is not a whole number/],
    ['redis://h?wait_timeout_ms=0', /wait_timeout_ms=0 is not a whole number ≥ 1/],
    ['redis://h?clutser=true', /unknown option "clutser"/],
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

  it.each([
    ['redis://emq:Tr0ub4dor@horse-battery@127.0.0.1:6379', 'redis://emq:***@127.0.0.1:6379', ['Tr0ub4dor', 'horse-battery']],
    ['redis://emq:pa/ss@w:rd@h:1/2', 'redis://emq:***@h:1/2', ['pa/ss', 'w:rd', 'ss@']],
    ['rediss://:only@h', 'rediss://:***@h', ['only']],
    ['valkey://u:p%2Fx@h', 'valkey://u:***@h', ['p%2Fx']],
    ['redis://h:6379', 'redis://h:6379', []],
    ['redis://user@h', 'redis://user@h', []],
  ])('finding 9 (security review): %s is redacted whatever its password holds', (url, shown, hidden) => {
    expect(redactUrl(url)).toBe(shown);
    for (const h of hidden as string[]) expect(redactUrl(url)).not.toContain(h);
  });

  it('a password with a raw @ parses as the whole password', () => {
    expect(parseValkeyUrl('redis://emq:Tr0ub4dor@horse-battery@127.0.0.1:6379')).toMatchObject({
      username: 'emq',
      password: 'Tr0ub4dor@horse-battery',
      host: '127.0.0.1',
    });
  });
});
