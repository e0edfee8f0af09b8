// The gateway: tokens, commands (a producer's, an admin's), bodies and paths, the policy
// it must apply, the plan of each case, and the regression examples replayed first.
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { allScripts, enqueueOnceScript, enqueueScript, flowScript, jobStateScript } from '../../shared/scripts.js';
import { mostElements, producerCaps } from '../../functions/gateway/script-calls.js';
import { bodyArb, bytesOf, headersOf, hostileId, printable, rawSegArb, validId, type Alter, type Body } from './arbitraries.js';
import { model, sha256 } from './model.js';
import { ID_RULE, QUEUE_RULE, checkRow, intact, pathArgs, trimHttp, violation, type Phase, type Plan, type Req } from './oracle.js';
import { GQ_WT, GW_MAX_BODY, GW_MAX_PIPELINE, gw, gwCap, known } from './setup.js';

const BREAKERS = new Set([
  'BLPOP',
  'BRPOP',
  'BRPOPLPUSH',
  'BLMOVE',
  'BLMPOP',
  'BZPOPMIN',
  'BZPOPMAX',
  'BZMPOP',
  'WAIT',
  'WAITAOF',
  'SUBSCRIBE',
  'PSUBSCRIBE',
  'SSUBSCRIBE',
  'UNSUBSCRIBE',
  'PUNSUBSCRIBE',
  'SUNSUBSCRIBE',
  'MONITOR',
  'SYNC',
  'PSYNC',
  'SELECT',
  'AUTH',
  'HELLO',
  'QUIT',
  'RESET',
  'MULTI',
  'EXEC',
  'DISCARD',
  'WATCH',
  'UNWATCH',
  'CLIENT',
  'READONLY',
  'READWRITE',
  'SHUTDOWN',
]);

// ---------------------------------------------------------------- the gateway

type GwAuthV =
  | { t: 'producer' }
  | { t: 'producerQuery' }
  | { t: 'admin' }
  | { t: 'variant'; base: 'producer' | 'admin'; scheme: string; sep: string; trail: string; alter: Exclude<Alter, 'none'> }
  | { t: 'none' }
  | { t: 'raw'; value: string }
  | { t: 'badQuery'; value: string };
export const gwAuthArb = (adminWeight: number): fc.Arbitrary<GwAuthV> =>
  fc.oneof(
    { weight: 16, arbitrary: fc.constant({ t: 'producer' as const }) },
    { weight: 2, arbitrary: fc.constant({ t: 'producerQuery' as const }) },
    ...(adminWeight > 0 ? [{ weight: adminWeight, arbitrary: fc.constant({ t: 'admin' as const }) }] : []),
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('variant' as const),
        base: fc.constantFrom('producer' as const, 'admin' as const),
        scheme: fc.constantFrom('Bearer', 'bearer', 'Basic', ''),
        sep: fc.constantFrom(' ', '\t', ''),
        trail: fc.constantFrom('', ' ', 'x'),
        alter: fc.constantFrom('append' as const, 'chop' as const, 'upper' as const),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ t: 'none' as const }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('raw' as const), value: printable }) },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant('badQuery' as const),
        value: fc.oneof(printable.map(encodeURIComponent), fc.constantFrom('%', '%ZZ', '%E0%A4%A', '+')),
      }),
    },
  );
function gwAuth(a: GwAuthV): { header?: string; query?: string } {
  switch (a.t) {
    case 'producer':
      return { header: `Bearer ${gw.producer}` };
    case 'admin':
      return { header: `Bearer ${gw.admin}` };
    case 'producerQuery':
      return { query: `_token=${encodeURIComponent(gw.producer)}` };
    case 'variant': {
      const t = a.base === 'producer' ? gw.producer : gw.admin;
      const token = a.alter === 'append' ? `${t}x` : a.alter === 'chop' ? t.slice(0, -1) : t.toUpperCase();
      return { header: `${a.scheme}${a.sep}${token}${a.trail}` };
    }
    case 'none':
      return {};
    case 'raw':
      return { header: a.value };
    case 'badQuery':
      return { query: `_token=${a.value}` };
  }
}
function gwScope(auth: { header?: string; query?: string }): 'admin' | 'producer' | undefined {
  // ?_token= is off (no EMQ_GATEWAY_QUERY_TOKEN here): a request carrying it is 401, a valid token or not
  if (auth.query !== undefined) return undefined;
  const presented = auth.header === undefined ? undefined : /^bearer[\t ]+(\S+)[\t ]*$/i.exec(trimHttp(auth.header))?.[1];
  return presented === gw.producer ? 'producer' : presented === gw.admin ? 'admin' : undefined;
}

