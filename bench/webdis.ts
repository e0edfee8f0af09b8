// webdis, the HTTP peer of the gateway: the distribution's package (installed when missing,
// like Valkey) in front of the bench's Valkey, with the package's own settings (2 threads),
// EVALSHA only, behind HTTP Basic auth, in the foreground, logging errors only to a file.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTool } from '../scripts/valkey.js';
import type { ValkeyEndpoint } from '../shared/connections/valkey-url.js';
import { type Child, onFreePort, outputOf, spawnServing } from './procs.js';

export interface Webdis extends Child {
  /** The Authorization: Basic credentials. */
  basic: string;
  about: string;
}

export async function startWebdis({ host, port: redisPort, db, password }: ValkeyEndpoint, scratch: string): Promise<Webdis> {
  const binary = ensureTool('webdis');
  if (!binary) throw new Error('no webdis, and it cannot be installed here (Debian and Ubuntu have it: apt-get install webdis)');
  if (password !== undefined) throw new Error('the webdis row needs a Valkey without a password');
  const dir = join(scratch, 'webdis');
  mkdirSync(dir, { recursive: true });
  const secret = randomBytes(16).toString('hex');
  const acl = [{ disabled: ['*'] }, { http_basic_auth: `emq:${secret}`, enabled: ['EVALSHA'] }];
  const child = await onFreePort((port) => {
    const config = { redis_host: host, redis_port: redisPort, http_host: '127.0.0.1', http_port: port, threads: 2, daemonize: false, database: db, acl };
    writeFileSync(join(dir, 'webdis.json'), JSON.stringify({ ...config, verbosity: 0, logfile: join(dir, 'webdis.log') }));
    return spawnServing('webdis', [join(dir, 'webdis.json')], { command: binary, cwd: dir, port, stdoutFile: join(dir, 'stdout.log') });
  });
  // dpkg-query's field, not a template placeholder (webdis prints no version of its own)
  const version = outputOf('dpkg-query', ['-W', '-f', '$' + '{Version}', 'webdis']) ?? '?';
  return { ...child, basic: Buffer.from(`emq:${secret}`).toString('base64'), about: `webdis ${version}, 2 threads` };
}
