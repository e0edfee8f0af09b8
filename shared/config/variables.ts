// Every variable any app of this project reads, once: its name, kind, default, meaning, the
// apps that read it, and whether it is a secret. The parsers (./parse.ts) take bounds and
// defaults from here, and docs/configuration.md and the comments at the top of
// wrangler.toml are generated from it (`npm run config-docs`; test/config.test.ts fails when
// either drifts, or when the code reads an EMQ_* name this table lacks).
// Runtime-agnostic: plain data, read in workerd as on Node.

/** Who reads a variable: the Worker, `emq producer`, `emq gateway`, the CLI (`emq enqueue`/`emq id`), `npm start`, the typed client. */
export type App = 'worker' | 'producer' | 'gateway' | 'console' | 'cli' | 'dev' | 'client';
export const APPS: ReadonlyArray<{ app: App; label: string }> = [
  { app: 'worker', label: 'the Worker (functions/producer/worker.ts)' },
  { app: 'producer', label: '`emq producer` (the producer on Node)' },
  { app: 'gateway', label: '`emq gateway`' },
  { app: 'console', label: '`emq console` (functions/console/)' },
  { app: 'cli', label: '`emq enqueue`, `emq id`' },
  { app: 'dev', label: '`npm start` (scripts/dev.ts)' },
  { app: 'client', label: 'the typed client (client/), where the runtime has an environment' },
];

export type VariableKind =
  /** A whole number from min to max, in `unit`. */
  | { type: 'whole'; min: number; max: number; unit: 'bytes' | 'ms' | 'seconds' | 'count' | 'port' }
  /** 1 (on) or 0 (off). */
  | { type: 'switch' }
  /** Free text: a host name, a token (at least minLength characters), a file path. */
  | { type: 'text'; what: 'host' | 'token' | 'path'; minLength?: number }
  /** A gateway's URL: https://, plain http:// only on loopback; no credentials, query or fragment. */
  | { type: 'gateway-url' }
  /** redis://, rediss://, valkey:// or valkeys:// (shared/connections/valkey-url.ts). */
  | { type: 'valkey-url' }
  /** JSON of the given shape; the app's own parser checks the shape (named in `parser`). */
  | { type: 'json'; shape: string; parser: string }
  /** A comma-separated list of scope:token (functions/gateway/tokens.ts). */
  | { type: 'scoped-tokens' }
  | { type: 'node-id' }
  | { type: 'node-pool' }
  | { type: 'wire-version' }
  /** A region name: lowercase words joined by single '-'. */
  | { type: 'region' }
  /** A whole number with a unit ms, s, m, h or d (shared/duration.ts), from 1 ms to `max` ms. */
  | { type: 'duration'; max: number }
  /** One of a few words. */
  | { type: 'choice'; values: readonly string[] }
  /** Not a var: a Worker binding of this kind, declared in wrangler.toml. */
  | { type: 'binding'; what: 'analytics-engine' };

export interface Variable {
  /** The name; `<REGION>` marks a family (EMQ_REST_TOKEN_EU_WEST, ...). */
  name: string;
  kind: VariableKind;
  /** The value when unset or empty; undefined: none (then `required` says when it must be set). */
  default?: number | string | boolean;
  /** When it must be set, if ever. */
  required?: string;
  meaning: string;
  apps: App[];
  /** true: never in wrangler.toml, a log or an error; 'may': when it holds secrets (EMQ_SOURCES, a URL with a password). */
  secret: boolean | 'may';
}

const MiB = 1024 * 1024;
const A_DAY_MS = 86_400_000;
/** shared/enqueue-once.ts's TTL_MAX_SECONDS (test/config.test.ts checks they agree). */
const TTL_MAX_SECONDS = 9_999_999_999;
const WIRE_VERSION = 'echomq:3.0.0';
/** shared/schedule.ts's SCHEDULE_DELAY_MAX_MS (ten years; test/config.test.ts checks they agree). */
const SCHEDULE_DELAY_MAX_MS = 315_576_000_000;

