// The gateway test files' helpers: requests to a gateway process, the whole keyspace as a
// snapshot (every refusal is checked against it), and a private server with a gateway in front.
import { connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';
import { startServer, type RunningServer } from '../../scripts/valkey.js';
import { mintId } from '../../shared/ids.js';
import { enqueueScript } from '../../shared/scripts.js';
import { connectAdmin, freshQueue, type Admin } from './admin.js';
import { answerOf, type Answer } from './answer.js';
import { startGatewayProcess, type GatewayProcess } from './gateway.js';

export interface CallOptions {
  token?: string | undefined;
  method?: string | undefined;
  body?: string | Uint8Array | undefined;
  headers?: Record<string, string> | undefined;
}

export async function call(gw: GatewayProcess, path: string, { token, method = 'GET', body, headers = {} }: CallOptions = {}): Promise<Answer> {
  const res = await fetch(gw.url + path, {
    method,
    ...(body === undefined ? {} : { body: body as NonNullable<RequestInit['body']> }),
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
  });
  return answerOf(res);
}

/** One JSON command: POST / ["CMD", ...]. */
export const command = (gw: GatewayProcess, token: string | undefined, args: unknown[]) =>
  call(gw, '/', { token, method: 'POST', body: JSON.stringify(args), headers: { 'Content-Type': 'application/json' } });

export const keysOf = (q: string, id: string) => [`emq:{${q}}:job:${id}`, `emq:{${q}}:pending`];

/** The path of a path-style EVALSHA of the enqueue script; the payload goes in the POST body. */
export const evalshaPath = (q: string, id: string) =>
  `/evalsha/${enqueueScript.sha1}/2/${keysOf(q, id).map(encodeURIComponent).join('/')}/${encodeURIComponent(id)}`;

/** EVAL of the enqueue script's exact text, as a JSON command. */
export const evalEnqueue = (q: string, id: string, payload: string) => ['EVAL', enqueueScript.text, 2, ...keysOf(q, id), id, payload];

/** Every byte percent-escaped except RFC 3986's unreserved characters. */
export const percentBytes = (bytes: Uint8Array) =>
  Array.from(bytes, (b) =>
    /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) && b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');

/** The whole keyspace: every key (as hex) with its DUMP and absolute expiry (EXPIRETIME), and DBSIZE. */
export async function snapshot(admin: Admin) {
  const keys = (await admin.call('KEYS', '*')) as Buffer[];
  const entries: Record<string, string> = {};
  for (const k of keys) {
    const dump = (await admin.call('DUMP', k)) as Buffer;
    const expiry = await admin.call('PEXPIRETIME', k);
    entries[k.toString('hex')] = `${dump.toString('hex')} expires=${String(expiry)}`;
  }
  return { dbsize: Number(await admin.call('DBSIZE')), entries };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when a TCP connect to the port is refused. */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

export const portOf = (gw: GatewayProcess) => Number(new URL(gw.url).port);

export async function readAll(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Seeds a few keys of every type, so a flush, a delete or an overwrite would show. */
export async function seed(admin: Admin) {
  await admin.call('SET', 'seed:str', 'hello');
  await admin.call('SET', Buffer.from('seed:bin'), Buffer.from([0, 0xff, 0x80, 10]));
  await admin.call('HSET', 'seed:hash', 'a', '1', 'b', '2');
  await admin.call('RPUSH', 'seed:list', 'x', 'y', 'z');
  await admin.call('ZADD', 'seed:zset', '1', 'one', '2', 'two');
  await admin.call('SADD', 'seed:set', 'm1', 'm2');
  await admin.call('SET', 'seed:ttl', 'v', 'EX', '3600');
}

export interface PrivateGateway {
  server: RunningServer;
  admin: Admin;
  gw: GatewayProcess;
}

/**
 * For one describe block: a server private to it, seeded with keys of every type and one job
 * enqueued as a producer would, with a gateway (`env`) in front; stopped after the block (the
 * gateway must exit 0).
 */
export function privateGateway(env: Record<string, string>): PrivateGateway {
  const held = {} as PrivateGateway;
  beforeAll(async () => {
    held.server = await startServer();
    held.admin = await connectAdmin(held.server.url);
    held.gw = await startGatewayProcess(held.server.url, env);
    await seed(held.admin);
    const q = freshQueue('seed');
    const id = mintId();
    expect((await command(held.gw, held.gw.producer, evalEnqueue(q, id, 'seeded'))).json).toEqual({ result: 1 });
  });
  afterAll(async () => {
    const code = await held.gw?.stop();
    held.admin?.close();
    await held.server?.stop();
    expect(code).toBe(0);
  });
  return held;
}

/** The caps of the gateway the gateway test files share the shape of. */
export const MAX_BODY = 1024 * 1024;
export const MAX_PIPELINE = 10;

/** privateGateway with EMQ_GATEWAY_MAX_BODY=MAX_BODY and EMQ_GATEWAY_MAX_PIPELINE=MAX_PIPELINE. */
export const cappedGateway = (): PrivateGateway => privateGateway({ EMQ_GATEWAY_MAX_BODY: String(MAX_BODY), EMQ_GATEWAY_MAX_PIPELINE: String(MAX_PIPELINE) });
