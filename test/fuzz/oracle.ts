// The oracle: each case is a Plan (a request and what it must answer), run with Valkey up
// (runUp) or down (runDown), every answer tallied per endpoint and phase.
//
// Properties, checked on every case:
//  (a) no 5xx but a 503, and a 503 only while Valkey is down (then with Retry-After);
//  (b) a refusal writes nothing: after every 4xx the keyspace is unchanged, by Valkey's own
//      change counter (INFO persistence rdb_changes_since_last_save: every write command bumps
//      it, a value written over itself included; a read, a refused script, a script load do
//      not; this server never saves, so it never resets) and DBSIZE: O(1) a case, where a
//      digest of the data (DEBUG DIGEST) costs ~100 ms once the fuzz has written 50 MB. Only
//      an admin-token gateway call may write and still answer 4xx (a script that errors
//      after a write): there, (a) and (c) only;
//  (c) the Worker and the gateway never die: the gateway child has not exited after any
//      case, and both answer /healthz (the gateway PING too) after every run;
//  and every answer is the one predicted: each case carries an oracle (the status and
//  problem code where the request decides it, a model of the jobs, keys and deliveries
//  written so far) and every 2xx is checked against Valkey (a 201's row holds the exact
//  payload bytes; a duplicate writes nothing; a webhook envelope gives the exact body back).
import { ID_CEILING } from '../../shared/ids.js';
import { answerOf, type Answer } from '../support/answer.js';
import { model, type Place } from './model.js';
import { RUNS, SEED, admin, adminBack, gw, last, resnap, same } from './setup.js';

// a job id: a 14-byte branded id (base62 payload at most 2^63 - 1) of namespace JOB
const isJobId = (id: string) => /^JOB[0-9A-Za-z]{11}$/.test(id) && id.slice(3) <= ID_CEILING;
export const ID_RULE = { test: isJobId };
export const QUEUE_RULE = /^[A-Za-z0-9._-]{1,128}$/;
export const KEY_RULE = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;
export const B64_RULE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// ---------------------------------------------------------------- HTTP

export interface Req {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body?: Uint8Array | undefined;
}
type Ans = Answer;

function show(req: Req): string {
  const body = req.body
    ? `${req.body.length} bytes: ${JSON.stringify(Buffer.from(req.body.subarray(0, 120)).toString('latin1'))}${req.body.length > 120 ? '…' : ''}`
    : 'no body';
  return `${req.method} ${req.path.length > 300 ? `${req.path.slice(0, 300)}…` : req.path}\n    headers: ${JSON.stringify(req.headers)}\n    body: ${body}`;
}

/** The answer, or undefined when fetch will not even build the request (then the case is skipped). */
async function send(base: string, req: Req): Promise<Ans | undefined> {
  let request: Request;
  try {
    const headers = new Headers();
    for (const [k, v] of req.headers) headers.append(k, v);
    request = new Request(base + req.path, {
      method: req.method,
      headers,
      ...(req.body ? { body: req.body as NonNullable<RequestInit['body']> } : {}),
      signal: AbortSignal.timeout(60_000),
    });
  } catch {
    return undefined;
  }
  let res: Response;
  try {
    res = await fetch(request);
  } catch (err) {
    throw new Error(`no HTTP answer (${(err as Error).message}: ${String((err as { cause?: unknown }).cause)})\n    ${show(req)}`);
  }
  return answerOf(res);
}

/** Fetch strips leading and trailing whitespace from header values. */
export const trimHttp = (v: string) => v.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');

/** Whether the path reaches the server as written (no dot segments resolved, nothing re-escaped). */
export function intact(path: string): boolean {
  const [p] = path.split('?');
  return new URL(`http://x${path}`).pathname === p;
}

/** A route parameter as the app decodes it; undecodable escapes stay (never a valid name then). */
export function param(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return `%undecodable:${seg}`;
  }
}

// ---------------------------------------------------------------- counting

