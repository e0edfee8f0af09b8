// The package on Node (its "node" export condition): the same as index.ts, but the REST
// connection sends through undici (connections/rest-node.ts), not fetch.
export * from './index.js';
export { NodeRestConnection as RestConnection, connectNodeRest as connectRest } from './connections/rest-node.js';
