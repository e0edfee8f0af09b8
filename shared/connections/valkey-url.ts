// VALKEY_URL parsing: redis://, rediss://, valkey://, valkeys://, with user, password and db.
// Runtime-agnostic (URL is a web global) so any transport can share it.

export interface ValkeyEndpoint {
  host: string;
  port: number;
  tls: boolean;
  username?: string;
  password?: string;
  db: number;
  /** `?cluster=true` (or `1`, `yes`): talk to a Valkey Cluster through this seed node. */
  cluster: boolean;
}

const SCHEMES: Record<string, boolean> = { 'redis:': false, 'valkey:': false, 'rediss:': true, 'valkeys:': true };

/** The URL with any password replaced, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

export function parseValkeyUrl(url: string): ValkeyEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
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
  const dbText = parsed.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0 || !/^\d*$/.test(dbText)) {
    throw new TypeError(`database "${dbText}" in ${redactUrl(url)} is not a non-negative integer`);
  }
  const cluster = /^(1|true|yes)$/i.test(parsed.searchParams.get('cluster') ?? '');
  if (cluster && db !== 0) throw new TypeError('a Valkey Cluster has only database 0');
  const username = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  return {
    host,
    port,
    tls,
    db,
    cluster,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}
