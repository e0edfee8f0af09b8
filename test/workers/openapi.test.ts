// The Worker serves the OpenAPI document at GET /openapi.json inside workerd: with no token,
// and with no configuration at all (it reaches neither EMQ_TOKENS nor a gateway).
import { expect, it } from 'vitest';
import { openApi } from '../../functions/producer/openapi.js';
import { producerFor } from '../../functions/producer/worker.js';

it('GET /openapi.json answers the document, unconfigured and with no token', async () => {
  const res = await producerFor({}).fetch(new Request('http://producer/openapi.json'), {});
  expect(res.status).toBe(200);
  expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
  const doc = (await res.json()) as { openapi: string; paths: object };
  expect(doc.openapi).toMatch(/^3\.1\./);
  expect(doc).toEqual(JSON.parse(JSON.stringify(openApi())));
  // the same Worker unconfigured refuses what needs configuration
  expect((await producerFor({}).fetch(new Request('http://producer/v1/queues/q/jobs', { method: 'POST', body: 'x' }), {})).status).toBe(500);
});