const GQ = ['gq-1', 'gq-2', GQ_WT];
const WRITER = "redis.call('SET', 'pwned', '1') return 1";
const WRITER_SHA = createHash('sha1').update(WRITER).digest('hex');
const POOL_IDS = Array.from({ length: 4 }, (_, i) => `JOB0${String(i).repeat(10)}`);

/** A script call a producer may make, well formed or not. */
interface ScriptCall {
  /** Well formed in every part but the script, queue and id: most such calls run. */
  sane: boolean;
  script: 'enqueue' | 'enqueue-once' | 'job-state';
  how: 'evalsha' | 'EVALSHA-upper-sha' | 'eval' | 'eval-changed' | 'evalsha-writer' | 'evalsha-random';
  q: string;
  q2: string;
  id: string;
  rowId: string | undefined;
  numkeys: 'right' | number | string;
  payload: string | undefined;
  compare: string | undefined;
  ttl: string | undefined;
  dedup: 'right' | 'junk';
}
const scriptCallArb: fc.Arbitrary<ScriptCall> = fc.record({
  sane: fc.boolean(),
  script: fc.constantFrom('enqueue' as const, 'enqueue' as const, 'enqueue-once' as const, 'job-state' as const),
  how: fc.constantFrom(
    'evalsha' as const,
    'evalsha' as const,
    'EVALSHA-upper-sha' as const,
    'eval' as const,
    'eval-changed' as const,
    'evalsha-writer' as const,
    'evalsha-random' as const,
  ),
  q: fc.constantFrom(...GQ, 'gq{x}', '', 'gq-\xff', 'emq', `gq-${'k'.repeat(3000)}`),
  q2: fc.constantFrom('same', 'same', 'same', 'gq-2', 'gq-1'),
  id: fc.oneof({ weight: 3, arbitrary: validId }, { weight: 2, arbitrary: fc.constantFrom(...POOL_IDS) }, { weight: 1, arbitrary: hostileId }),
  rowId: fc.option(validId, { nil: undefined, freq: 6 }),
  numkeys: fc.oneof(
    { weight: 8, arbitrary: fc.constant('right' as const) },
    { weight: 1, arbitrary: fc.integer({ min: -2, max: 9 }) },
    { weight: 1, arbitrary: fc.constantFrom('x', '1e3', '', '2.0', ' 2', '99999999999999999999', '-9223372036854775809', 'inf') },
  ),
  payload: fc.option(fc.string({ unit: 'grapheme', maxLength: 40 }), { nil: undefined, freq: 8 }),
  compare: fc.option(fc.constantFrom('0', '1', '-', 'true', ''), { nil: undefined, freq: 8 }),
  ttl: fc.option(fc.constantFrom('86400', '604800', '0', '-1', '1.5', 'x', '1e9', '99999999999', 'inf', '1e300', '9.3e15', '-0', '18446744073709551616'), {
    nil: undefined,
    freq: 8,
  }),
  dedup: fc.constantFrom('right' as const, 'right' as const, 'junk' as const),
});
function scriptArgs(given: ScriptCall): { args: Array<string | number>; enqueue?: { q: string; id: string; payload: string } } {
  const s: ScriptCall = given.sane
    ? {
        ...given,
        how: given.how === 'EVALSHA-upper-sha' || given.how === 'eval' ? given.how : 'evalsha',
        q2: 'same',
        rowId: undefined,
        numkeys: 'right',
        payload: given.payload ?? 'p',
        compare: '1',
        ttl: '86400',
        dedup: 'right',
      }
    : given;
  const q = s.q;
  const q2 = s.q2 === 'same' ? q : s.q2;
  const row = `emq:{${q}}:job:${s.rowId ?? s.id}`;
  const pending = `emq:{${q2}}:pending`;
  const dedup = s.dedup === 'right' ? `emq:{${q}}:de:${sha256(`${s.id}`)}` : `emq:{${q}}:once:${sha256(`${s.id}`)}`;
  const sets = ['active', 'schedule', 'dead'].map((set) => `emq:{${q}}:${set}`);
  const script = s.script === 'enqueue' ? enqueueScript : s.script === 'enqueue-once' ? enqueueOnceScript : jobStateScript;
  const keys = s.script === 'enqueue' ? [row, pending] : s.script === 'enqueue-once' ? [row, pending, dedup] : [row, pending, ...sets];
  const argv =
    s.script === 'enqueue'
      ? [s.id, ...(s.payload === undefined ? [] : [s.payload])]
      : s.script === 'enqueue-once'
        ? [s.id, ...(s.compare === undefined ? [] : [s.compare]), ...(s.ttl === undefined ? [] : [s.ttl]), ...(s.payload === undefined ? [] : [s.payload])]
        : [s.id];
  const head =
    s.how === 'evalsha'
      ? ['EVALSHA', script.sha1]
      : s.how === 'EVALSHA-upper-sha'
        ? ['evalsha', script.sha1.toUpperCase()]
        : s.how === 'eval'
          ? ['EVAL', script.text]
          : s.how === 'eval-changed'
            ? ['EVAL', `${script.text} `]
            : s.how === 'evalsha-writer'
              ? ['EVALSHA', WRITER_SHA]
              : ['EVALSHA', sha256(s.id).slice(0, 40)];
  const numkeys = s.numkeys === 'right' ? String(keys.length) : s.numkeys;
  const args = [...head, numkeys, ...keys, ...argv];
  const wellFormed =
    s.script === 'enqueue' &&
    s.numkeys === 'right' &&
    q === q2 &&
    s.rowId === undefined &&
    QUEUE_RULE.test(q) &&
    q !== 'emq' &&
    ID_RULE.test(s.id) &&
    s.payload !== undefined &&
    (s.how === 'evalsha' || s.how === 'EVALSHA-upper-sha' || s.how === 'eval');
  return { args, ...(wellFormed ? { enqueue: { q, id: s.id, payload: s.payload! } } : {}) };
}

