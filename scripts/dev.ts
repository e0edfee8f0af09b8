// `npm start`: a private Valkey for local runs (or VALKEY_URL's), until Ctrl-C or SIGTERM.
import { redactUrl } from '../shared/connections/valkey-url.js';
import { startServer } from './valkey.js';

const external = process.env.VALKEY_URL;
const server = external ? undefined : await startServer();
const url = external ?? server!.url;

process.stdout.write(
  [
    `Valkey: ${redactUrl(url)}${server ? ` (${server.name}, private, unpersisted)` : ' (from VALKEY_URL)'}`,
    '',
    'Try it:',
    `  export VALKEY_URL=${redactUrl(url)}`,
    `  echo '{"hello":"world"}' | ./bin/emq.js enqueue demo`,
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
  await server?.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
setInterval(() => {}, 1 << 30);
