// Scripts with flags the server does not know, through the gateway in front of a Valkey Cluster
// (3 primaries): a mapping learned once holds on every node (the server's SHA-1 is the text's),
// and a node that lost the script answers NOSCRIPT, which @upstash/ratelimit answers with the
// text, loaded again on that node. SCRIPT LOAD, EXISTS and FLUSH go to every primary.
import { createHash } from 'node:crypto';
import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';
import { describe, expect, it } from 'vitest';
import { withoutUnknownFlags } from '../functions/gateway/script-flags.js';
import { freshQueue } from './support/admin.js';
import { onCluster } from './support/cluster-harness.js';
import { command } from './support/gateway-calls.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

describe('script flags through the gateway, on a Valkey Cluster', { timeout: 60_000 }, () => {
  const h = onCluster();
  const run = (args: unknown[]) => command(h.gateway, h.gateway.admin, args);

  it("SCRIPT LOAD answers the client's SHA-1 and loads on every primary; EVALSHA runs it by any key's node; SCRIPT FLUSH forgets it", async () => {
    const text = `#!lua flags=allow-key-locking\n-- ${freshQueue('c')}\nreturn KEYS[1]`;
    expect((await run(['SCRIPT', 'LOAD', text])).json).toEqual({ result: sha1(text) });
    const servers = sha1(withoutUnknownFlags(text) as string);
    for (const node of h.nodes) expect(await node.call('SCRIPT', 'EXISTS', servers)).toEqual([true]);
    // keys spread over the slots: every node runs it
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    for (const k of keys) expect((await run(['EVALSHA', sha1(text), 1, k])).json).toEqual({ result: k });
    expect((await run(['SCRIPT', 'EXISTS', sha1(text)])).json).toEqual({ result: [1] });
    expect((await run(['SCRIPT', 'FLUSH'])).json).toEqual({ result: 'OK' });
    for (const node of h.nodes) expect(await node.call('SCRIPT', 'EXISTS', servers)).toEqual([false]);
    expect((await run(['EVALSHA', sha1(text), 1, 'k0'])).json.error).toMatch(/^NOSCRIPT/);
  });

  // a fixed window's call names one key (the identifier's window), so identifiers spread over the nodes
  it('@upstash/ratelimit fixed window across the nodes, one node flushed behind the gateway: every limit still counts right', async () => {
    const redis = new Redis({ url: h.gateway.url, token: h.gateway.admin });
    const prefix = `rl:${freshQueue('c')}`;
    const rl = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(2, '60 s'), prefix, ephemeralCache: false, timeout: 0 });
    const users = Array.from({ length: 9 }, (_, i) => `user${i}`);
    const round = () => Promise.all(users.map(async (u) => (await rl.limit(u)).success));
    expect(await round()).toEqual(users.map(() => true));
    const holding = await Promise.all(h.nodes.map(async (n) => ((await n.call('KEYS', `${prefix}:*`)) as unknown[]).length));
    expect(holding.filter((n) => n > 0).length).toBeGreaterThan(1);
    await h.nodes[0]!.call('SCRIPT', 'FLUSH');
    expect(await round()).toEqual(users.map(() => true));
    await h.nodes[1]!.call('SCRIPT', 'FLUSH');
    expect(await round()).toEqual(users.map(() => false));
    for (const u of users) expect(await rl.getRemaining(u)).toMatchObject({ remaining: 0 });
  });

  // a sliding window reads two windows' keys, and resetUsedTokens SCANs one node: both need the
  // limiter's keys in one slot, which a hash tag in the prefix gives (as on any Redis Cluster)
  it('@upstash/ratelimit sliding window with a hash-tagged prefix: limit, getRemaining and resetUsedTokens, after SCRIPT FLUSH on every node', async () => {
    const redis = new Redis({ url: h.gateway.url, token: h.gateway.admin });
    const rl = new Ratelimit({ redis, limiter: Ratelimit.slidingWindow(2, '60 s'), prefix: `rl:{${freshQueue('c')}}`, ephemeralCache: false, timeout: 0 });
    const successes = async (n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push((await rl.limit('u')).success);
      return out;
    };
    expect(await successes(1)).toEqual([true]);
    for (const node of h.nodes) await node.call('SCRIPT', 'FLUSH');
    expect(await successes(2)).toEqual([true, false]);
    expect(await rl.getRemaining('u')).toMatchObject({ remaining: 0 });
    for (const node of h.nodes) await node.call('SCRIPT', 'FLUSH');
    await rl.resetUsedTokens('u');
    expect(await successes(1)).toEqual([true]);
  });
});
