// glide's typed replies back into the server's RESP2 replies, the shapes Upstash clients read.
// glide retypes the replies of some commands, chosen by the command's name and by options
// (WITHSCORES, in any case, anywhere among the arguments), whatever the protocol: maps
// for stream entries and score lists, doubles for scores, distances and coordinates, booleans
// for 1 and 0, sets for set members. The gateway's connections speak RESP2, so every other reply
// arrives as the server sent it; this undoes glide's retyping for the commands it retypes
// (glide-core's expected_type_for_cmd, as of @valkey/valkey-glide 2.5.2).
import type { Arg, Reply } from '../../shared/connection.js';
import { CONTAINERS, nameOf } from './args.js';
import { type DoubleStyle, distanceText, humanText, scoreText, sumText } from './doubles.js';

/** An argument equal to `word` in any ASCII case: how glide looks for an option, and the server reads one. */
function has(args: readonly Arg[], word: string): boolean {
  return args.some((a) => nameOf(a) === word);
}

const utf8 = new TextEncoder();

/** A number's text as the bulk string the server sent: bytes, like every other bulk string (base64 encodes it). */
const bulk = (text: string): Uint8Array => utf8.encode(text);

interface Entry {
  key: unknown;
  value: unknown;
}

const isEntry = (item: unknown): item is Entry => item !== null && typeof item === 'object' && 'key' in item && 'value' in item;

/**
 * Anything glide made of a RESP2 reply without knowing the command: maps (glide's [{key,
 * value}] records) flattened to field/value lists, booleans as 1 and 0, sets as lists.
 */
export function plain(value: unknown): Reply {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Set) return plain([...value]);
  if (Array.isArray(value)) {
    const out: Reply[] = [];
    for (const item of value) {
      if (isEntry(item)) out.push(plain(item.key), plain(item.value));
      else out.push(plain(item));
    }
    return out;
  }
  return value as Reply;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const records = (value: unknown): Entry[] => list(value).filter(isEntry);

/** Stream entries: glide's map of id → [[field, value], ...] back to [[id, [field, value, ...]], ...]. */
function entries(value: unknown): Reply {
  if (value === null) return null;
  return records(value).map(({ key, value: fields }) => [plain(key), fields === null ? null : plain(list(fields).flat())]);
}

/** XREAD and XREADGROUP: [[stream, entries], ...], or null when nothing came. */
function streams(value: unknown): Reply {
  if (value === null) return null;
  return records(value).map(({ key, value: found }) => [plain(key), entries(found)]);
}

export function serverForm(args: readonly Arg[], value: unknown, style: DoubleStyle): Reply {
  if (value === null || value === undefined) return null;
  const first = nameOf(args[0]);
  const name = CONTAINERS.has(first) && args.length > 1 ? `${first} ${nameOf(args[1])}` : first;
  const score = (d: unknown): Reply => (typeof d === 'number' ? bulk(scoreText(d, style)) : plain(d));
  const scored = (pairs: unknown): Reply[] => {
    // a map of member → score (glide's records), or [[member, score], ...]
    const out: Reply[] = [];
    for (const p of list(pairs)) {
      if (isEntry(p)) out.push(plain(p.key), score(p.value));
      else if (Array.isArray(p)) out.push(plain(p[0]), score(p[1]));
    }
    return out;
  };
  switch (name) {
    case 'INCRBYFLOAT':
    case 'HINCRBYFLOAT':
      return typeof value === 'number' ? bulk(sumText(value)) : plain(value);
    case 'ZINCRBY':
    case 'ZSCORE':
      return score(value);
    case 'ZADD':
      return has(args, 'INCR') ? score(value) : plain(value);
    case 'GEODIST':
      return typeof value === 'number' ? bulk(distanceText(value)) : plain(value);
    case 'ZMSCORE':
      return list(value).map(score);
    case 'ZPOPMIN':
    case 'ZPOPMAX':
      return scored(value);
    case 'ZRANGE':
    case 'ZDIFF':
    case 'ZUNION':
    case 'ZINTER':
    case 'ZRANDMEMBER':
      return has(args, 'WITHSCORES') ? scored(value) : plain(value);
    case 'ZRANK':
    case 'ZREVRANK': {
      if (!has(args, 'WITHSCORE')) return plain(value);
      const [rank, s] = list(value);
      return [plain(rank), score(s)];
    }
    case 'ZMPOP':
    case 'BZMPOP': {
      // RESP2: [key, [[member, score], ...]]
      const [key, members] = list(value);
      const flat = scored(members);
      const pairs: Reply[] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
      return [plain(key), pairs];
    }
    case 'GEOPOS':
      return list(value).map((xy) => (Array.isArray(xy) ? xy.map((c) => (typeof c === 'number' ? bulk(humanText(c)) : plain(c))) : null));
    case 'GEOSEARCH':
      return ['WITHDIST', 'WITHHASH', 'WITHCOORD'].some((w) => has(args, w)) ? geoMembers(args, value) : plain(value);
    case 'HRANDFIELD':
      return has(args, 'WITHVALUES') ? plain(list(value).flat()) : plain(value);
    case 'XRANGE':
    case 'XREVRANGE':
      return entries(value);
    case 'XCLAIM':
      return has(args, 'JUSTID') ? plain(value) : entries(value);
    case 'XAUTOCLAIM': {
      if (has(args, 'JUSTID')) return plain(value);
      const [cursor, claimed, ...rest] = list(value);
      return [plain(cursor), entries(claimed), ...rest.map(plain)];
    }
    case 'XREAD':
    case 'XREADGROUP':
      return streams(value);
    default:
      return plain(value);
  }
}

/**
 * GEOSEARCH with WITHDIST, WITHHASH or WITHCOORD: glide nests each match as [member, [dist,
 * hash, [lon, lat]]] with numbers; the server sent [member, "dist", hash, ["lon", "lat"]],
 * with whichever of the three were asked for (in any case), in that order.
 */
function geoMembers(args: readonly Arg[], value: unknown): Reply {
  const withDist = has(args, 'WITHDIST');
  const withHash = has(args, 'WITHHASH');
  return list(value).map((match) => {
    const [member, rest] = list(match);
    const fields = list(rest);
    const out: Reply[] = [plain(member)];
    let i = 0;
    if (withDist) {
      const d = fields[i++];
      out.push(typeof d === 'number' ? bulk(distanceText(d)) : plain(d));
    }
    if (withHash) out.push(plain(fields[i++]));
    for (const xy of fields.slice(i)) out.push(list(xy).map((c) => (typeof c === 'number' ? bulk(humanText(c)) : plain(c))));
    return out;
  });
}
