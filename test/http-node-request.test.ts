// functions/http/node-request.ts: a node:http request read as the Fetch API reads one. targetOf
// gives the URL and path a Request would have (dot segments resolved, the path percent-decoded)
// or undefined for a target or Host that makes no URL (400); authorizationOf and headerOf join
// every occurrence of a header with ', ', where node:http keeps only the first of some.
import { createServer, IncomingMessage, type Server } from 'node:http';
import { connect, Socket, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { authorizationOf, headerOf, targetOf } from '../functions/http/node-request.js';

/** A real IncomingMessage with the target and Host a client sent. */
function request(target: string, host?: string): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.url = target;
  req.headers = host === undefined ? {} : { host };
  return req;
}

describe('targetOf', () => {
  it.each([
    ['/v1/queues/a/jobs', 'localhost:8080', 'http://localhost:8080/v1/queues/a/jobs', '/v1/queues/a/jobs'],
    ['/healthz', undefined, 'http://localhost/healthz', '/healthz'],
    ['/a/../b', 'h', 'http://h/b', '/b'],
    ['/a/./b', 'h', 'http://h/a/b', '/a/b'],
    ['/a/%2e%2e/b', 'h', 'http://h/b', '/b'],
    ['/a%20b?x=%20', 'h', 'http://h/a%20b?x=%20', '/a b'],
    ['/a b', 'h', 'http://h/a%20b', '/a b'],
    ['/\u00fc', 'h', 'http://h/%C3%BC', '/\u00fc'],
    ['/a?x=\\', 'h', 'http://h/a?x=\\', '/a'],
    ['/x', 'Example.COM', 'http://example.com/x', '/x'],
    ['/x', 'localhost:80', 'http://localhost/x', '/x'],
    ['/x', '[::1]:8080', 'http://[::1]:8080/x', '/x'],
    ['http://Example.com/x?y', 'h', 'http://example.com/x?y', '/x'],
  ])('reads %j with Host %j as %s (path %s)', (target, host, url, path) => {
    expect(targetOf(request(target, host))).toEqual({ url, path });
    expect(new Request(url).url).toBe(url); // the URL a Request would have
  });

  // VALID_TARGET once let an apostrophe through unparsed, but a special URL's query
  // percent-encodes it (WHATWG: the special-query set): http://h/a?x=' where a Request has %27
  it('reads an apostrophe in the query as a Request would, percent-encoded', () => {
    expect(targetOf(request("/a?x='", 'h'))?.url).toBe(new Request("http://h/a?x='").url);
  });

  it.each([
    ['a backslash in the path', '/a\\b', 'h'],
    ['an absolute target with a backslash', 'http://h\\evil/x', 'h'],
    ['another scheme', 'ftp://x/', 'h'],
    ['asterisk-form', '*', 'h'],
    ['authority-form', 'example.com:443', 'h'],
    ['an empty target', '', 'h'],
    ['a Host with credentials', '/x', 'evil.com@good'],
    ['a Host with a space', '/x', 'a b'],
    ['a Host with two ports', '/x', 'h:8080:1'],
    ['a port out of range', '/x', 'localhost:99999'],
  ])('refuses %s', (_, target, host) => {
    expect(targetOf(request(target, host))).toBeUndefined();
  });
});

describe('authorizationOf and headerOf', () => {
  let server: Server;
  afterAll(() => server?.close());

  it('join every occurrence with ", " as Fetch does, where node:http keeps only the first', async () => {
    let seen: Record<string, string | undefined> = {};
    server = createServer((req, res) => {
      seen = {
        authorization: authorizationOf(req),
        nodeAuthorization: req.headers.authorization,
        contentType: headerOf(req, 'Content-Type'),
        custom: headerOf(req, 'x-custom'),
        single: headerOf(req, 'X-SINGLE'),
        absent: headerOf(req, 'x-absent'),
      };
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const sock = connect(port, '127.0.0.1').resume();
    sock.write(
      'GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\nContent-Type: text/plain\r\nCONTENT-TYPE: application/json\r\n' +
        'X-Custom: 1\r\nx-custom: 2\r\nX-Single: one\r\nConnection: close\r\n\r\n',
    );
    await new Promise((r) => sock.once('close', r));
    expect(seen).toEqual({
      authorization: 'Bearer a, Bearer b',
      nodeAuthorization: 'Bearer a',
      contentType: 'text/plain, application/json',
      custom: '1, 2',
      single: 'one',
      absent: undefined,
    });
  });

  it('read no Authorization as undefined', () => {
    expect(authorizationOf(request('/x', 'h'))).toBeUndefined();
  });
});
