// HTTPS for `emq gateway`: EMQ_GATEWAY_TLS_CERT and EMQ_GATEWAY_TLS_KEY, the paths of a PEM
// certificate chain and its unencrypted private key; both or neither. GatewayTokens travel in every
// request, so a gateway reachable beyond loopback serves HTTPS, or sits behind a proxy that
// terminates TLS. Read and checked at start: a file that cannot be read, is not PEM, or a key
// that does not match stops the start, naming the variable, never its value (the path).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

const CERT = 'EMQ_GATEWAY_TLS_CERT';
const KEY = 'EMQ_GATEWAY_TLS_KEY';

function read(path: string, name: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`${name} names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The certificate and key to serve HTTPS with, or undefined for plain HTTP. */
export function tlsFrom(env: Record<string, string | undefined>): { cert: Buffer; key: Buffer } | undefined {
  const certPath = env[CERT];
  const keyPath = env[KEY];
  if (!certPath && !keyPath) return undefined;
  if (!certPath || !keyPath) throw new Error(`${CERT} and ${KEY} go together: set both (HTTPS) or neither`);
  const cert = read(certPath, CERT);
  const key = read(keyPath, KEY);
  try {
    if (!cert.includes('-----BEGIN CERTIFICATE-----')) throw new Error();
    new X509Certificate(cert);
  } catch {
    throw new Error(`${CERT} is not a PEM certificate`);
  }
  try {
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString('latin1'))) throw new Error();
    createPrivateKey(key);
  } catch {
    throw new Error(`${KEY} is not an unencrypted PEM private key`);
  }
  try {
    createSecureContext({ cert, key });
  } catch {
    throw new Error(`${KEY} is not the private key of ${CERT}`);
  }
  return { cert, key };
}
