// Measured, not asserted (issue 28): the listings over a private Valkey holding 200 queues of one
// job each and one queue of 10,000 jobs, through `emq producer` over glide and over REST (a
// gateway producer token). Prints the time of a full GET /v1/queues walk (every page) and of
// one GET /v1/queues/{q}/jobs page (the first, and one 5,000 jobs deep), the median of 5 runs;
// asserts only what is right: every queue found, each page's jobs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../scripts/valkey.js';
import { connectGlide } from '../shared/connections/glide.js';
import { enqueue, enqueueMany, mintId } from '../shared/index.js';
import { startGatewayProcess, type GatewayProcess } from './support/gateway.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const TOKEN = 'measure-token-0123456789abcdef';
const QUEUES = Array.from({ length: 200 }, (_, i) => `lm.q${String(i).padStart(3, '0')}`);
const BIG = 'lm.big';
const JOBS = 10_000;
const RUNS = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

describe('the listings, measured: 200 queues and 10,000 jobs in one', () => {
  let server: RunningServer;
  let gateway: GatewayProcess;
  const producers: Array<[string, ProducerProcess]> = [];

  beforeAll(async () => {
    server = await startServer();
    const conn = await connectGlide(server.url);
    for (const q of QUEUES) await enqueue(conn, q, mintId(), 'x');
    for (let i = 0; i < JOBS; i += 1_000)
      await enqueueMany(
        conn,
        BIG,
        Array.from({ length: 1_000 }, () => ({ payload: 'payload-of-some-bytes' })),
      );
    await conn.close();
    gateway = await startGatewayProcess(server.url);
    const tokens = JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true, can: ['read'] }]);
    producers.push(['glide', await startProducerProcess({ VALKEY_URL: server.url, EMQ_TOKENS: tokens })]);
    producers.push(['rest (producer token)', await startProducerProcess({ EMQ_REST_URL: gateway.url, EMQ_REST_TOKEN: gateway.producer, EMQ_TOKENS: tokens })]);
  }, 120_000);
  afterAll(async () => {
    for (const [, p] of producers) await p.stop();
    await gateway?.stop();
    await server?.stop();
  });

  const get = async (base: string, path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it('prints a full queue walk and a jobs page, over glide and REST', async () => {
    const lines: string[] = [];
    for (const [name, p] of producers) {
      for (const count of [1_000, 5_000]) {
        const times: number[] = [];
        let pages = 0;
        for (let run = 0; run < RUNS; run++) {
          const started = performance.now();
          const seen = new Set<string>();
          let cursor: string | null = null;
          pages = 0;
          do {
            const page = await get(p.url, `/v1/queues?count=${count}${cursor === null ? '' : `&cursor=${cursor}`}`);
            for (const q of page.queues as Array<{ name: string }>) seen.add(q.name);
            cursor = page.cursor as string | null;
            pages++;
          } while (cursor !== null);
          times.push(performance.now() - started);
          expect(seen).toEqual(new Set([...QUEUES, BIG]));
        }
        lines.push(
          `${name}: GET /v1/queues full walk, count=${count}: ${pages} pages, median ${ms(median(times))} (min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))})`,
        );
      }
      const deep = await (async () => {
        // the cursor 5,000 jobs deep: 50 pages of 100
        let cursor: string | null = null;
        for (let i = 0; i < 50; i++)
          cursor = (await get(p.url, `/v1/queues/${BIG}/jobs?limit=100${cursor === null ? '' : `&cursor=${cursor}`}`)).cursor as string;
        return cursor!;
      })();
      for (const [label, query] of [
        ['first page, limit 50', 'limit=50'],
        ['first page, limit 100', 'limit=100'],
        ['5,000 deep, limit 50', `limit=50&cursor=${deep}`],
      ] as const) {
        const times: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          const started = performance.now();
          const page = await get(p.url, `/v1/queues/${BIG}/jobs?${query}`);
          times.push(performance.now() - started);
          expect((page.jobs as unknown[]).length).toBe(label.includes('50') ? 50 : 100);
        }
        lines.push(`${name}: GET /v1/queues/${BIG}/jobs ${label}: median ${ms(median(times))} (min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))})`);
      }
    }
    console.log(`[measure] ${QUEUES.length + 1} queues, ${JOBS} jobs in ${BIG}, ${RUNS} runs each\n${lines.join('\n')}`);
  });
});