const FORBIDDEN = [
  'SET',
  'GET',
  'DEL',
  'FLUSHALL',
  'FLUSHDB',
  'CONFIG',
  'KEYS',
  'SCRIPT',
  'EVAL_RO',
  'EVALSHA_RO',
  'FCALL',
  'FUNCTION',
  'DEBUG',
  'SHUTDOWN',
  'BLPOP',
  'SUBSCRIBE',
  'MULTI',
  'EXEC',
  'CLIENT',
  'SELECT',
  'HELLO',
  'AUTH',
  'MONITOR',
  'WAIT',
  'XADD',
  'HSET',
  'ZADD',
  'INCR',
  'EXPIRE',
  'RENAME',
  'COPY',
  'RESTORE',
  'SWAPDB',
  'MOVE',
  'PUBLISH',
  'SAVE',
  'REPLICAOF',
  'ACL',
  'ECHO',
  'TIME',
];
const argArb: fc.Arbitrary<string | number> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom('emq:{gq-1}:pending', 'pwned', 'seed', '*', '0', 'ASYNC', 'SET', 'maxmemory', 'gq-1') },
  { weight: 1, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);
const NON_ASCII_NAMES = ['p\u0131ng', 'P\u0130NG', 'evalsha\u0131', '\ufb00', '\uff30\uff29\uff2e\uff27', 'conf\u0131g', 'ş', 'PING\u00a0'];
const anyCaseArb = (names: string[]) =>
  fc
    .tuple(fc.constantFrom(...names), fc.constantFrom('upper', 'lower', 'mixed'))
    .map(([n, how]) => (how === 'upper' ? n : how === 'lower' ? n.toLowerCase() : n[0]!.toLowerCase() + n.slice(1)));
type Cmd = { args: unknown[]; enqueue?: { q: string; id: string; payload: string } };
export const producerCmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: scriptCallArb.map(scriptArgs) },
  { weight: 3, arbitrary: fc.tuple(anyCaseArb(['PING']), fc.array(fc.string({ maxLength: 8 }), { maxLength: 1 })).map(([p, a]) => ({ args: [p, ...a] })) },
  { weight: 3, arbitrary: fc.tuple(anyCaseArb(FORBIDDEN), fc.array(argArb, { maxLength: 4 })).map(([n, a]) => ({ args: [n, ...a] })) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.array(argArb, { maxLength: 3 })).map(([n, a]) => ({ args: [n, ...a] })) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.jsonValue({ maxDepth: 1 }), argArb), { maxLength: 4 }).map((args) => ({ args })) },
  // names Unicode case mapping would alias to a command (dotless ı, dotted İ, ligatures, fullwidth)
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...NON_ASCII_NAMES), fc.array(fc.oneof(argArb, fc.constant('\u00ff')), { maxLength: 2 }))
      .map(([n, a]) => ({ args: [n, ...a] })),
  },
);

