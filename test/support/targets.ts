// The connections the conformance suite runs over: every transport against every server.
import { inject } from 'vitest';
import type { Connection } from '../../shared/connection.js';
import { connectGlide } from '../../shared/connections/glide.js';

export interface Target {
  /** "glide → valkey 8.0.1" */
  name: string;
  /** The server behind it, for looking at the keyspace directly. */
  url: string;
  connect(): Promise<Connection>;
}

export function targets(): Target[] {
  return inject('servers').flatMap((server) => [
    { name: `glide → ${server.name}`, url: server.url, connect: () => connectGlide(server.url) },
  ]);
}
