// What a token may do (issue 25): EMQ_TOKENS' `can` (enqueue, read, control; default enqueue
// and read) and trustedCaller's, checked before a route runs (403 forbidden_action, nothing
// written), over real HTTP against `emq producer` and a real Valkey; the gateway's control
// scope (only a control token runs a control script); npm start's tokens.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPolicy } from '../functions/gateway/policy.js';
import { parseGatewayTokens } from '../functions/gateway/tokens.js';
import { parseCallerTokens, trustedCaller } from '../functions/producer/tokens.js';
import { devConfigFrom } from '../scripts/dev-config.js';
import { allScripts, enqueueScript, jobStateScript } from '../shared/scripts.js';
import { connectAdmin, type Admin } from './support/admin.js';
import { startProducerProcess, type ProducerProcess } from './support/producer.js';

const valkeyUrl = () => inject('servers')[0]!.url;
const ALL = 'capabilities-all-token-0123456789';
const WRITER = 'capabilities-writer-token-012345';
const READER = 'capabilities-reader-token-012345';
const SECRET = 'capabilities-secret-token-0123456789';

describe("EMQ_TOKENS' can", () => {
  const callerOf = (can: unknown) =>
    parseCallerTokens(JSON.stringify([{ token: SECRET, queues: ['q'], ...(can === undefined ? {} : { can }) }])).callerOf(SECRET)!;

  it('defaults to enqueue and read; a list grants exactly what it names', () => {
    const plain = callerOf(undefined);
    expect([plain.can!('enqueue'), plain.can!('read'), plain.can!('control')]).toEqual([true, true, false]);
    const control = callerOf(['control']);
    expect([control.can!('enqueue'), control.can!('read'), control.can!('control')]).toEqual([false, false, true]);
  });

  it.each([
    [[], 'EMQ_TOKENS[0].can must be a non-empty array of enqueue, read, control'],
    ['control', 'EMQ_TOKENS[0].can must be a non-empty array of enqueue, read, control'],
    [['read', 'Control'], 'EMQ_TOKENS[0].can[1] must be one of enqueue, read, control'],
    [['enqueue', 'ﬀ'], 'EMQ_TOKENS[0].can[1] must be one of enqueue, read, control'],
  ])('refuses %j at start, naming the entry, never the token', (can, message) => {
    expect(() => callerOf(can)).toThrow(message);
    try {
      callerOf(can);
    } catch (err) {
      expect((err as Error).message).not.toContain(SECRET);
    }
  });

  it('trustedCaller takes can as EMQ_TOKENS does, and refuses a bad one with a TypeError', () => {
    const reader = trustedCaller({ queues: ['q'], scope: 's', can: ['read'] });
    expect([reader.can!('enqueue'), reader.can!('read')]).toEqual([false, true]);
    expect(trustedCaller({ tenant: 't', queues: ['*'], scope: 's' }).can!('control')).toBe(false);
    expect(() => trustedCaller({ queues: ['q'], scope: 's', can: ['write' as 'read'] })).toThrow(TypeError);
  });
});

describe('the gateway keeps least privilege: only a control token runs a control script', () => {
  // any script serves as a stand-in control script: the policy is given the list
  const policy = createPolicy(allScripts, [jobStateScript]);
  const evalsha = (sha: string) => ['EVALSHA', sha, '5', 'a', 'b', 'c', 'd', 'e', 'JOB00000000000'];

  it('a producer token may not run a control script, by SHA-1 or by text; a control token may, and everything a producer may', () => {
    expect(policy.refusal('producer', evalsha(jobStateScript.sha1))).toEqual([
      403,
      'a producer token may not run lua/job-state.lua, a control script: the producer needs a control token',
    ]);
    expect(policy.refusal('producer', ['EVAL', jobStateScript.text, '5', 'a', 'b', 'c', 'd', 'e', 'JOB00000000000'])?.[0]).toBe(403);
    expect(policy.refusal('control', evalsha(jobStateScript.sha1))).toBeUndefined();
    expect(policy.refusal('producer', ['EVALSHA', enqueueScript.sha1, '2', 'a', 'b', 'JOB00000000000', 'x'])).toBeUndefined();
    expect(policy.refusal('control', ['EVALSHA', enqueueScript.sha1, '2', 'a', 'b', 'JOB00000000000', 'x'])).toBeUndefined();
    expect(policy.refusal('control', ['GET', 'k'])?.[0]).toBe(403);
    expect(policy.refusal('control', ['PING'])).toBeUndefined();
  });

  it('EMQ_GATEWAY_TOKENS takes control:<token>; another scope is refused by position', () => {
    const tokens = parseGatewayTokens(`producer:${'p'.repeat(16)},control:${'c'.repeat(16)}`);
    expect([tokens.scopeOf('p'.repeat(16)), tokens.scopeOf('c'.repeat(16))]).toEqual(['producer', 'control']);
    expect(() => parseGatewayTokens(`operator:${SECRET}`)).toThrow('EMQ_GATEWAY_TOKENS entry 1 must be admin:<token>, producer:<token> or control:<token>');
  });
});