const ADMIN_COMMANDS = [
  'SET',
  'GET',
  'DEL',
  'EXISTS',
  'TYPE',
  'INCR',
  'INCRBY',
  'DECR',
  'APPEND',
  'GETRANGE',
  'STRLEN',
  'MGET',
  'MSET',
  'GETDEL',
  'GETEX',
  'HSET',
  'HGET',
  'HGETALL',
  'HDEL',
  'HINCRBY',
  'HKEYS',
  'HRANDFIELD',
  'LPUSH',
  'RPUSH',
  'LPOP',
  'LRANGE',
  'LLEN',
  'LPOS',
  'SADD',
  'SMEMBERS',
  'SPOP',
  'SRANDMEMBER',
  'SINTER',
  'ZADD',
  'ZRANGE',
  'ZSCORE',
  'ZINCRBY',
  'ZPOPMIN',
  'ZRANGEBYSCORE',
  'XADD',
  'XRANGE',
  'XLEN',
  'PFADD',
  'PFCOUNT',
  'EXPIRE',
  'PEXPIRE',
  'TTL',
  'PERSIST',
  'RENAME',
  'COPY',
  'DUMP',
  'RESTORE',
  'OBJECT',
  'SCAN',
  'KEYS',
  'DBSIZE',
  'RANDOMKEY',
  'ECHO',
  'PING',
  'TIME',
  'INFO',
  'SCRIPT',
  'FUNCTION',
  'FCALL',
  'EVAL_RO',
  'EVALSHA',
  'SORT',
  'MEMORY',
  'LATENCY',
  'SLOWLOG',
  'COMMAND',
  'LOLWUT',
  'WAIT',
  'BLPOP',
  'SUBSCRIBE',
  'MULTI',
  'EXEC',
  'CLIENT',
  'SELECT',
  'HELLO',
  'SHUTDOWN',
  'MONITOR',
  'QUIT',
  'RESET',
  'FLUSHDB',
  'FLUSHALL',
  'SWAPDB',
  'MOVE',
  'UNLINK',
  'TOUCH',
];
const adminArgArb: fc.Arbitrary<string | number> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('k1', 'k2', 'h', 'l', 'z', 's', 'x', 'emq:{gq-1}:pending', 'pwned') },
  { weight: 3, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 2, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '9223372036854775807',
      '-9223372036854775808',
      '18446744073709551616',
      '1e309',
      'nan',
      'inf',
      '-inf',
      '0x10',
      '1.5',
      '',
      '*',
      '-',
      '+',
      'ASYNC',
      'WITHSCORES',
      'LIMIT',
      'COUNT',
      'FLUSH',
      'EXISTS',
      'LOAD',
      'LIST',
      'DOCTOR',
      'STATS',
      'HELP',
      'ENCODING',
    ),
  },
);
const LUA = [
  "return redis.call('SET', KEYS[1], ARGV[1])",
  "return {1, 'two', {3, false, {4}}, nil, 5}",
  'return redis.error_reply(ARGV[1])',
  'return {err = ARGV[1]}',
  'return {ok = ARGV[1]}',
  'return 3.99',
  'return true',
  'return false',
  'return nil',
  "error('boom')",
  "redis.setresp(3) return redis.call('HGETALL', KEYS[1])",
  'redis.setresp(3) return {double = 1.5}',
  'redis.setresp(3) return {map = {a = 1, b = {2, 3}}}',
  'redis.setresp(3) return {set = {a = true}}',
  "redis.setresp(3) return {big_number = '123456789012345678901234567890'}",
  "return string.rep('x', tonumber(ARGV[1]) or 3)",
  "return '\\255\\254\\0'",
  "redis.call('SET', KEYS[1], 'v') return redis.error_reply('after a write')",
  "return redis.call('INCR', KEYS[1])",
  "return redis.pcall('NOPE')",
  "return redis.call('BLPOP', KEYS[1], 0)",
  'return cjson.encode({a = {1, 2}})',
  'return cmsgpack.pack({1, 2})',
  'return {1.5, 2.7}',
  'return 2^63',
];
export const adminCmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(anyCaseArb(ADMIN_COMMANDS), fc.array(adminArgArb, { maxLength: 5 })).map(([n, a]) => ({ args: [n, ...a] })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...LUA) }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) }),
        fc.constantFrom(0, 1, 2, -1, 'x'),
        fc.array(adminArgArb, { maxLength: 3 }),
      )
      .map(([text, n, a]) => ({ args: ['EVAL', text, n, ...(n === 1 ? ['k-lua'] : n === 2 ? ['k-lua', 'k-lua2'] : []), ...a] })),
  },
  // not the commands that would take the server itself down or away (an admin may; it proves nothing here)
  { weight: 2, arbitrary: producerCmdArb.filter((c) => !['DEBUG', 'CONFIG', 'SAVE', 'REPLICAOF', 'ACL'].includes(String(c.args[0]).toUpperCase())) },
);

