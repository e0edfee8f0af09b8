// `npm start`: a private Valkey (or VALKEY_URL's) and the REST gateway in front of it, with
// dev tokens, until Ctrl-C or SIGTERM; then it stops everything it started.
import { randomBytes } from 'node:crypto';
import { connectGlide } from '../shared/connections/glide.js';
import { redactUrl } from '../shared/connections/valkey-url.js';
import { enqueueScript } from '../shared/scripts.js';
import { startGateway } from '../functions/gateway/server.js';
import { startServer } from './valkey.js';

const external = process.env.VALKEY_URL;
const server = external ? undefined : await startServer();
const valkeyUrl = external ?? server!.url;
const admin = `dev-admin-${randomBytes(12).toString('hex')}`;
const producer = `dev-producer-${randomBytes(12).toString('hex')}`;
const tokens = process.env.EMQ_GATEWAY_TOKENS ?? `admin:${admin},producer:${producer}`;
const gateway = await startGateway({ ...process.env, VALKEY_URL: valkeyUrl, EMQ_GATEWAY_TOKENS: tokens });
const job = `JOB${'0'.repeat(25)}1`;
// so the example's EVALSHA finds the script (producers fall back to EVAL by themselves)
const loader = await connectGlide(valkeyUrl);
await loader.command(['SCRIPT', 'LOAD', enqueueScript.text]);
await loader.close();

process.stdout.write(
  [
    `Valkey:  ${redactUrl(valkeyUrl)}${server ? ` (${server.name}, private, unpersisted)` : ' (from VALKEY_URL)'}`,
    `Gateway: ${gateway.url}`,
    ...(process.env.EMQ_GATEWAY_TOKENS ? ['Tokens:  from EMQ_GATEWAY_TOKENS'] : [`Tokens:  admin ${admin}`, `         producer ${producer}`]),
    '',
    'Try it:',
    `  echo -n 'hello' | VALKEY_URL=${redactUrl(valkeyUrl)} ./bin/emq.js enqueue demo`,
    `  curl -H 'Authorization: Bearer ${process.env.EMQ_GATEWAY_TOKENS ? '<producer token>' : producer}' --data-binary 'hello' \\`,
    `    ${gateway.url}/evalsha/${enqueueScript.sha1}/2/${encodeURIComponent(`emq:{demo}:job:${job}`)}/${encodeURIComponent('emq:{demo}:pending')}/${job}`,
    '',
    'Ctrl-C stops everything this started.',
    '',
  ].join('\n'),
);

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${signal}: stopping\n`);
  await gateway.stop();
  await server?.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
