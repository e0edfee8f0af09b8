// VALKEY_URL parsing: redis://, rediss://, valkey://, valkeys://, with user, password and db.
// Runtime-agnostic (URL is a web global) so any transport can share it.
//   redis://[user:password@]host[:port][/db][?options]
//   redis://[user:password@]host1:port1,host2:port2,…[?options]   seed nodes of a cluster
// Options: cluster=true (one seed is enough to find a whole cluster); wait=<replicas> and
// wait_timeout_ms=<ms> (after each write, WAIT until that many replicas have it).

export interface Seed {
  host: string;
  port: number;
}

export interface ValkeyEndpoint extends Seed {
  /** Every node named in the URL (the first is also host/port). */
  seeds: Seed[];
  tls: boolean;
  username?: string;
  password?: string;
  db: number;
  /** `?cluster=true` (or `1`, `yes`), or several seeds: talk to a Valkey Cluster. */
  cluster: boolean;
  /** `?wait=N`: each write is acknowledged only once N replicas have it (0: not waited for). */
  waitReplicas: number;
  /** `?wait_timeout_ms=T`: how long one WAIT may block, default 1000. */
  waitTimeoutMs: number;
}

const SCHEMES: Record<string, boolean> = { 'redis:': false, 'valkey:': false, 'rediss:': true, 'valkeys:': true };
const OPTIONS = new Set(['cluster', 'wait', 'wait_timeout_ms']);

/** The URL with any password replaced, for messages and logs. */
export function redactUrl(url: string): string {
  // the userinfo runs to the LAST '@': a password may hold a raw '@' or '/' (WHATWG URL
  // parsing splits on the last '@' too), so nothing of it is shown, whatever it holds
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  const at = url.lastIndexOf('@');
  if (!scheme || at < scheme[0].length) return url;
  const userinfo = url.slice(scheme[0].length, at);
  const colon = userinfo.indexOf(':');
  return colon < 0 ? url : `${scheme[0]}${userinfo.slice(0, colon)}:***${url.slice(at)}`;
}

function seedOf(scheme: string, hostPort: string, url: string): Seed {
  let parsed: URL;
  try {
    parsed = new URL(`${scheme}//${hostPort}`);
  } catch {
    throw new TypeError(`seed "${hostPort}" in ${redactUrl(url)} is not host[:port]`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host || parsed.pathname.replace(/^\//, '') !== '') throw new TypeError(`seed "${hostPort}" in ${redactUrl(url)} is not host[:port]`);
  return { host, port: parsed.port ? Number(parsed.port) : 6379 };
}

function wholeNumber(text: string | null, name: string, fallback: number, min: number): number {
  if (text === null) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new TypeError(`${name}=${text} is not a whole number ≥ ${min}`);
  return n;
}

export function parseValkeyUrl(url: string): ValkeyEndpoint {
  // several seeds ("h1:1,h2:2") are not one URL host: parse the first, then each other one
  const authority = /^([a-z]+:)\/\/((?:[^@/?#]*@)?)([^/?#]*)(.*)$/i.exec(url);
  const hosts = authority ? authority[3]!.split(',') : [''];
  let parsed: URL;
  try {
    parsed = new URL(authority && hosts.length > 1 ? `${authority[1]}//${authority[2]}${hosts[0]}${authority[4]}` : url);
  } catch {
    throw new TypeError(`not a URL: ${redactUrl(url)}; expected redis://[user:password@]host[:port][/db]`);
  }
  const tls = SCHEMES[parsed.protocol];
  if (tls === undefined) {
    throw new TypeError(`unsupported scheme ${parsed.protocol} in ${redactUrl(url)}; use redis://, rediss://, valkey:// or valkeys://`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new TypeError(`no host in ${redactUrl(url)}`);
  const port = parsed.port ? Number(parsed.port) : 6379;
  const seeds = [{ host, port }, ...hosts.slice(1).map((h) => seedOf(parsed.protocol, h, url))];
  const dbText = parsed.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0 || !/^\d*$/.test(dbText)) {
    throw new TypeError(`database "${dbText}" in ${redactUrl(url)} is not a non-negative integer`);
  }
  for (const name of parsed.searchParams.keys()) {
    if (!OPTIONS.has(name)) throw new TypeError(`unknown option "${name}" in ${redactUrl(url)}; known: ${[...OPTIONS].join(', ')}`);
  }
  const clusterText = parsed.searchParams.get('cluster');
  const cluster = clusterText === null ? seeds.length > 1 : /^(1|true|yes)$/i.test(clusterText);
  if (!cluster && seeds.length > 1) throw new TypeError(`several seed nodes need a cluster, but ${redactUrl(url)} says cluster=${clusterText}`);
  if (cluster && db !== 0) throw new TypeError('a Valkey Cluster has only database 0');
  const waitReplicas = wholeNumber(parsed.searchParams.get('wait'), 'wait', 0, 0);
  const waitTimeoutMs = wholeNumber(parsed.searchParams.get('wait_timeout_ms'), 'wait_timeout_ms', 1_000, 1);
  const username = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  return {
    host,
    port,
    seeds,
    tls,
    db,
    cluster,
    waitReplicas,
    waitTimeoutMs,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}