type GwBody =
  | { t: 'cmd'; cmd: Cmd }
  | { t: 'cmds'; cmds: Cmd[] }
  | { t: 'many'; n: number }
  | { t: 'json'; value: unknown }
  | { t: 'text'; text: string }
  | { t: 'bytes'; bytes: Uint8Array }
  | { t: 'huge'; extra: number };
interface GwJsonCase {
  t: 'gwjson';
  route: '/' | '/pipeline' | '/multi-exec';
  auth: GwAuthV;
  body: GwBody;
  encoding: string | undefined;
}
interface GwPathCase {
  t: 'gwpath';
  method: 'GET' | 'POST';
  auth: GwAuthV;
  cmd: Cmd;
  escape: 'component' | 'all' | 'lower' | 'latin1';
  junk: { at: number; seg: string } | undefined;
  bodyArg: boolean;
  extraBody: Body | undefined;
  encoding: string | undefined;
}
interface GwOtherCase {
  t: 'gwother';
  method: string;
  auth: GwAuthV;
  segs: string[];
  body: Body | undefined;
}
export type GwCase = GwJsonCase | GwPathCase | GwOtherCase;

const gwBodyArb = (cmd: fc.Arbitrary<Cmd>, route: '/' | 'many'): fc.Arbitrary<GwBody> =>
  fc.oneof(
    {
      weight: 10,
      arbitrary:
        route === '/'
          ? cmd.map((c) => ({ t: 'cmd' as const, cmd: c }))
          : fc.array(cmd, { minLength: 1, maxLength: 6 }).map((cmds) => ({ t: 'cmds' as const, cmds })),
    },
    {
      weight: 1,
      arbitrary:
        route === '/'
          ? fc.array(cmd, { minLength: 1, maxLength: 3 }).map((cmds) => ({ t: 'cmds' as const, cmds }))
          : cmd.map((c) => ({ t: 'cmd' as const, cmd: c })),
    },
    { weight: 1, arbitrary: fc.constantFrom(GW_MAX_PIPELINE, GW_MAX_PIPELINE + 1).map((n) => ({ t: 'many' as const, n })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ t: 'json' as const, value })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '',
          '[',
          '["PING",1e400]',
          '["PING",-0]',
          '[ "ping" ]',
          '\ufeff["PING"]',
          '["P\\u0000ING"]',
          '[[]]',
          '[["PING"],]',
          '{"0":"PING"}',
          '["PING"]\n\n',
          '[["PING"]]',
        )
        .map((text) => ({ t: 'text' as const, text })),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 30 }).map((b) => ({ t: 'bytes' as const, bytes: Uint8Array.from([0x5b, 0x22, ...b, 0xfe, 0x22, 0x5d]) })),
    },
    { weight: 1, arbitrary: fc.constantFrom(0, 1).map((extra) => ({ t: 'huge' as const, extra })) },
  );
const encodingArb = fc.option(fc.constantFrom('base64', 'BASE64', 'none', 'utf8', ''), { nil: undefined, freq: 2 });

export const gwCaseArb = (cmd: fc.Arbitrary<Cmd>, auth: fc.Arbitrary<GwAuthV>): fc.Arbitrary<GwCase> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ t: fc.constant('gwjson' as const), route: fc.constant('/' as const), auth, body: gwBodyArb(cmd, '/'), encoding: encodingArb }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant('gwjson' as const),
        route: fc.constantFrom('/pipeline' as const, '/multi-exec' as const),
        auth,
        body: gwBodyArb(cmd, 'many'),
        encoding: encodingArb,
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        t: fc.constant('gwpath' as const),
        method: fc.constantFrom('GET' as const, 'POST' as const),
        auth,
        cmd,
        escape: fc.constantFrom('component' as const, 'all' as const, 'lower' as const, 'latin1' as const),
        junk: fc.option(fc.record({ at: fc.nat(8), seg: fc.constantFrom('%', '%G0', '%FF', '%E2%82', '%00', '%2F', '%25', '.', '..', '%2E%2E', '%C0%80') }), {
          nil: undefined,
          freq: 4,
        }),
        bodyArg: fc.boolean(),
        extraBody: fc.option(bodyArb(64 * 1024), { nil: undefined, freq: 3 }),
        encoding: encodingArb,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant('gwother' as const),
        method: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'GET', 'POST'),
        auth,
        segs: fc.array(rawSegArb, { maxLength: 3 }),
        body: fc.option(bodyArb(1024), { nil: undefined }),
      }),
    },
  );

