// The fuzz of bodies their clients abort (finding 7, second review): any route of the
// producer Worker and of the gateway, a declared length or chunked, any prefix of the body
// sent, then the socket closed. Never a write, never a 5xx or a stack on the gateway (its
// line: 499 client_closed), and both stay up. Setup: ./setup.ts.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortMidBody } from '../support/abort.js';
import { ALL, RUNS, admin, alive, budget, gw, last, params, producerUrl, resnap, same, startParts, stopParts } from './setup.js';

const linesOf = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const producerPaths = ['/v1/queues/fz-abort/jobs', '/v1/queues/fz-abort/batch', '/v1/queues/fz-abort/flows', '/v1/webhooks/gh', '/v1/webhooks/nope'];
const gatewayPaths = ['/', '/pipeline', '/multi-exec', '/evalsha/0000/1/emq:{fz-abort}:pending'];

describe(`fuzz aborted bodies (FUZZ_RUNS=${RUNS})`, () => {
  beforeAll(startParts, 120_000);
  afterAll(async () => {
    expect(await stopParts()).toBe(0);
  }, 60_000);

  it(
    'a body aborted mid-way: nothing written, never a 5xx or a stack, the gateway answers 499 client_closed, both stay up',
    async () => {
      await resnap();
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.record({ to: fc.constant('producer' as const), path: fc.constantFrom(...producerPaths) }),
            fc.record({ to: fc.constant('gateway' as const), path: fc.constantFrom(...gatewayPaths), scope: fc.constantFrom('admin', 'producer') }),
          ),
          fc.boolean(),
          fc.string({ maxLength: 200 }),
          async (target, chunked, prefix) => {
            const gateway = target.to === 'gateway';
            const token = gateway ? ('scope' in target && target.scope === 'admin' ? gw.admin : gw.producer) : ALL;
            const [seen, stderr] = [linesOf(gw.stdout()).length, gw.stderr()];
            await abortMidBody(gateway ? gw.url : producerUrl, target.path, { Authorization: `Bearer ${token}` }, chunked, prefix);
            if (gateway) {
              const lineOf = () => linesOf(gw.stdout()).slice(seen)[0];
              for (let i = 0; i < 100 && !lineOf(); i++) await sleep(20);
              expect(lineOf()).toMatchObject({ status: 499, code: 'client_closed' });
            } else await sleep(100);
            const fresh = linesOf(gw.stdout()).slice(seen);
            expect(fresh.filter((l) => Number(l.status) >= 500)).toEqual([]);
            expect(gw.stderr()).toBe(stderr);
            const before = last!;
            expect(same(before, await resnap()), `${target.to} ${target.path}: a write`).toBe(true);
          },
        ),
        params(RUNS),
      );
      expect(await admin.call('DBSIZE')).toBeDefined();
      await alive('after the aborts');
    },
    budget(RUNS, RUNS * 500),
  );
});
