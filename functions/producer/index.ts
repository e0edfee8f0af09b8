// The producer app as a library (the package's `echomq-edge/producer`): a Hono app to serve
// as it is, or to mount under your own routes, with your own auth in front through `caller`.
// Runtime-agnostic like the Worker it is.
export { createProducerApp, type ProducerOptions } from './hono-app.js';
export { configFrom, type Config, type ConfigOptions, type Vars } from './config.js';
export { parseCallerTokens, trustedCaller, type Caller, type CallerTokens, type Capability, type PatternQueues, type TenantQueues } from './tokens.js';