/** A command as the gateway decides it: 400 (not a command), or the policy's verdict. */
function jsonArgsOk(value: unknown): value is Array<string | number | boolean | null> {
  // booleans and null go as their JSON text, as Upstash takes them
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => typeof v === 'string' || typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isFinite(v)))
  );
}
// command and subcommand names: ASCII only, upper-cased as ASCII (never Unicode case mapping)
const NAME_RULE = /^[A-Za-z][A-Za-z0-9_.|-]{0,63}$/;
const CONTAINERS = new Set([
  'ACL',
  'CLIENT',
  'CLUSTER',
  'COMMAND',
  'CONFIG',
  'DEBUG',
  'FUNCTION',
  'LATENCY',
  'MEMORY',
  'MODULE',
  'OBJECT',
  'PUBSUB',
  'SCRIPT',
  'SLOWLOG',
  'XGROUP',
  'XINFO',
]);
const asName = (arg: Buffer | undefined) => {
  const text = arg === undefined ? '' : arg.toString('latin1');
  return NAME_RULE.test(text) ? text.replace(/[a-z]/g, (ch) => ch.toUpperCase()) : '';
};
function policy(scope: 'admin' | 'producer', args: Buffer[]): number | undefined {
  const name = asName(args[0]);
  if (name === '') return 400;
  if (CONTAINERS.has(name) && args.length > 1 && asName(args[1]) === '') return 400;
  if (BREAKERS.has(name)) return 400;
  if (scope === 'admin') return known.has(name) ? undefined : 400;
  if (name === 'PING') return args.length === 1 ? undefined : 400; // a producer's PING takes no arguments
  const second = args[1] === undefined ? '' : new TextDecoder().decode(args[1]);
  // a project script's call: at most its layout's elements (functions/gateway/script-calls.ts)
  const script =
    name === 'EVALSHA'
      ? allScripts.find((s) => s.sha1 === second.toLowerCase())
      : name === 'EVAL'
        ? allScripts.find((s) => s.text === second && args[1] !== undefined && Buffer.from(s.text).equals(args[1]))
        : undefined;
  if (!script) return 403;
  return args.length > mostElements(script) ? 400 : undefined;
}

// the element caps, counted before parsing: a producer's largest honest calls', an admin's
// EMQ_GATEWAY_ADMIN_MAX_ARGS (its default)
const PRODUCER_CAPS = producerCaps(allScripts);
const capsOf = (scope: 'admin' | 'producer') => (scope === 'admin' ? { perCommand: 100_000, total: 100_000 } : PRODUCER_CAPS);
/** Every container's elements at every depth, an empty one counting one (count.ts's rule). */
const elementsOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? Math.max(Object.keys(v).length, 1) + Object.values(v).reduce((n: number, c) => n + elementsOf(c), 0) : 0;
function overCaps(scope: 'admin' | 'producer', route: string, value: unknown): boolean {
  const { perCommand, total } = capsOf(scope);
  if (elementsOf(value) > total) return true;
  const commands = route === '/' ? [value] : Array.isArray(value) ? value : [];
  return commands.some((c) => elementsOf(c) > perCommand);
}
const asBuffers = (args: Array<string | number | boolean | null>) => args.map((a) => Buffer.from(String(a), 'utf8'));

