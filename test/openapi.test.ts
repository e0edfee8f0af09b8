// The OpenAPI document (functions/producer/openapi.ts) against the app it describes: a valid
// 3.1 document by a maintained validator; exactly the routes Hono has registered; for each
// route, exactly the headers it really reads (recorded as the app runs); every problem code;
// served at GET /openapi.json with no token, in-process and by `emq producer`; and the types
// generated from it (the typed client's check) current. Real answers: openapi-responses.test.ts.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Hono } from 'hono';
import { describe, expect, inject, it } from 'vitest';
import { createProducerApp } from '../functions/producer/hono-app.js';
import { configFrom } from '../functions/producer/config.js';
import { PROBLEM_CODES } from '../functions/producer/problem.js';
import { TYPES_FILE, schemaTypes } from '../scripts/schema-types.js';
import { ConnectionError, mintId } from '../shared/index.js';
import { doc, operations, type Json } from './support/openapi.js';
import { startProducerProcess } from './support/producer.js';

const TOKEN = 'openapi-test-token-0123456789';
const HOOK = { kind: 'hmac', secrets: ['hook-secret-0123456789abcdef'], queue: 'oa-hook', signatureHeader: 'X-Sig', idHeader: 'X-Id', encoding: 'hex' };
const config = configFrom({
  EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true, can: ['enqueue', 'read', 'control'] }]),
  EMQ_SOURCES: JSON.stringify({ hook: HOOK }),
});
// no Valkey here: what a route reads is read before it calls Valkey, which then fails (503)
const down = { run: () => Promise.reject(new ConnectionError('down')), pipeline: () => Promise.reject(new ConnectionError('down')), close: async () => {} };
// as the Worker and emq producer run it: every request has its record (core.ts)
const app = createProducerApp({ config: () => config, connection: () => down });

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator), which refuses a broken copy', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // the validator does look inside: a response without its required description fails
    const broken = structuredClone(doc);
    delete broken.paths['/healthz'].get.responses['200'].description;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('documents exactly the routes the Hono app registered (app.routes), each method and path', () => {
    // wildcard entries are middleware and the 405 fallback, not routes
    const routes = app.routes.filter((r) => !r.path.includes('*')).map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(routes).toContain('POST /v1/queues/{queue}/flows');
    expect([...new Set(routes)].sort()).toEqual(operations.map((o) => o.key).sort());
    // and each path parameter of a route is declared on it
    for (const { key, path, op } of operations) {
      const declared = (op.parameters as Json[]).map((p) => p.$ref.split('/').pop()).filter((name) => doc.components.parameters[name].in === 'path');
      expect(declared.sort(), key).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
    }
  });

  it('lists every problem code, each among the answers of some route (not_allowed: any other method on /v1/*)', () => {
    const listed = (doc.components.schemas.ProblemCode.oneOf as Json[]).map((b) => b.const);
    expect([...listed].sort()).toEqual([...PROBLEM_CODES].sort());
    const answered = new Set<string>();
    for (const { op } of operations) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const problem = response.content['application/problem+json']?.schema;
        if (!problem) continue;
        expect(problem.properties.status.const).toBe(Number(status));
        for (const code of problem.properties.code.enum) answered.add(code);
      }
    }
    expect([...answered, 'not_allowed'].sort()).toEqual([...PROBLEM_CODES].sort());
    expect(doc.info.description).toContain('405 not_allowed');
  });

  it('each route reads exactly the headers it documents (recorded from the Headers the app is given)', async () => {
    const paths: Json = { queue: 'oa-headers', id: mintId(), source: 'hook' };
    const bodies: Json = { '*/*': 'x', 'application/json': '{}' };
    for (const { key, method, path, op } of operations) {
      const headers = new Headers({ Authorization: `Bearer ${TOKEN}` });
      const media = op.requestBody && Object.keys(op.requestBody.content)[0];
      const request = new Request(`http://producer${path.replace(/\{(\w+)\}/g, (_, name) => paths[name])}`, {
        method: method.toUpperCase(),
        headers,
        ...(media && { body: bodies[media] }),
      });
      const read = new Set<string>();
      const spy = new Proxy(request.headers, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (prop === 'get' || prop === 'has') {
            return (name: string) => (read.add(name.toLowerCase()), (value as (n: string) => unknown).call(target, name));
          }
          // a read of every header cannot be documented header by header
          if (prop === 'forEach' || prop === 'entries' || prop === 'keys' || prop === 'values' || prop === Symbol.iterator) read.add('<all>');
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      Object.defineProperty(request, 'headers', { value: spy });
      const res = await app.fetch(request);
      expect(res.status, key).not.toBe(404);

      const documented = (op.parameters as Json[])
        .map((p) => doc.components.parameters[p.$ref.split('/').pop()])
        .filter((p) => p.in === 'header')
        .map((p) => p.name.toLowerCase());
      for (const name of documented) expect(read, `${key} reads ${name}`).toContain(name);
      const bearer = (op.security ?? []).some((s: Json) => 'bearer' in s);
      expect(read.has('authorization'), `${key}: Authorization read iff the route is behind the bearer token`).toBe(bearer);
      // the body's own headers, where there is a body; a webhook's, the ones its source names
      const body = op.requestBody ? ['content-length', 'transfer-encoding', 'content-type'] : [];
      const source = path.startsWith('/v1/webhooks') ? [HOOK.signatureHeader, HOOK.idHeader].map((h) => h.toLowerCase()) : [];
      const undocumented = [...read].filter((name) => !documented.includes(name) && name !== 'authorization' && !body.includes(name) && !source.includes(name));
      expect(undocumented, `${key} reads headers its document does not list`).toEqual([]);
    }
  });

  it('is served at GET /openapi.json with no token; under a mount prefix, its servers entry names the prefix', async () => {
    const res = await app.fetch(new Request('http://producer/openapi.json'));
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(doc.servers).toBeUndefined();
    const host = new Hono().route('/api/emq', app);
    const mounted = (await (await host.fetch(new Request('http://producer/api/emq/openapi.json'))).json()) as Json;
    expect(mounted.servers).toEqual([{ url: '/api/emq' }]);
    expect(mounted.paths).toEqual(JSON.parse(JSON.stringify(doc.paths)));
  });

  it('is served by `emq producer` too', { timeout: 30_000 }, async () => {
    const producer = await startProducerProcess({
      VALKEY_URL: inject('servers')[0]!.url,
      EMQ_TOKENS: JSON.stringify([{ token: TOKEN, queues: ['*'], rawPrefixes: true }]),
    });
    try {
      const res = await fetch(`${producer.url}/openapi.json`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).openapi).toBe(doc.openapi);
    } finally {
      await producer.stop();
    }
  });

  it(`${TYPES_FILE} (the types the client is checked against) is current: npm run openapi-types`, () => {
    expect(readFileSync(new URL(`../${TYPES_FILE}`, import.meta.url), 'utf8')).toBe(schemaTypes(doc));
  });
});
