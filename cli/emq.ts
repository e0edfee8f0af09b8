// emq: the operator's command line. Exit codes: 0 done, 1 failure (server unreachable,
// timed out, server error: retrying with the same id is safe), 2 refused (bad input).
import { parseArgs } from 'node:util';
import { connectGlide } from '../shared/connections/glide.js';
import { startGateway } from '../functions/gateway/server.js';
import { startProducer } from '../functions/producer/node.js';
import { startConsole } from '../functions/console/node.js';
import { ConfigError } from '../shared/config/parse.js';
import { readStdin } from './stdin.js';
import { enqueueConfigFrom, idConfigFrom } from './config.js';
import { CONTROL_USAGE, CliRefusal, controlCommand } from './control.js';
import { parseDuration, parseTime } from '../shared/duration.js';
import {
  ConnectionError,
  RefusalError,
  WireMismatchError,
  createMinter,
  decodeId,
  drawNode,
  enqueue,
  enqueueGrouped,
  enqueueGroupedMany,
  enqueueNew,
  schedule,
  scheduleMany,
  validateGroup,
  setMinter,
  validateId,
  validateQueue,
} from '../shared/index.js';

const USAGE = `usage:
  emq id                                        print a fresh job id
  emq id --decode <id>                          print what a branded id (any namespace) holds, as one
                                                JSON line: namespace, snowflake, unixMs, node, seq
  emq gateway                                   run the REST gateway (see functions/gateway/server.ts)
  emq producer                                  run the producer app on Node (see functions/producer/node.ts)
  emq console                                   run the console: web pages over the producer API at
                                                $EMQ_CONSOLE_PRODUCER_URL (see functions/console/)
  emq enqueue <queue> [--id <id>] [--url <url>] [--group <G>] [--delay <D> | --not-before <T>]
                                                enqueue stdin's bytes as one job
      --url defaults to $VALKEY_URL (redis://, rediss://, valkey://, valkeys://)
      --group: a lane, named by a branded id (e.g. PRT0KHTOWnGLuC)
      --delay: a whole number with a unit ms, s, m, h or d (e.g. 30s); --not-before: an
      RFC 3339 time or Unix ms; either schedules the job (verdict "scheduled")
      refused (exit 1) while Valkey's {emq}:version is not $EMQ_WIRE_VERSION (default echomq:3.0.0)
      prints {"queue","id","verdict"} as one JSON line
${CONTROL_USAGE}
ids carry the node id EMQ_NODE_ID (0-1023) pins, else one drawn from EMQ_NODE_IDS (default 0-1023)
exit codes: 0 done, 1 failed (safe to retry with the same --id), 2 refused`;

/** The whole command's time budget: a connection failure must not hang a script. */
const DEADLINE_MS = 15_000;

class UsageError extends Error {}