export type Phase = 'up' | 'down' | 'restarted' | 'admin';
const PHASES: Phase[] = ['up', 'down', 'restarted', 'admin'];
const counts = new Map<string, { tried: Record<Phase, number>; skipped: number; statuses: Map<number, number> }>();
function tally(label: string, phase: Phase, status: number | undefined) {
  let c = counts.get(label);
  if (!c) counts.set(label, (c = { tried: { up: 0, down: 0, restarted: 0, admin: 0 }, skipped: 0, statuses: new Map() }));
  if (status === undefined) c.skipped++;
  else {
    c.tried[phase]++;
    c.statuses.set(status, (c.statuses.get(status) ?? 0) + 1);
  }
}
export const statusesOf = (prefix: string) => {
  const out = new Map<number, number>();
  for (const [label, c] of counts) if (label.startsWith(prefix)) for (const [s, n] of c.statuses) out.set(s, (out.get(s) ?? 0) + n);
  return out;
};

// ---------------------------------------------------------------- plans: a request and its oracle

export interface Plan {
  label: string;
  req: Req;
  /** The status the request itself decides (Valkey up); undefined: any but a 5xx. */
  status?: number | undefined;
  /** Alternatives to `status` when Valkey decides between them. */
  statuses?: number[] | undefined;
  /**
   * A refusal Valkey decides mid-batch (some items failed) while the others wrote: the problem's
   * `results` says which items landed (refusalCheck checks it).
   */
  partial?: boolean | undefined;
  /** For such a refusal: checks what it says landed (and tells the model). */
  refusalCheck?: ((ans: Answer) => Promise<void>) | undefined;
  /** The problem code, for the producer's refusals. */
  code?: string | undefined;
  /** The index a batch refusal names (the first bad item). */
  index?: number | undefined;
  /** Whether the answer needs Valkey (while it is down: 503); undefined: may or may not. */
  valkey: boolean | undefined;
  /** Whether this answer changes the keyspace: exactly, or 'maybe'. */
  writes: (ans: Ans) => boolean | 'maybe';
  /**
   * A 2xx against Valkey and the model; updates the model. Throws on any inconsistency.
   * `keysAdded`: how many keys the request added (DBSIZE after less before), when measured.
   */
  check?: (ans: Ans, keysAdded?: number) => Promise<void>;
  /** The producer answers problem documents; the gateway {"error"} JSON. */
  service: 'producer' | 'gateway';
}

export class Violation extends Error {}
export function violation(plan: { req: Req }, ans: Ans | undefined, why: string): never {
  throw new Violation(`${why}\n    ${show(plan.req)}\n    answer: ${ans ? `${ans.status} ${ans.text.slice(0, 400)}` : 'none'}`);
}

function gatewayAlive(plan: Plan, ans: Ans | undefined) {
  if (gw.child.exitCode !== null || gw.child.signalCode !== null) {
    violation(plan, ans, `the gateway process exited (${gw.child.exitCode ?? gw.child.signalCode}): ${gw.stderr().slice(-2000)}`);
  }
}

/** The shape every answer must have, whatever the phase. */
function checkShape(plan: Plan, ans: Ans) {
  if (plan.service === 'producer') {
    if (ans.status >= 400 && plan.req.method !== 'HEAD') {
      const p = ans.json as Record<string, unknown> | undefined;
      if (!ans.headers.get('content-type')?.startsWith('application/problem+json')) violation(plan, ans, 'a refusal that is not application/problem+json');
      if (!p || p.status !== ans.status || p.type !== `urn:emq:problem:${String(p.code)}` || typeof p.detail !== 'string') {
        violation(plan, ans, 'a refusal that is not a problem document with this status');
      }
      if (p.code === 'internal' || p.code === 'misconfigured') violation(plan, ans, `an internal error (${String(p.code)})`);
    }
  } else if (plan.req.method !== 'HEAD') {
    if (ans.json === undefined) violation(plan, ans, 'the gateway answered something that is not JSON');
    if (JSON.stringify(ans.json).includes('internal error in the gateway')) violation(plan, ans, 'the gateway hit its internal-error branch');
  }
  if (ans.status === 503 && !/^\d+$/.test(ans.headers.get('retry-after') ?? '')) violation(plan, ans, 'a 503 without Retry-After');
}

