// The keyspace and enqueue package: runtime-agnostic (no Node built-ins, no Workers APIs).
export type { Arg, Connection, Outcome, Reply, ScriptCommand } from './connection.js';
export { enqueue, enqueueMany, BatchError } from './enqueue.js';
export type { Job, JobResult, Payload, Verdict } from './enqueue.js';
export * from './errors.js';
export { createMinter, decodeId, mintId } from './ids.js';
export type { DecodedId, Minter, MinterOptions } from './ids.js';
export { ID_ALPHABET, ID_LENGTH, QUEUE_MAX_LENGTH, enqueueKeys, jobKey, markerKey, pendingKey, sha256Hex, validateId, validateQueue } from './keyspace.js';
export { enqueueOnce } from './enqueue-once.js';
export type { OnceOptions } from './enqueue-once.js';
export { jobState } from './job-state.js';
export type { JobState } from './job-state.js';
export { allScripts, enqueueOnceScript, enqueueScript, jobStateScript } from './scripts.js';
export type { Script } from './scripts.js';
