// What nodejs_compat gives the workerd tests at run time and the Workers types lack: the
// Buffer that test/support/consumer.ts (the library consumer model) hands back. Only the
// members the tests use. Checked by test/workers/tsconfig.json only (the root tsconfig has
// @types/node's Buffer, and excludes this file).
declare class Buffer extends Uint8Array {
  static from(bytes: Uint8Array): Buffer;
  toString(encoding?: 'latin1' | 'utf8'): string;
}