/** Requests whose bytes that are not UTF-8 made Valkey's error reply unparseable for glide (admin only). */
const knownPoison: string[] = [];
function carriesNonUtf8(req: Req): boolean {
  const args = pathArgs(req.path.split('?')[0]!);
  return (args !== 'bad' && args.some((a) => !isUtf8(a))) || (req.body !== undefined && !isUtf8(req.body));
}

/**
 * Node answers 431 itself, with no body and before the gateway sees the request, when the
 * request's start line and headers pass its 16 KiB limit (a path-style EVAL carrying a whole
 * script, percent-encoded, can): nothing ran. A 431 for a head well under that is a violation.
 */
const NODE_HEADER_LIMIT = 16 * 1024;
function nodeRefusedHead(plan: Plan, ans: Ans): boolean {
  if (plan.service !== 'gateway' || ans.status !== 431) return false;
  const head = Buffer.byteLength(plan.req.path) + plan.req.headers.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v) + 4, 0);
  if (head < NODE_HEADER_LIMIT - 1024) violation(plan, ans, `a 431 for a request head of ${head} bytes`);
  return true;
}

/** One case with Valkey up: the oracle, the keyspace before and after, the 2xx against Valkey. */
export async function runUp(plan: Plan, base: string, phase: Phase, checkWrites: boolean) {
  const before = last!;
  let ans: Ans | undefined;
  try {
    ans = await send(base, plan.req);
  } finally {
    // first, whatever happens next: the next case (a shrink's too) compares against this
    if (checkWrites) await resnap();
  }
  const after = last!;
  tally(plan.label, phase, ans?.status);
  gatewayAlive(plan, ans);
  if (!ans) return;
  if (nodeRefusedHead(plan, ans)) {
    if (checkWrites && !same(before, after)) violation(plan, ans, 'a 431 wrote');
    return;
  }
  if (phase === 'admin' && ans.status === 503 && /parse error|invalid utf-8/i.test(ans.text) && carriesNonUtf8(plan.req)) {
    // KNOWN, admin token only: Valkey echoes a command's bytes in some errors (a script's
    // error_reply, CONFIG SET of an unknown parameter); glide cannot parse an error reply that
    // is not UTF-8 and reconnects the admin scope's own connection (producers' calls never
    // share it). Unknown commands are refused unsent. A producer token cannot cause it (its
    // scripts escape what they echo: lua/lib/wire.lua shown()).
    knownPoison.push(`${plan.req.method} ${plan.req.path.slice(0, 80)}`);
    await adminBack(10_000);
    return;
  }
  if (ans.status >= 500) violation(plan, ans, ans.status === 503 ? 'a 503 while Valkey is up' : `a ${ans.status}`);
  checkShape(plan, ans);
  const allowed = plan.statuses ?? (plan.status === undefined ? undefined : [plan.status]);
  if (allowed && !allowed.includes(ans.status)) violation(plan, ans, `expected ${allowed.join(' or ')}${plan.code ? ` ${plan.code}` : ''}`);
  if (plan.code && ans.status === plan.status && ans.json?.code !== plan.code) violation(plan, ans, `expected the problem code ${plan.code}`);
  if (plan.index !== undefined && ans.status === 400 && ans.json?.index !== plan.index) violation(plan, ans, `expected the refusal to name item ${plan.index}`);
  if (ans.status < 300 && plan.check) await plan.check(ans, checkWrites ? after.dbsize - before.dbsize : undefined);
  if (ans.status >= 400 && plan.refusalCheck) await plan.refusalCheck(ans);
  if (!checkWrites) return;
  const changed = !same(before, after);
  const writes = ans.status >= 400 ? (plan.partial ? 'maybe' : false) : plan.writes(ans);
  if (ans.status >= 400 && changed && !plan.partial) violation(plan, ans, `a refusal wrote: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  if (writes !== 'maybe' && writes !== changed) violation(plan, ans, `expected ${writes ? 'a write' : 'no write'}, saw ${changed ? 'one' : 'none'}`);
}

/** One case with Valkey down: refusals as usual, everything that needs Valkey 503. */
export async function runDown(plan: Plan, base: string) {
  const ans = await send(base, plan.req);
  tally(plan.label, 'down', ans?.status);
  gatewayAlive(plan, ans);
  if (!ans || nodeRefusedHead(plan, ans)) return;
  if (ans.status >= 500 && ans.status !== 503) violation(plan, ans, `a ${ans.status} while Valkey is down`);
  checkShape(plan, ans);
  if (plan.valkey === true && ans.status !== 503) violation(plan, ans, 'expected 503: this needs Valkey, which is down');
  if (plan.valkey === false) {
    const allowed = plan.statuses ?? (plan.status === undefined ? undefined : [plan.status]);
    if (allowed && !allowed.includes(ans.status)) violation(plan, ans, `expected ${allowed.join(' or ')} (decided without Valkey)`);
  }
  if (plan.valkey === undefined && ans.status < 300 && !/^\/(healthz|readyz)?$/.test(plan.req.path)) {
    violation(plan, ans, 'a 2xx while Valkey is down');
  }
}

export function isUtf8(b: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

/** The gateway's path-style arguments: '' segments dropped, escapes decoded to bytes; 'bad' for a bad escape. */
export function pathArgs(rawPath: string): Buffer[] | 'bad' {
  const out: Buffer[] = [];
  for (const s of rawPath.split('/').filter((x) => x !== '')) {
    if (!s.includes('%')) out.push(Buffer.from(s, 'utf8'));
    else if (/%(?![0-9A-Fa-f]{2})/.test(s)) return 'bad';
    else
      out.push(
        Buffer.from(
          s.replace(/%([0-9A-Fa-f]{2})|([^%]+)/g, (_, hex: string | undefined, text: string | undefined) =>
            hex ? String.fromCharCode(parseInt(hex, 16)) : Buffer.from(text!, 'utf8').toString('latin1'),
          ),
          'latin1',
        ),
      );
  }
  return out;
}

/** Where a 2xx says a job must be: its lane (none: flat) and, when scheduled, the window its run-at score lies in. */
export interface Expect {
  group?: string | undefined;
  /** [earliest, latest] Unix ms: exact for an absolute time, the request's span plus the delay for a relative one. */
  due?: readonly [number, number] | undefined;
}

/**
 * The job's row and where its id is, against what is expected: a row of exactly its fields
 * (`group` only with a lane), state `scheduled` with its id in the schedule at a score in the
 * window (in no pending set), else `pending` with its id at score 0 in its lane (the group
 * on the ring) or in the flat pending set, and in no other. Answers where it is.
 */
export async function checkRow(plan: { req: Req }, ans: Ans, queue: string, id: string, payload: Buffer, expect: Expect = {}): Promise<Place> {
  const { group, due } = expect;
  const row = await admin.hgetall(`emq:{${queue}}:job:${id}`);
  const fields = Object.keys(row).sort().join(',');
  const state = due ? 'scheduled' : 'pending';
  const want = group === undefined ? 'attempts,payload,state' : 'attempts,group,payload,state';
  if (fields !== want || row.state!.toString() !== state || row.attempts!.toString() !== '0' || (group !== undefined && row.group!.toString() !== group)) {
    violation(
      plan,
      ans,
      `the row of ${queue}/${id} is not a ${state} job${group === undefined ? ' without a group' : ` of group ${group}`}: ${JSON.stringify(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v.toString('latin1').slice(0, 80)])))}`,
    );
  }
  if (!row.payload!.equals(payload)) {
    violation(plan, ans, `the stored payload of ${queue}/${id} (${row.payload!.length} bytes) is not the bytes expected (${payload.length})`);
  }
  const key = (suffix: string) => `emq:{${queue}}:${suffix}`;
  const score = async (k: string) => {
    // the wrong-type queue's pending key is a string: no set, so the id is not in it
    const s = await admin.text('ZSCORE', k, id).catch((err: Error) => (/WRONGTYPE/.test(err.message) ? null : Promise.reject(err)));
    return s == null ? null : Number(s);
  };
  const [flat, scheduled, lane] = await Promise.all([
    score(key('pending')),
    score(key('schedule')),
    group === undefined ? null : score(key(`g:${group}:pending`)),
  ]);
  const where = `pending ${flat}, schedule ${scheduled}${group === undefined ? '' : `, lane ${lane}`}`;
  if (due) {
    if (flat !== null || lane !== null || scheduled === null || scheduled < due[0] || scheduled > due[1]) {
      violation(plan, ans, `${id} is not in ${queue}'s schedule alone, at a score in [${due[0]}, ${due[1]}] (${where})`);
    }
    return { group, due: scheduled };
  }
  if (group !== undefined) {
    if (flat !== null || scheduled !== null || lane !== 0) violation(plan, ans, `${id} is not in ${queue}'s lane ${group} alone at score 0 (${where})`);
    // nothing claims here (a limit is at least 1, above the 0 claimed): a lane with a job is
    // on the ring unless PUT …/groups/:group paused it
    const paused = model.laneOf(queue, group).paused;
    if (((await admin.text('LPOS', key('ring'), group)) == null) !== paused)
      violation(plan, ans, `the group ${group} is ${paused ? 'on the ring, though paused' : 'not on the ring'} of ${queue}`);
    return { group };
  }
  if (flat !== 0 || scheduled !== null) violation(plan, ans, `${id} is not in ${queue}'s pending set alone at score 0 (${where})`);
  return {};
}

