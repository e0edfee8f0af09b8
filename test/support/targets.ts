// The connections the conformance suite runs over: every transport against every server.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Connection } from '../../shared/connection.js';
import { connectGlide } from '../../shared/connections/glide.js';
import { connectRest } from '../../shared/connections/rest.js';
import { connectAdmin, type Admin } from './admin.js';
import { startGatewayProcess } from './gateway.js';

export interface Target {
  /** "glide → valkey 8.0.1" */
  name: string;
  /** The server behind it, for looking at the keyspace directly. */
  url: string;
  /** A connection; closing it also stops whatever was started for it (a gateway). */
  connect(): Promise<Connection>;
}

/**
 * The REST connection through a real gateway process, with a producer token, or a control
 * token (`control`: the control scripts' tests). The suite sends a 5 MiB payload through every
 * transport: a producer token's body cap (2 MiB by default, sized for the producer app's 1 MiB
 * payloads) is raised to the gateway's overall 8 MiB.
 */
async function viaGateway(valkeyUrl: string, scope: 'producer' | 'control' = 'producer'): Promise<Connection> {
  const control = scope === 'control' ? `ctl-${randomBytes(16).toString('hex')}` : undefined;
  const gateway = await startGatewayProcess(valkeyUrl, {
    EMQ_GATEWAY_PRODUCER_MAX_BODY: String(8 * 1024 * 1024),
    ...(control === undefined ? {} : { EMQ_GATEWAY_TOKENS: `control:${control}` }),
  });
  const rest = connectRest({ url: gateway.url, token: control ?? gateway.producer });
  return {
    run: (c) => rest.run(c),
    pipeline: (c) => rest.pipeline(c),
    scan: (cursor, match, count) => rest.scan(cursor, match, count),
    async close() {
      await rest.close();
      const code = await gateway.stop();
      if (code !== 0) throw new Error(`gateway exited with ${code}: ${gateway.stderr()}`);
    },
  };
}

export function targets(): Target[] {
  return inject('servers').flatMap((server) => [
    { name: `glide → ${server.name}`, url: server.url, connect: () => connectGlide(server.url) },
    { name: `rest → gateway → ${server.name}`, url: server.url, connect: () => viaGateway(server.url) },
  ]);
}

/** Each server over glide, and over REST through a gateway with a control token: what a control script's caller may use. */
export function controlTargets(): Target[] {
  return inject('servers').flatMap((server) => [
    { name: `glide → ${server.name}`, url: server.url, connect: () => connectGlide(server.url) },
    { name: `rest (control token) → gateway → ${server.name}`, url: server.url, connect: () => viaGateway(server.url, 'control') },
  ]);
}

/** The glide connection to each server (the control scripts' tests: the gateway's control scope is tested with its routes). */
export function glideTargets(): Target[] {
  return targets().filter((t) => t.name.startsWith('glide'));
}

/**
 * For one describe block: opens the target's connection and an admin client before its tests
 * and closes both after them. Read `conn` and `admin` inside tests (they are set by then).
 */
export function connectedTo(target: Target): { readonly conn: Connection; readonly admin: Admin } {
  const held = {} as { conn: Connection; admin: Admin };
  beforeAll(async () => {
    held.conn = await target.connect();
    held.admin = await connectAdmin(target.url);
  });
  afterAll(async () => {
    await held.conn?.close();
    held.admin?.close();
  });
  return held;
}
