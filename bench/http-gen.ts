// The HTTP rows' load: wrk, 2 threads, `connections` in a closed loop, one fixed request; its Lua
// counts answers by status (ok: `expectStatus`, and `expectBody`) and a fresh job id replaces
// `idSlot` in each URL (JOB0 + `idTag` + the thread + a base62 counter). CPU: exact, from the shell.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTool } from '../scripts/valkey.js';
import { ID_ALPHABET } from '../shared/ids.js';
import { runTool } from './procs.js';

export interface LoadSpec {
  url: string;
  method?: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
  connections: number;
  ms: number;
  expectStatus: number;
  expectBody?: string;
  idSlot?: string;
  idTag?: string;
}

/** Answers received (`requests`), those ok, the others by kind ("status 500 x3", "timeout x1") and the first; the generator's cores. */
export interface LoadResult {
  seconds: number;
  requests: number;
  ok: number;
  errors: string[];
  firstError?: string | undefined;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
  cores: number | undefined;
}

/** wrk's path, installed when missing; throws when it cannot be. */
export function wrkPath(): string {
  const path = ensureTool('wrk');
  if (!path) throw new Error('no wrk, and it cannot be installed here (Debian and Ubuntu have it: apt-get install wrk)');
  return path;
}

const luaString = (s: string) => `"${[...Buffer.from(s)].map((b) => `\\${b}`).join('')}"`;

function wrkScript(spec: LoadSpec): string {
  // with an id slot: request() builds each request's path, a fresh id in it
  const fresh = spec.idSlot
    ? `
local alphabet = ${luaString(ID_ALPHABET)}
local template = ${luaString(new URL(spec.url).pathname)}
local n = 0
function request()
  local x, digits = n, ""
  for i = 1, 8 do
    local d = x % 62
    digits = string.sub(alphabet, d + 1, d + 1) .. digits
    x = math.floor(x / 62)
  end
  n = n + 1
  local id = prefix .. digits
  return wrk.format(nil, (string.gsub(template, ${luaString(spec.idSlot.replace(/[^A-Za-z0-9]/g, '%$&'))}, id)))
end`
    : '';
  const expect = spec.expectBody === undefined ? '' : ` and body == ${luaString(spec.expectBody)}`;
  return `
wrk.method = "${spec.method ?? 'POST'}"
wrk.body = ${luaString(spec.body)}
${Object.entries(spec.headers)
  .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
  .join('\n')}
local threads = {}
function setup(thread)
  thread:set("prefix", "JOB0" .. ${luaString(spec.idTag ?? '0')} .. string.sub(${luaString(ID_ALPHABET)}, #threads + 1, #threads + 1))
  table.insert(threads, thread)
end
function init(args) ok = 0; bad = {}; first = "" end${fresh}
function response(status, headers, body)
  if status == ${spec.expectStatus}${expect} then ok = ok + 1 else
    bad[status] = (bad[status] or 0) + 1
    if first == "" then first = status .. " " .. string.sub(body or "", 1, 200) end
  end
end
function done(summary, latency, requests)
  local ok, bad, first = 0, {}, ""
  for _, t in ipairs(threads) do
    ok = ok + t:get("ok")
    for s, n in pairs(t:get("bad")) do bad[s] = (bad[s] or 0) + n end
    if first == "" then first = t:get("first") end
  end
  io.write(string.format("\\nBENCH requests %.0f\\n", summary.requests))
  io.write(string.format("BENCH duration_us %.0f\\n", summary.duration))
  io.write(string.format("BENCH ok %.0f\\n", ok))
  for s, n in pairs(bad) do io.write(string.format("BENCH status_%d %.0f\\n", s, n)) end
  for _, k in ipairs({"connect", "read", "write", "timeout"}) do
    io.write(string.format("BENCH err_%s %.0f\\n", k, summary.errors[k]))
  end
  io.write(string.format("BENCH p50_us %.0f\\n", latency:percentile(50)))
  io.write(string.format("BENCH p99_us %.0f\\n", latency:percentile(99)))
  io.write("BENCH first " .. string.gsub(first, "[\\r\\n]", " ") .. "\\n")
end
`;
}

/** One run of wrk; `dir` is a scratch directory (its Lua script). */
export async function runLoad(spec: LoadSpec, dir: string): Promise<LoadResult> {
  const script = join(dir, `load-${process.pid}.lua`);
  writeFileSync(script, wrkScript(spec));
  const seconds = Math.max(1, Math.round(spec.ms / 1000));
  const args = ['-t', '2', '-c', String(spec.connections), '-d', `${seconds}s`, '--timeout', '5s', '-s', script, spec.url];
  const run = await runTool('wrk', wrkPath(), args, spec.ms + 15_000);
  if (run.code !== 0) throw new Error(`wrk exited ${run.code}: ${run.stderr.trim() || run.stdout.trim()}`);
  const values = new Map<string, string>();
  for (const m of run.stdout.matchAll(/^BENCH (\S+) ?(.*)$/gm)) values.set(m[1]!, m[2]!);
  const num = (k: string) => Number(values.get(k) ?? NaN);
  const secs = num('duration_us') / 1e6;
  const errors: string[] = [];
  for (const [k, v] of values) {
    if (k.startsWith('status_')) errors.push(`status ${k.slice(7)} x${v}`);
    if (k.startsWith('err_') && Number(v) > 0) errors.push(`${k.slice(4)} x${v}`);
  }
  return {
    seconds: secs,
    requests: num('requests'),
    ok: num('ok'),
    errors,
    firstError: values.get('first')?.trim() || undefined,
    p50Ms: num('p50_us') / 1000,
    p99Ms: num('p99_us') / 1000,
    cores: run.cpuSeconds !== undefined ? run.cpuSeconds / secs : undefined,
  };
}
