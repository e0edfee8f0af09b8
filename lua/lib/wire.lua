--[[
  lib/wire.lua: the helpers every script shares. Not a script: scripts/gen-scripts.mjs
  inlines the helpers below this header that a script uses (names, or a helper it uses
  names) where it has the line `--#include lib/wire.lua`, so the text sent to Valkey (and
  its SHA-1) is self-contained. A library includes nothing, and its top level is local
  definitions only.
  Each name is a local of the including script: a script must not define it again.

  Every helper reads, none writes: a script runs all its gates before its first write,
  because a script that errors after a write does not roll back.

  fail(text)        redis.error_reply: the reply is an error whose first word (EMQKIND,
                    EMQLAYOUT, EMQCONFLICT, WRONGTYPE) is the class clients dispatch on.
                    error() would prefix the script's position instead.
  shown(s)          s as printable ASCII for an error's text: at most its first 200 bytes,
                    every byte outside 0x20..0x7e as \xHH, then '...(<n> bytes)' when cut.
                    An error reply that is not UTF-8 makes glide drop its connection, and
                    with it every request in flight on that connection; the cut keeps a
                    reply short whatever a key holds, and bounds the work (gsub runs on the
                    cut only: over a 7 MB key it took 1.76 s).
  typeof(k)         the type of key k: none, string, list, set, zset, hash, stream.
  wrong(k, t, want) the WRONGTYPE error: 'WRONGTYPE <shown k> holds a <t>, not a <want>'.
  is_job(s)         the kind gate: s is a string that starts with JOB. Nothing more: the
                    branded check is branded(s), answered with EMQLAYOUT, not EMQKIND.
  branded(s)        the library's BrandedId.valid?: a string of 14 bytes, 3 capitals (the
                    namespace) and 11 base62 digits no greater than AzL8n0Y58m7 (2^63 - 1).
                    The digits are compared byte by byte: in ASCII 0-9 < A-Z < a-z is the
                    base62 order, while Lua's < on strings is strcoll, the server's locale's.
  valid_name(s, n)  s is a string of 1 to n bytes of A-Z a-z 0-9 . _ - (dedup ids: 255).
  valid_queue(s)    the queue-name rule: valid_name(s, 128), and not emq (the library's).
  whole(s, lo, hi)  s in canonical decimal (digits only: no sign, space, exponent or hex,
                    no leading zero) read as a number from lo to hi, else nil. At most 15
                    digits, so the number is exact (below 2^53); tonumber alone accepts
                    ' 0x1A', '1e3' and '-0'.

  Patterns name their ranges (A-Za-z0-9), never %w or %a: those follow the locale too.
]]

local fail = redis.error_reply

local function shown(s)
  local t = string.gsub(string.sub(s, 1, 200), '[^ -~]', function(c) return string.format('\\x%02x', string.byte(c)) end)
  return #s > 200 and t .. '...(' .. #s .. ' bytes)' or t
end

local function typeof(k) return redis.call('TYPE', k)['ok'] end

local function wrong(k, t, want) return fail('WRONGTYPE ' .. shown(k) .. ' holds a ' .. t .. ', not a ' .. want) end

local function is_job(s) return type(s) == 'string' and string.sub(s, 1, 3) == 'JOB' end

local function branded(s)
  if type(s) ~= 'string' or #s ~= 14 or not string.match(s, '^[A-Z][A-Z][A-Z][0-9A-Za-z]+$') then return false end
  for i = 1, 11 do
    local a, b = string.byte(s, i + 3), string.byte('AzL8n0Y58m7', i)
    if a ~= b then return a < b end
  end
  return true
end

local function valid_name(s, n)
  return type(s) == 'string' and #s >= 1 and #s <= n and string.match(s, '^[A-Za-z0-9._%-]+$') ~= nil
end

local function valid_queue(s) return valid_name(s, 128) and s ~= 'emq' end

local function whole(s, lo, hi)
  if type(s) ~= 'string' or #s > 15 or not string.match(s, '^[0-9]+$') or (#s > 1 and string.sub(s, 1, 1) == '0') then return nil end
  local n = tonumber(s)
  if n < lo or n > hi then return nil end
  return n
end