const limits = (prefix: 'EMQ_PRODUCER' | 'EMQ_GATEWAY' | 'EMQ_CONSOLE', app: App[]): Variable[] => [
  {
    name: `${prefix}_HEADERS_TIMEOUT_MS`,
    kind: { type: 'whole', min: 1, max: A_DAY_MS, unit: 'ms' },
    default: 10_000,
    meaning: "a request's line and headers must arrive within it (else 408 and the connection is closed); not above the request timeout",
    apps: app,
    secret: false,
  },
  {
    name: `${prefix}_REQUEST_TIMEOUT_MS`,
    kind: { type: 'whole', min: 1, max: A_DAY_MS, unit: 'ms' },
    default: 30_000,
    meaning: 'the whole request, body included, must arrive within it',
    apps: app,
    secret: false,
  },
  {
    name: `${prefix}_KEEPALIVE_TIMEOUT_MS`,
    kind: { type: 'whole', min: 1, max: A_DAY_MS, unit: 'ms' },
    default: 5_000,
    meaning: 'an idle keep-alive connection is closed after it',
    apps: app,
    secret: false,
  },
  {
    name: `${prefix}_MAX_CONNECTIONS`,
    kind: { type: 'whole', min: 1, max: 1_000_000, unit: 'count' },
    default: 1_024,
    meaning:
      'open connections; at it, a new connection takes the place of the oldest one that has not yet sent its first request line, or, with none such, is closed as it arrives',
    apps: app,
    secret: false,
  },
  {
    name: `${prefix}_MAX_CONNECTIONS_PER_ADDRESS`,
    kind: { type: 'whole', min: 0, max: 1_000_000, unit: 'count' },
    default: 256,
    meaning:
      'connections one client address (an IPv4 address, an IPv6 /64) may hold; one more is closed as it arrives; 0: no share (behind a proxy or load balancer, whose address every connection has)',
    apps: app,
    secret: false,
  },
  {
    name: `${prefix}_REQUEST_LINE_TIMEOUT_MS`,
    kind: { type: 'whole', min: 1, max: A_DAY_MS, unit: 'ms' },
    default: 2_000,
    meaning:
      "a new connection's first request line must arrive within it (over HTTPS, its TLS handshake gets as long again first), else it is closed unanswered; after that line the headers timeout holds, between requests the keep-alive timeout",
    apps: app,
    secret: false,
  },
];