/** What a job already in the model must look like: where it landed, exactly. */
export const expectOf = (place: Place): Expect => ({ group: place.group, due: place.due === undefined ? undefined : [place.due, place.due] });

// ---------------------------------------------------------------- the tallies, printed when a file is done

/** Cases tried per endpoint and phase, and the statuses they answered: the file's afterAll prints it. */
export function printTallies(file: string) {
  const rows: string[] = [];
  let total = 0;
  let skipped = 0;
  for (const [label, c] of [...counts.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const n = PHASES.reduce((s, p) => s + c.tried[p], 0);
    total += n;
    skipped += c.skipped;
    const statuses = [...c.statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, k]) => `${s}×${k}`)
      .join(' ');
    rows.push(
      `  ${label.padEnd(44)} ${String(n).padStart(6)}  (${PHASES.map((p) => `${p} ${c.tried[p]}`).join(', ')}${c.skipped ? `, ${c.skipped} not sendable by fetch` : ''})\n  ${''.padEnd(44)}         ${statuses}`,
    );
  }
  if (knownPoison.length > 0) {
    rows.push(
      `  known limitation (admin token only): ${knownPoison.length} request(s) whose non-UTF-8 bytes Valkey echoed in an error reply glide cannot parse (it reconnected); e.g. ${knownPoison[0]}`,
    );
  }
  console.log(
    `fuzz, ${file} (FUZZ_RUNS=${RUNS}${SEED === undefined ? '' : `, FUZZ_SEED=${SEED}`}): cases tried per endpoint\n${rows.join('\n')}\n  ${'total'.padEnd(44)} ${String(total).padStart(6)}${skipped ? ` (+${skipped} fetch would not send)` : ''}`,
  );
}
