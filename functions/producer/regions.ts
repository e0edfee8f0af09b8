// Home regions: which region's gateway (so which Valkey) takes a queue's jobs. The vars come
// from regions.json through scripts/regions.ts, one wrangler environment per region:
//   EMQ_REGION               this Worker's region (answered as the Emq-Region header)
//   EMQ_HOME_REGIONS         {"<queue>" | "<stem>.*" | "<prefix>*" | "*": "<region>"}: each queue's home
//   EMQ_REGION_URLS          {"<region>": "<gateway URL>"}: the other regions' gateways named there
//   EMQ_REST_TOKEN_<REGION>  secret, optional: a producer token of that region's gateway
//                            (REGION upper-cased, '-' as '_'); else EMQ_REST_TOKEN
// A queue's home is its exact entry, else its longest matching pattern (queue-patterns.ts), else
// this region, so every Worker sends one queue's jobs to one Valkey. This region's gateway is EMQ_REST_URL.
import { REGION_RULE, checkGatewayUrl, gatewayUrl, jsonObject, region as regionName, text, type Vars } from '../../shared/config/parse.js';
import { queueLookup } from './queue-patterns.js';

export interface Regions {
  /** This Worker's region; undefined when the deployment has no regions. */
  local: string | undefined;
  /** The region that takes the queue's jobs: its home, or this one. */
  homeOf(queue: string): string | undefined;
  /** Where a region's jobs go; throws, naming the variables, when they are not set. */
  gatewayOf(region: string | undefined): { url: string; token: string };
}

/** The check every gateway URL passes (shared/config/parse.ts); re-exported for its callers. */
export { checkGatewayUrl };

/** The secret holding a producer token of that region's gateway, e.g. EMQ_REST_TOKEN_EU_WEST. */
export const tokenSecretOf = (region: string) => `EMQ_REST_TOKEN_${region.toUpperCase().replace(/-/g, '_')}`;

/** Reads the region vars; an error names the variable and the entry (none of them is secret). */
export function regionsFrom(vars: Vars): Regions {
  const local = regionName(vars, 'EMQ_REGION');

  const urls = new Map<string, string>();
  for (const [region, url] of Object.entries(jsonObject(vars, 'EMQ_REGION_URLS'))) {
    if (!REGION_RULE.test(region)) throw new Error(`EMQ_REGION_URLS: ${JSON.stringify(region)} is not a region name`);
    if (typeof url !== 'string') throw new Error(`EMQ_REGION_URLS["${region}"] must be an https:// URL`);
    checkGatewayUrl(`EMQ_REGION_URLS["${region}"]`, url);
    urls.set(region, url);
  }

  const homes = Object.entries(jsonObject(vars, 'EMQ_HOME_REGIONS'));
  for (const [pattern, region] of homes) {
    if (local === undefined) throw new Error('EMQ_HOME_REGIONS is set but EMQ_REGION is not: a Worker must know its own region');
    if (typeof region !== 'string' || (region !== local && !urls.has(region))) {
      throw new Error(`EMQ_HOME_REGIONS["${pattern}"] names region ${JSON.stringify(region)}, which is neither EMQ_REGION nor in EMQ_REGION_URLS`);
    }
  }
  const home = queueLookup(homes as Array<[string, string]>, { rawPrefixes: true }, (pattern) => `EMQ_HOME_REGIONS: "${pattern}"`);

  return {
    local,
    homeOf: (queue) => home(queue) ?? local,
    gatewayOf(region) {
      const token = (region && text(vars, tokenSecretOf(region))) || text(vars, 'EMQ_REST_TOKEN');
      if (region === undefined || region === local) {
        const url = vars.EMQ_REST_URL && token ? gatewayUrl(vars, 'EMQ_REST_URL') : undefined;
        if (!url || !token) throw new Error('EMQ_REST_URL and EMQ_REST_TOKEN must both be set');
        return { url, token };
      }
      const url = urls.get(region);
      if (!url) throw new Error(`no gateway for region "${region}" in EMQ_REGION_URLS`);
      if (!token) throw new Error(`set ${tokenSecretOf(region)} or EMQ_REST_TOKEN: region "${region}" has no producer token`);
      return { url, token };
    },
  };
}