export const VARIABLES: readonly Variable[] = [
  // the producer: the Worker, and `emq producer` on Node
  {
    name: 'EMQ_TOKENS',
    kind: {
      type: 'json',
      shape: '[{"token": "<16+ chars>", "queues": ["orders", "tenant-a.*"], "rawPrefixes"?: true, "can"?: ["enqueue", "read", "control"]}]',
      parser: 'functions/producer/tokens.ts',
    },
    required: 'always',
    meaning:
      'callers\' tokens and the queues each may use; a pattern is an exact queue or `<stem>.*`, one more segment (`tenant-a.*` covers `tenant-a.x`, never `tenant-a.x.y`); `*` and bare prefixes (`acme*`) cross tenants and stop start unless the entry says `"rawPrefixes": true`; `can` is what the token may do there (default `["enqueue", "read"]`; `control`: cancel, promote, reschedule, lanes and pause, which also needs a control gateway token), else 403 `forbidden_action`',
    apps: ['worker', 'producer'],
    secret: true,
  },
  {
    name: 'EMQ_REST_URL',
    kind: { type: 'gateway-url' },
    required: 'by the Worker; by `emq producer` without VALKEY_URL',
    meaning: "the region's gateway (`emq gateway`) or an Upstash REST URL the jobs go through",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_REST_TOKEN',
    kind: { type: 'text', what: 'token' },
    required: 'with EMQ_REST_URL',
    meaning: 'a `producer` token of that gateway',
    apps: ['worker', 'producer'],
    secret: true,
  },
  {
    name: 'EMQ_REST_TOKEN_<REGION>',
    kind: { type: 'text', what: 'token' },
    meaning:
      "a producer token of another region's gateway, for queues homed there (REGION upper-cased, `-` as `_`, e.g. EMQ_REST_TOKEN_EU_WEST); else EMQ_REST_TOKEN is sent",
    apps: ['worker'],
    secret: true,
  },
  {
    name: 'EMQ_MAX_PAYLOAD_BYTES',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'bytes' },
    default: MiB,
    meaning: "one job's payload cap, enforced while reading (above ~1.9 MiB, raise the gateway's EMQ_GATEWAY_PRODUCER_MAX_BODY too)",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_MAX_BATCH_BYTES',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'bytes' },
    default: 5 * MiB,
    meaning: "a batch request's body cap",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_REST_TIMEOUT_MS',
    kind: { type: 'whole', min: 1, max: A_DAY_MS, unit: 'ms' },
    default: 5_000,
    meaning: "one REST request's budget (`emq producer`'s too, when it goes through a gateway)",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_WAIT_MAX_MS',
    kind: { type: 'whole', min: 1, max: 4_000, unit: 'ms' },
    default: 1_000,
    meaning:
      "the longest WAIT a request's `?wait=N` may ask for (`?wait_timeout_ms=`, default this); set, below EMQ_REST_TIMEOUT_MS (checked at start); unset, at most half of it",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_SOURCES',
    kind: { type: 'json', shape: '{"<source>": {"kind", "secrets", "queue", ...}}', parser: 'functions/producer/webhooks/sources.ts' },
    meaning:
      'webhook sources (see docs/api.md, "Webhooks"); a secret, since it holds signing secrets. `emq console` reads the same table to sign its test deliveries',
    apps: ['worker', 'producer', 'console'],
    secret: 'may',
  },
  {
    name: 'EMQ_DEDUPE_TTL_SECONDS',
    kind: { type: 'whole', min: 1, max: TTL_MAX_SECONDS, unit: 'seconds' },
    default: 7 * 24 * 3600,
    meaning: 'how long an Idempotency-Key or a webhook delivery is remembered',
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_MAX_DELAY',
    kind: { type: 'duration', max: SCHEDULE_DELAY_MAX_MS },
    default: '365d',
    meaning: "the longest Emq-Delay (and the furthest Emq-Not-Before from now) a job may carry, here and in a webhook source's delay; beyond it, 400",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_QUEUE_GROUPS',
    kind: { type: 'json', shape: '{"<queue>" | "<stem>.*" | "<prefix>*" | "*": "<branded group id>"}', parser: 'functions/producer/queue-groups.ts' },
    meaning:
      "default lanes: a job for a matching queue (exact, else the longest pattern, `<stem>.*` being one segment under stem as in EMQ_TOKENS, else `*`) that names no Emq-Group joins that group's lane; no match, the flat pending set",
    apps: ['worker', 'producer'],
    secret: false,
  },
  {
    name: 'EMQ_CRONS',
    kind: {
      type: 'json',
      shape:
        '[{"name": "nightly", "cron": "0 3 * * *", "queue": "<queue>", "payload" | "payloadBase64": "…", "group"?: "<branded id>", "delay"?: "<n><unit>"}]',
      parser: 'functions/producer/crons.ts',
    },
    meaning:
      "cron schedules the producer fires itself, one job per schedule and minute, admitted as POST …/jobs admits one (docs/api.md, \"Cron schedules at the edge\"); expressions as Cloudflare's Cron Triggers take them, UTC; names `A-Z a-z 0-9 . _ -`, unique. The build writes the Worker's `[triggers] crons` from regions.json's `vars.EMQ_CRONS`. Not a secret: GET /v1/schedules lists it, without payloads",
    apps: ['worker', 'producer', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_NODE_ID',
    kind: { type: 'node-id' },
    meaning:
      'pins the snowflake node id (0-1023) the ids minted here carry: only for a single minter (one isolate, one process); unset, one is drawn from EMQ_NODE_IDS',
    apps: ['worker', 'producer', 'cli', 'client'],
    secret: false,
  },
  {
    name: 'EMQ_NODE_IDS',
    kind: { type: 'node-pool' },
    default: '0-1023',
    meaning: "the pool (e.g. 512-1023) a minter with no pinned node id draws its node id from at start; keep it disjoint from pinned minters' ids",
    apps: ['worker', 'producer', 'cli', 'client'],
    secret: false,
  },
  {
    name: 'EMQ_REGION',
    kind: { type: 'region' },
    meaning: "this Worker's region, answered as the Emq-Region header (generated from regions.json)",
    apps: ['worker'],
    secret: false,
  },
  {
    name: 'EMQ_HOME_REGIONS',
    kind: { type: 'json', shape: '{"<queue>" | "<stem>.*" | "<prefix>*" | "*": "<region>"}', parser: 'functions/producer/regions.ts' },
    meaning: 'each queue\'s home region, whose gateway takes its jobs (regions.json\'s "queues")',
    apps: ['worker'],
    secret: false,
  },
  {
    name: 'EMQ_REGION_URLS',
    kind: { type: 'json', shape: '{"<region>": "<gateway URL>"}', parser: 'functions/producer/regions.ts' },
    meaning: 'the gateways of the other regions EMQ_HOME_REGIONS names (generated from regions.json)',
    apps: ['worker'],
    secret: false,
  },
  {
    name: 'EMQ_WIRE_VERSION',
    kind: { type: 'wire-version' },
    default: WIRE_VERSION,
    meaning:
      "the EchoMQ wire version the glide connection fences on: while Valkey's {emq}:version holds another, writes are refused (through a gateway, the gateway's fences)",
    apps: ['producer', 'gateway', 'cli', 'dev'],
    secret: false,
  },
  {
    name: 'VALKEY_URL',
    kind: { type: 'valkey-url' },
    required: 'by `emq gateway`; by `emq enqueue` without --url',
    meaning:
      'the Valkey server: the gateway fronts it; `emq producer` goes straight to it over glide (else through EMQ_REST_URL); `npm start` uses it instead of a private one',
    apps: ['producer', 'gateway', 'cli', 'dev'],
    secret: 'may',
  },
  {
    name: 'HOST',
    kind: { type: 'text', what: 'host' },
    default: '127.0.0.1',
    meaning: 'where `emq producer` listens',
    apps: ['producer'],
    secret: false,
  },
  {
    name: 'PORT',
    kind: { type: 'whole', min: 0, max: 65_535, unit: 'port' },
    default: 8787,
    meaning: "the producer's port: `emq producer`'s (0 picks a free one), or the Worker's under `npm start`",
    apps: ['producer', 'dev'],
    secret: false,
  },
  ...limits('EMQ_PRODUCER', ['producer']),

  // observability: logs everywhere, /metrics on Node, Analytics Engine in the Worker
  {
    name: 'EMQ_LOG',
    kind: { type: 'choice', values: ['info', 'debug', 'off'] },
    default: 'info',
    meaning: 'request logs (docs/operations.md): `info`, a JSON line per request (stdout; Workers Logs); `debug` adds what the core did; `off`',
    apps: ['worker', 'producer', 'gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_METRICS_TOKEN',
    kind: { type: 'text', what: 'token', minLength: 16 },
    meaning: 'the bearer token `GET /metrics` (Prometheus) needs; unset, /metrics answers 404',
    apps: ['producer', 'gateway', 'dev'],
    secret: true,
  },
  {
    name: 'EMQ_ANALYTICS',
    kind: { type: 'binding', what: 'analytics-engine' },
    meaning: 'when bound (`[[analytics_engine_datasets]]`), the Worker writes data points per request and script verdict (docs/operations.md)',
    apps: ['worker'],
    secret: false,
  },

  // the gateway
  {
    name: 'EMQ_GATEWAY_TOKENS',
    kind: { type: 'scoped-tokens' },
    required: 'by `emq gateway` (`npm start` makes its own)',
    meaning:
      "`scope:token,...` (tokens of 16+ characters), scope `admin` (any command), `producer` (PING, and EVALSHA/EVAL of this project's scripts, except its control scripts) or `control` (all a producer may, and the control scripts: for a producer whose EMQ_TOKENS grant `control`)",
    apps: ['gateway'],
    secret: true,
  },
  {
    name: 'EMQ_GATEWAY_HOST',
    kind: { type: 'text', what: 'host' },
    default: '127.0.0.1',
    meaning: 'where the gateway listens',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_PORT',
    kind: { type: 'whole', min: 0, max: 65_535, unit: 'port' },
    default: 8079,
    meaning: "the gateway's port (0 picks a free one; `npm start` defaults to 0)",
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_TLS_CERT',
    kind: { type: 'text', what: 'path' },
    meaning:
      'the path of a PEM certificate chain: with EMQ_GATEWAY_TLS_KEY (both or neither) the gateway serves HTTPS; a file that cannot be read, is not PEM, or a key that does not match stops the start',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_TLS_KEY',
    kind: { type: 'text', what: 'path' },
    meaning: 'the path of its unencrypted PEM private key',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_MAX_BODY',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'bytes' },
    default: 8 * MiB,
    meaning: 'request body cap (413 as it streams in, after the token is checked)',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_PRODUCER_MAX_BODY',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'bytes' },
    default: 2 * MiB,
    meaning:
      "a producer token's body cap, never above EMQ_GATEWAY_MAX_BODY: its largest honest request is one payload or a REST pipeline, 1 MiB each by default (raise it with the producer's EMQ_MAX_PAYLOAD_BYTES)",
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_MAX_PIPELINE',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'count' },
    default: 10_000,
    meaning: 'commands per pipeline or transaction, counted before the body is parsed',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_ADMIN_MAX_ARGS',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'count' },
    default: 100_000,
    meaning:
      "elements (command names and arguments, a pipeline's commands too) in one admin request, counted before the body is parsed; a producer token's caps are its largest honest calls' (a flow of 1,000 children: 4,009 in one command; 17,000 in a pipeline), PING with no arguments",
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_TIMEOUT_MS',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'ms' },
    default: 5_000,
    meaning: "one Valkey command's budget",
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_WAIT_MAX_MS',
    kind: { type: 'whole', min: 1, max: Number.MAX_SAFE_INTEGER, unit: 'ms' },
    default: 1_000,
    meaning:
      'the longest WAIT an Emq-Wait request may ask for (a longer one is cut to it); set, below EMQ_GATEWAY_TIMEOUT_MS (checked at start); unset, at most half of it',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_GATEWAY_QUERY_TOKEN',
    kind: { type: 'switch' },
    default: false,
    meaning: '1: also accept a token in the URL, `?_token=` (URLs end up in proxy and access logs); otherwise a request carrying `_token` gets 401',
    apps: ['gateway', 'dev'],
    secret: false,
  },
  ...limits('EMQ_GATEWAY', ['gateway', 'dev']),

  // the console
  {
    name: 'EMQ_CONSOLE_PRODUCER_URL',
    kind: { type: 'gateway-url' },
    required: 'by `emq console` (`npm start` gives its Worker)',
    meaning:
      'the producer API the console reads and acts through (the Worker, or `emq producer`); the signed-in token is sent to it, so plain http:// only on loopback',
    apps: ['console'],
    secret: false,
  },
  {
    name: 'EMQ_CONSOLE_HOST',
    kind: { type: 'text', what: 'host' },
    default: '127.0.0.1',
    meaning: 'where the console listens',
    apps: ['console', 'dev'],
    secret: false,
  },
  {
    name: 'EMQ_CONSOLE_PORT',
    kind: { type: 'whole', min: 0, max: 65_535, unit: 'port' },
    default: 8786,
    meaning: "the console's port (0 picks a free one)",
    apps: ['console', 'dev'],
    secret: false,
  },
  ...limits('EMQ_CONSOLE', ['console', 'dev']),

  // npm start
  {
    name: 'EMQ_DEV_TOKEN',
    kind: { type: 'text', what: 'token', minLength: 16 },
    meaning:
      'the dev token `npm start` allows every queue and every capability (its EMQ_TOKENS entry says `"rawPrefixes": true` and `"can": ["enqueue", "read", "control"]`; at least 16 characters, like every EMQ_TOKENS token); unset, a fresh one is made. An EMQ_TOKENS given to `npm start` joins it (to try a token that lacks a capability). Every other EMQ_* variable reaches the Worker as a var',
    apps: ['dev'],
    secret: true,
  },
];

const byName = new Map(VARIABLES.map((v) => [v.name, v]));

/** The table's entry; throws (a programming error) for a name it lacks. */
export function variable(name: string): Variable {
  const v = byName.get(name) ?? (/^EMQ_REST_TOKEN_[A-Z0-9_]+$/.test(name) ? byName.get('EMQ_REST_TOKEN_<REGION>') : undefined);
  if (!v) throw new Error(`${name} is not in the table of variables (shared/config/variables.ts)`);
  return v;
}