function escapeArg(arg: string, how: GwPathCase['escape']): string {
  if (how === 'component') return encodeURIComponent(arg);
  // each character below U+0100 as that one byte: a key or id that is not UTF-8
  if (how === 'latin1' && /^[\x00-\xff]*$/.test(arg)) return [...arg].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`).join('');
  return [...Buffer.from(arg, 'utf8')]
    .map((b) => `%${b.toString(16).padStart(2, '0')}`)
    .map((e) => (how === 'all' ? e.toUpperCase() : e))
    .join('');
}

function withQuery(path: string, auth: { query?: string }) {
  return auth.query === undefined ? path : `${path}?${auth.query}`;
}

export function planGateway(c: GwCase, phase: Phase): Plan {
  const auth = gwAuth(c.auth);
  const scope = gwScope(auth);
  const authHeaders: Array<[string, string | undefined]> = [['Authorization', auth.header]];
  const isAdmin = phase === 'admin';
  if (c.t === 'gwother') {
    const path = `/${c.segs.join('/')}`;
    const hasBody = c.body !== undefined && c.method !== 'GET' && c.method !== 'HEAD';
    const req: Req = {
      method: c.method,
      path: withQuery(path, auth),
      headers: headersOf(authHeaders, undefined),
      ...(hasBody ? { body: bytesOf(c.body!) } : {}),
    };
    const base = { label: 'gateway other methods and paths', req, service: 'gateway' as const };
    if (c.method === 'GET' || c.method === 'POST' || !intact(req.path) || /^\/(healthz|readyz)$/.test(path))
      return { ...base, valkey: undefined, writes: () => (isAdmin ? 'maybe' : false) };
    return { ...base, status: scope ? 405 : 401, valkey: false, writes: () => false };
  }
  const maybeWrites = () => 'maybe' as const;
  if (c.t === 'gwjson') {
    let body: Buffer;
    const b = c.body;
    switch (b.t) {
      case 'cmd':
        body = Buffer.from(JSON.stringify(b.cmd.args));
        break;
      case 'cmds':
        body = Buffer.from(JSON.stringify(b.cmds.map((x) => x.args)));
        break;
      case 'many':
        body = Buffer.from(JSON.stringify(Array.from({ length: b.n }, () => ['PING'])));
        break;
      case 'json':
        body = Buffer.from(JSON.stringify(b.value));
        break;
      case 'text':
        body = Buffer.from(b.text, 'utf8');
        break;
      case 'bytes':
        body = Buffer.from(b.bytes);
        break;
      case 'huge':
        body = Buffer.alloc(GW_MAX_BODY + b.extra, 0x20);
        break;
    }
    const req: Req = {
      method: 'POST',
      path: withQuery(c.route, auth),
      headers: headersOf([...authHeaders, ['Upstash-Encoding', c.encoding], ['Content-Type', 'application/json']], undefined),
      body,
    };
    const label = `gateway POST ${c.route}`;
    const base = { label, req, service: 'gateway' as const };
    const refuse = (status: number): Plan => ({ ...base, status, valkey: false, writes: () => false });
    if (!scope) return refuse(401);
    if (body.length > gwCap(scope)) return refuse(413);
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body));
    } catch {
      return refuse(400);
    }
    if (overCaps(scope, c.route, value)) return refuse(400);
    const commands = c.route === '/' ? [value] : Array.isArray(value) && value.length > 0 && value.length <= GW_MAX_PIPELINE ? value : undefined;
    if (!commands?.every(jsonArgsOk)) return refuse(400);
    for (const args of commands) {
      const refused = policy(scope, asBuffers(args));
      if (refused) return refuse(refused);
    }
    const enqueue = b.t === 'cmd' && c.route === '/' ? b.cmd.enqueue : undefined;
    return {
      ...base,
      statuses: c.route === '/pipeline' ? [200] : [200, 400],
      valkey: true,
      writes: scope === 'admin' ? maybeWrites : (ans) => (ans.status === 200 ? 'maybe' : false),
      async check(ans) {
        if (enqueue && !c.encoding && ans.json?.result === 1) {
          await checkRow(base, ans, enqueue.q, enqueue.id, Buffer.from(enqueue.payload, 'utf8'));
          model.gwIds.push(enqueue.id);
        }
        if (c.route !== '/' && (!Array.isArray(ans.json) || ans.json.length !== commands.length)) violation(base, ans, `expected ${commands.length} results`);
      },
    };
  }
  // path-style: every argument a segment, or the last one as the POST body
  const args = c.cmd.args.map((a) => (typeof a === 'string' ? a : typeof a === 'number' ? String(a) : JSON.stringify(a)));
  const inBody = c.method === 'POST' && c.bodyArg && args.length > 1 ? args[args.length - 1]! : undefined;
  const segs = (inBody === undefined ? args : args.slice(0, -1)).map((a) => escapeArg(a, c.escape));
  if (c.junk) segs.splice(Math.min(c.junk.at, segs.length), 0, c.junk.seg);
  const path = `/${segs.join('/')}`;
  let body: Buffer | undefined = inBody === undefined ? undefined : Buffer.from(inBody, 'utf8');
  if (c.method === 'POST' && body === undefined && c.extraBody) body = bytesOf(c.extraBody);
  const req: Req = {
    method: c.method,
    path: withQuery(path, auth),
    headers: headersOf([...authHeaders, ['Upstash-Encoding', c.encoding]], undefined),
    ...(body ? { body } : {}),
  };
  const base = { label: 'gateway path-style GET|POST /<command>/…', req, service: 'gateway' as const };
  const refuse = (status: number): Plan => ({ ...base, status, valkey: false, writes: () => false });
  if (!intact(req.path) || /^\/(healthz|readyz|pipeline|multi-exec)?$/.test(path))
    return { ...base, valkey: undefined, writes: (ans) => (isAdmin || ans.status === 200 ? 'maybe' : false) };
  if (!scope) return refuse(401);
  if (body && body.length > gwCap(scope)) return refuse(413);
  const decoded = pathArgs(path);
  if (decoded === 'bad') return refuse(400);
  if (body && body.length > 0) decoded.push(body);
  if (decoded.length === 0 || decoded.length > capsOf(scope).perCommand) return refuse(400);
  const refused = policy(scope, decoded);
  if (refused) return refuse(refused);
  const enqueue =
    c.cmd.enqueue &&
    !c.junk &&
    (c.escape !== 'latin1' || /^[\x00-\x7f]*$/.test(args.join(''))) &&
    (inBody !== undefined || c.method === 'GET' || !c.extraBody || bytesOf(c.extraBody).length === 0)
      ? c.cmd.enqueue
      : undefined;
  return {
    ...base,
    statuses: [200, 400],
    valkey: true,
    writes: scope === 'admin' ? maybeWrites : (ans) => (ans.status === 200 ? 'maybe' : false),
    async check(ans) {
      if (enqueue && enqueue.payload !== '' && ans.json?.result === 1) {
        await checkRow(base, ans, enqueue.q, enqueue.id, Buffer.from(enqueue.payload, 'utf8'));
        model.gwIds.push(enqueue.id);
      }
    },
  };
}

// ---------------------------------------------------------------- the bugs this fuzz found, replayed first on every run

// argument floods (finding 9, second review): refused before they are parsed (a producer's caps
// are its largest calls', PING none), or relayed within an admin's
const flood = (route: GwJsonCase['route'], auth: GwAuthV, value: unknown): GwCase => ({
  t: 'gwjson',
  route,
  auth,
  body: { t: 'json', value },
  encoding: undefined,
});
const FLOODS: GwCase[] = [
  flood('/', { t: 'producer' }, ['PING', ...Array(5_000).fill('a')]),
  flood('/', { t: 'producer' }, ['PING', 'a']),
  flood('/', { t: 'producer' }, ['EVALSHA', flowScript.sha1, '5000', ...Array(5_000).fill('a')]),
  flood('/', { t: 'producer' }, ['EVALSHA', enqueueScript.sha1, '2', 'a', 'b', 'c', 'd', 'e']),
  flood('/pipeline', { t: 'producer' }, Array(1_000).fill(['EVALSHA', jobStateScript.sha1, '5', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'])),
  flood('/multi-exec', { t: 'producer' }, [['PING', ['a', ['b']]]]),
  flood('/', { t: 'admin' }, ['PING', ...Array(5_000).fill('a')]),
  flood('/pipeline', { t: 'admin' }, [['PING'], ['PING', ...Array(100_000).fill('a')]]),
];

export const GATEWAY_EXAMPLES: GwCase[] = [
  ...FLOODS,
  // a key with the byte 0xFF in a script's error reply: glide could not parse it and dropped
  // the gateway's shared connection, a 503 for every request in flight (lua/lib/wire.lua: shown())
  {
    t: 'gwpath',
    method: 'POST',
    auth: { t: 'producer' },
    escape: 'latin1',
    junk: undefined,
    bodyArg: true,
    extraBody: undefined,
    encoding: undefined,
    cmd: scriptArgs({
      sane: false,
      script: 'enqueue',
      how: 'eval',
      q: 'gq-\xff',
      q2: 'same',
      id: POOL_IDS[0]!,
      rowId: POOL_IDS[1]!,
      numkeys: 'right',
      payload: 'p',
      compare: undefined,
      ttl: undefined,
      dedup: 'right',
    }),
  },
];