async function enqueueCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { id: { type: 'string' }, url: { type: 'string' }, group: { type: 'string' }, delay: { type: 'string' }, 'not-before': { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError(`enqueue takes one queue name, got ${positionals.length}`);
  const queue = positionals[0]!;
  validateQueue(queue);
  if (values.id !== undefined) validateId(values.id);
  const { group, delay } = values;
  const notBefore = values['not-before'];
  if (group !== undefined) validateGroup(group);
  if (delay !== undefined && notBefore !== undefined) throw new UsageError('pass --delay or --not-before, not both');
  const when = (() => {
    try {
      if (delay !== undefined) return { inMs: parseDuration(delay), group };
      if (notBefore !== undefined) return { at: parseTime(notBefore), group };
    } catch (err) {
      throw new UsageError(`${delay !== undefined ? '--delay' : '--not-before'}: ${(err as Error).message}`);
    }
    return undefined;
  })();
  const { url, wireVersion } = enqueueConfigFrom(process.env, values.url);
  if (!url) throw new UsageError('no server: pass --url or set VALKEY_URL');
  const payload = await readStdin();
  const connection = await connectGlide({ url, wireVersion });
  try {
    // a minted id answered duplicate collided with another minter: enqueueNew (and the
    // Many functions, for one job) mint again
    const given = values.id;
    let id: string;
    let verdict: string;
    if (when) {
      if (given !== undefined) [id, verdict] = [given, await schedule(connection, queue, given, payload, when)];
      else ({ id, verdict } = (await scheduleMany(connection, queue, [{ payload, ...when }]))[0]!);
    } else if (group !== undefined) {
      if (given !== undefined) [id, verdict] = [given, await enqueueGrouped(connection, queue, group, given, payload)];
      else ({ id, verdict } = (await enqueueGroupedMany(connection, queue, [{ group, payload }]))[0]!);
    } else if (given !== undefined) [id, verdict] = [given, await enqueue(connection, queue, given, payload)];
    else [id, verdict] = [await enqueueNew(connection, queue, payload), 'enqueued'];
    process.stdout.write(`${JSON.stringify({ queue, id, verdict })}\n`);
  } finally {
    await connection.close();
  }
}

/** Runs the gateway or the producer until SIGTERM or SIGINT, then drains in-flight requests. */
async function serveUntilSignal(which: 'gateway' | 'producer' | 'console'): Promise<void> {
  clearTimeout(deadline);
  let running: { url: string; stop(): Promise<void> };
  try {
    running = which === 'gateway' ? await startGateway(process.env) : which === 'producer' ? await startProducer(process.env) : await startConsole(process.env);
  } catch (err) {
    // an unreachable Valkey is a failure (exit 1); anything else here is configuration (exit 2)
    if (err instanceof ConnectionError) throw err;
    throw new UsageError((err as Error).message);
  }
  process.stdout.write(`${running.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`${which}: ${signal}: finishing requests in flight\n`);
      void running.stop().then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

/** `emq id` mints; `emq id --decode <id>` says what an id holds (a malformed one is refused: exit 2). */
function idCommand(argv: string[]): void {
  const { values, positionals } = parseArgs({ args: argv, options: { decode: { type: 'string' } }, allowPositionals: true, strict: true });
  if (positionals.length > 0) throw new UsageError('id takes no arguments but --decode <id>');
  if (values.decode !== undefined) {
    process.stdout.write(`${JSON.stringify(decodeId(values.decode))}\n`);
    return;
  }
  process.stdout.write(`${minter()()}\n`);
}

/** The process's minter, on EMQ_NODE_ID, else a node id drawn from EMQ_NODE_IDS (checked first). */
function minter() {
  const { nodeId, nodePool } = idConfigFrom(process.env);
  const made = createMinter({ node: nodeId ?? drawNode(nodePool) });
  setMinter(made);
  return made;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    // each command's configuration is checked before it reads stdin or connects (cli/config.ts)
    if (command === 'enqueue') minter(); // the ids it mints carry this process's node id
    switch (command) {
      case 'id':
        idCommand(rest);
        return 0;
      case 'enqueue':
        await enqueueCommand(rest);
        return 0;
      case 'job':
      case 'queue':
      case 'group':
      case 'schedule':
        await controlCommand(command, rest, (message) => new UsageError(message));
        return 0;
      case 'gateway':
      case 'producer':
      case 'console':
        if (rest.length > 0) throw new UsageError(`${command} is configured by environment, not arguments`);
        await serveUntilSignal(command);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return 0;
      default:
        throw new UsageError(command ? `unknown command "${command}"` : 'no command');
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof RangeError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`emq: ${(err as Error).message}\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof RefusalError || err instanceof CliRefusal) {
      process.stderr.write(`emq: refused (${err.code}): ${err.message}\n`);
      return 2;
    }
    if (err instanceof TypeError && /URL|scheme|host|database/.test(err.message)) {
      process.stderr.write(`emq: ${err.message}\n`);
      return 2;
    }
    const kind = err instanceof ConnectionError ? 'connection failed' : err instanceof WireMismatchError ? 'wire version mismatch' : 'failed';
    process.stderr.write(`emq: ${kind}: ${(err as Error).message}\n`);
    return 1;
  }
}

const deadline = setTimeout(() => {
  process.stderr.write(`emq: gave up after ${DEADLINE_MS / 1000} s\n`);
  process.exit(1);
}, DEADLINE_MS);
deadline.unref();

process.exitCode = await main(process.argv.slice(2));
// glide's native client can hold the loop open briefly after close; the answer is already out.
setImmediate(() => process.exit(process.exitCode));
