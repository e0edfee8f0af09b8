// A self-signed certificate made by openssl for the HTTPS gateway's tests.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** A self-signed EC certificate for 127.0.0.1 (and localhost), valid one day: [cert path, key path]. */
export function selfSigned(dir: string, name: string): [string, string] {
  const cert = join(dir, `${name}-cert.pem`);
  const key = join(dir, `${name}-key.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return [cert, key];
}
