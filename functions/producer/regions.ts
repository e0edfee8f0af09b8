// Home regions: which region's gateway (so which Valkey) takes a queue's jobs. The vars come
// from regions.json through scripts/regions.mjs, one wrangler environment per region:
//   EMQ_REGION               this Worker's region (answered as the Emq-Region header)
//   EMQ_HOME_REGIONS         {"<queue>" | "<prefix>*" | "*": "<region>"}: each queue's home
//   EMQ_REGION_URLS          {"<region>": "<gateway URL>"}: the other regions' gateways named there
//   EMQ_REST_TOKEN_<REGION>  secret, optional: a producer token of that region's gateway
//                            (REGION upper-cased, '-' as '_'); else EMQ_REST_TOKEN
// A queue's home is its exact entry, else its longest matching prefix, else this region, so
// every Worker sends one queue's jobs to one Valkey. This region's gateway is EMQ_REST_URL.
import { validateQueue } from '../../shared/index.js';
import type { Vars } from './config.js';

export interface Regions {
  /** This Worker's region; undefined when the deployment has no regions. */
  local: string | undefined;
  /** The region that takes the queue's jobs: its home, or this one. */
  homeOf(queue: string): string | undefined;
  /** Where a region's jobs go; throws, naming the variables, when they are not set. */
  gatewayOf(region: string | undefined): { url: string; token: string };
}

// lowercase words joined by single '-': a wrangler environment and a Worker name, and maps
// one-to-one onto the secret's EMQ_REST_TOKEN_<REGION> suffix
const REGION_RULE = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/**
 * Throws, naming the variable (a URL holds no secret, but is not repeated either), unless
 * `url` is https:// (plain http:// only on loopback, for local runs) with no credentials,
 * query or fragment: a gateway's token must never cross a network in the clear.
 */
export function checkGatewayUrl(name: string, url: string): void {
  if (!URL.canParse(url)) throw new Error(`${name} is not a URL`);
  const u = new URL(url);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.test(u.hostname))) {
    throw new Error(`${name} must be an https:// URL (plain http:// only on loopback): the gateway token must not cross a network in the clear`);
  }
  if (u.username || u.password || u.search || u.hash) throw new Error(`${name} must carry no credentials, query or fragment: tokens are secrets (EMQ_REST_TOKEN)`);
}

/** The secret holding a producer token of that region's gateway, e.g. EMQ_REST_TOKEN_EU_WEST. */
export const tokenSecretOf = (region: string) => `EMQ_REST_TOKEN_${region.toUpperCase().replace(/-/g, '_')}`;

function jsonObject(vars: Vars, name: string): Record<string, unknown> {
  const text = vars[name];
  if (text === undefined || text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${name} is not valid JSON: expected an object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${name} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** Reads the region vars; an error names the variable and the entry (none of them is secret). */
export function regionsFrom(vars: Vars): Regions {
  const local = vars.EMQ_REGION || undefined;
  if (local !== undefined && !REGION_RULE.test(local)) throw new Error(`EMQ_REGION=${JSON.stringify(local)} is not a region name (lowercase letters, digits and single '-')`);

  const urls = new Map<string, string>();
  for (const [region, url] of Object.entries(jsonObject(vars, 'EMQ_REGION_URLS'))) {
    if (!REGION_RULE.test(region)) throw new Error(`EMQ_REGION_URLS: ${JSON.stringify(region)} is not a region name`);
    if (typeof url !== 'string') throw new Error(`EMQ_REGION_URLS["${region}"] must be an https:// URL`);
    checkGatewayUrl(`EMQ_REGION_URLS["${region}"]`, url);
    urls.set(region, url);
  }

  const exact = new Map<string, string>();
  const prefixes: Array<[prefix: string, region: string]> = [];
  for (const [pattern, region] of Object.entries(jsonObject(vars, 'EMQ_HOME_REGIONS'))) {
    if (local === undefined) throw new Error('EMQ_HOME_REGIONS is set but EMQ_REGION is not: a Worker must know its own region');
    if (typeof region !== 'string' || (region !== local && !urls.has(region))) {
      throw new Error(`EMQ_HOME_REGIONS["${pattern}"] names region ${JSON.stringify(region)}, which is neither EMQ_REGION nor in EMQ_REGION_URLS`);
    }
    const stem = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
    try {
      if (stem !== '' || stem === pattern) validateQueue(stem);
    } catch (err) {
      throw new Error(`EMQ_HOME_REGIONS: "${pattern}" is not a queue, a prefix ending in *, or *: ${(err as Error).message}`);
    }
    if (stem === pattern) exact.set(pattern, region);
    else prefixes.push([stem, region]);
  }
  prefixes.sort((a, b) => b[0].length - a[0].length); // the longest prefix wins

  return {
    local,
    homeOf: (queue) => exact.get(queue) ?? prefixes.find(([p]) => queue.startsWith(p))?.[1] ?? local,
    gatewayOf(region) {
      const token = (region && vars[tokenSecretOf(region)]) || vars.EMQ_REST_TOKEN;
      if (region === undefined || region === local) {
        if (!vars.EMQ_REST_URL || !token) throw new Error('EMQ_REST_URL and EMQ_REST_TOKEN must both be set');
        checkGatewayUrl('EMQ_REST_URL', vars.EMQ_REST_URL);
        return { url: vars.EMQ_REST_URL, token };
      }
      const url = urls.get(region);
      if (!url) throw new Error(`no gateway for region "${region}" in EMQ_REGION_URLS`);
      if (!token) throw new Error(`set ${tokenSecretOf(region)} or EMQ_REST_TOKEN: region "${region}" has no producer token`);
      return { url, token };
    },
  };
}