describe("npm start's tokens", () => {
  it('the dev token may do everything, its gateway token is a control token, and EMQ_TOKENS given join it', () => {
    const given = [{ token: READER, queues: ['*'], rawPrefixes: true, can: ['read'] }];
    const config = devConfigFrom({ EMQ_DEV_TOKEN: ALL, EMQ_TOKENS: JSON.stringify(given) });
    expect(config.gatewayEnv.EMQ_GATEWAY_TOKENS).toBe(`control:${config.gatewayToken}`);
    const tokens = parseCallerTokens(config.workerVars('http://127.0.0.1:1').EMQ_TOKENS);
    expect(['enqueue', 'read', 'control'].map((c) => tokens.callerOf(ALL)!.can!(c as 'read'))).toEqual([true, true, true]);
    expect(['enqueue', 'read', 'control'].map((c) => tokens.callerOf(READER)!.can!(c as 'read'))).toEqual([false, true, false]);
  });

  it('a bad EMQ_TOKENS stops it, naming the variable', () => {
    expect(() => devConfigFrom({ EMQ_TOKENS: JSON.stringify([{ token: READER, queues: ['*'], rawPrefixes: true, can: ['all'] }]) })).toThrow(
      'EMQ_TOKENS[0].can[0] must be one of enqueue, read, control',
    );
  });
});

describe('emq producer enforces can before a route runs: 403 forbidden_action, nothing written', () => {
  let producer: ProducerProcess;
  let admin: Admin;
  const queue = `caps-${Date.now().toString(36)}`;
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    admin = await connectAdmin(valkeyUrl());
    producer = await startProducerProcess({
      VALKEY_URL: valkeyUrl(),
      EMQ_TOKENS: JSON.stringify([
        { token: WRITER, queues: [queue], can: ['enqueue'] },
        { token: READER, queues: [queue], can: ['read'] },
      ]),
    });
  });
  afterAll(async () => {
    await producer?.stop();
    admin?.close();
  });

  it('a token that may only read cannot enqueue, batch or start a flow; one that may only enqueue cannot read', async () => {
    for (const [path, body] of [
      ['jobs', 'x'],
      ['batch', '[{"payload":"x"}]'],
      ['flows', '{"parent":{"payload":"p"},"children":[{"payload":"c"}]}'],
    ] as const) {
      const res = await fetch(`${producer.url}/v1/queues/${queue}/${path}`, { method: 'POST', body, headers: auth(READER) });
      expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 403, body: { code: 'forbidden_action' } });
    }
    expect(await admin.footprint(queue)).toEqual({});
    const posted = await fetch(`${producer.url}/v1/queues/${queue}/jobs`, { method: 'POST', body: 'x', headers: auth(WRITER) });
    expect(posted.status).toBe(201);
    const { id } = (await posted.json()) as { id: string };
    const denied = await fetch(`${producer.url}/v1/queues/${queue}/jobs/${id}`, { headers: auth(WRITER) });
    expect({ status: denied.status, code: ((await denied.json()) as { code: string }).code }).toEqual({ status: 403, code: 'forbidden_action' });
    const read = await fetch(`${producer.url}/v1/queues/${queue}/jobs/${id}`, { headers: auth(READER) });
    expect({ status: read.status, state: ((await read.json()) as { state: string }).state }).toEqual({ status: 200, state: 'pending' });
  });
});
